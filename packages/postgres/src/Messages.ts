/**
 * Protocol messages from JSON lines (the bin's stdin). The envelope is decoded with Schema; the
 * record data is left to its stream's mapping (Mapping.ts). Message types a destination does not
 * act on (SPEC, CATALOG, ...) are skipped, as Airbyte destinations do.
 */
import { createReadStream } from "node:fs"
import type { Readable } from "node:stream"
import { ParseIssue } from "@salesintel/core"
import type { Protocol } from "@salesintel/source"
import { Chunk, Effect, Either, type ParseResult, Schema, Stream } from "effect"
import { InvalidMessage } from "./LoadError.ts"
import * as RawJson from "./RawJson.ts"

const RecordMessage = Schema.Struct({
  type: Schema.Literal("RECORD"),
  record: Schema.Struct({
    stream: Schema.String,
    // Only "an object" here: the stream's own schema decodes the data (Mapping.ts), and checking
    // every key twice would cost a fifth of the load's CPU.
    data: Schema.declare(
      (input: unknown): input is Readonly<Record<string, unknown>> =>
        typeof input === "object" && input !== null && !Array.isArray(input),
      { identifier: "RecordData", description: "a JSON object" },
    ),
    emitted_at: Schema.Number,
  }),
})

const StateMessage = Schema.Struct({
  type: Schema.Literal("STATE"),
  state: Schema.Struct({
    type: Schema.Literal("STREAM"),
    stream: Schema.Struct({
      stream_descriptor: Schema.Struct({ name: Schema.String }),
      stream_state: Schema.Unknown,
    }),
    sourceStats: Schema.optionalWith(Schema.Struct({ recordCount: Schema.Number }), {
      default: () => ({ recordCount: 0 }),
    }),
  }),
})

const LogMessage = Schema.Struct({
  type: Schema.Literal("LOG"),
  log: Schema.Struct({
    level: Schema.Literal("FATAL", "ERROR", "WARN", "INFO", "DEBUG", "TRACE"),
    message: Schema.String,
  }),
})

const TraceMessage = Schema.Struct({
  type: Schema.Literal("TRACE"),
  trace: Schema.Struct({
    type: Schema.Literal("ERROR"),
    emitted_at: Schema.Number,
    error: Schema.Struct({
      message: Schema.String,
      internal_message: Schema.optional(Schema.String),
      stack_trace: Schema.optional(Schema.String),
      failure_type: Schema.Literal("system_error", "config_error", "transient_error"),
      stream_descriptor: Schema.optional(Schema.Struct({ name: Schema.String })),
    }),
  }),
})

const isObject = (value: unknown): value is Readonly<Record<string, unknown>> =>
  typeof value === "object" && value !== null && !Array.isArray(value)

/**
 * The RECORD envelope in its expected shape, checked by hand (the same checks as RecordMessage,
 * without the Schema's cost); `undefined` for anything else, which the Schema then decodes.
 */
const fastRecord = (json: unknown): Protocol.RecordMessage | undefined => {
  if (!isObject(json) || json.type !== "RECORD") return undefined
  const record = json.record
  if (!isObject(record)) return undefined
  const { stream, data, emitted_at } = record
  if (typeof stream !== "string" || !isObject(data) || typeof emitted_at !== "number") return undefined
  return { type: "RECORD", record: { stream, data, emitted_at } }
}

type Decoder = (input: unknown) => Either.Either<Protocol.Message, ParseResult.ParseError>

const decoders: Readonly<Record<string, Decoder>> = {
  RECORD: Schema.decodeUnknownEither(RecordMessage),
  STATE: Schema.decodeUnknownEither(StateMessage),
  LOG: Schema.decodeUnknownEither(LogMessage),
  TRACE: Schema.decodeUnknownEither(TraceMessage),
}

/**
 * One line as a message: `undefined` for a blank line or a type the loader ignores, an
 * InvalidMessage for anything that is not JSON or not a well-formed message.
 */
export const parseLine = (
  line: string,
  position: number,
): Either.Either<Protocol.Message | undefined, InvalidMessage> => {
  if (line.length === 0 || (line.charCodeAt(0) <= 32 && line.trim() === "")) return Either.right(undefined)
  let json: unknown
  try {
    json = JSON.parse(line)
  } catch (error) {
    return Either.left(
      new InvalidMessage({
        position,
        reason: `not JSON (${error instanceof Error ? error.message : error})`,
      }),
    )
  }
  const record = fastRecord(json)
  if (record !== undefined) {
    RawJson.remember(line, record.record.stream, record.record.data, record.record.emitted_at)
    return Either.right(record)
  }
  const type = typeof json === "object" && json !== null && "type" in json ? json.type : undefined
  if (typeof type !== "string")
    return Either.left(new InvalidMessage({ position, reason: "not a protocol message (no type)" }))
  if (type === "STATE") {
    const stateType =
      typeof json === "object" && json !== null && "state" in json && typeof json.state === "object"
        ? (json.state as { type?: unknown } | null)?.type
        : undefined
    if (stateType !== "STREAM")
      return Either.left(
        new InvalidMessage({
          position,
          reason: `only per-stream STATE messages are supported (state.type ${JSON.stringify(stateType)})`,
        }),
      )
  }
  const decode = decoders[type]
  if (decode === undefined) return Either.right(undefined)
  return Either.mapLeft(decode(json), (error) => {
    const issue = ParseIssue.fromParseError(error)
    return new InvalidMessage({
      position,
      reason: `invalid ${type} message at ${issue.path}: ${issue.description}`,
    })
  })
}

const newline = 10

/**
 * The input's lines, one array per block read (a line may span blocks). Lines are cut on the
 * bytes and each decoded alone: one newline byte never sits inside a multi-byte UTF-8 character,
 * and decoding a whole block into one string to split it costs twice as much (measured).
 */
async function* blocksOfLines(
  input: AsyncIterable<Uint8Array | string>,
): AsyncGenerator<ReadonlyArray<string>> {
  let rest: Buffer | undefined
  let first = true
  // A byte order mark opening the input is not part of the first line (TextDecoder drops it too).
  const withoutMark = (line: string): string => {
    if (!first) return line
    first = false
    return line.charCodeAt(0) === 0xfeff ? line.slice(1) : line
  }
  for await (const chunk of input) {
    const bytes = typeof chunk === "string" ? Buffer.from(chunk, "utf8") : chunk
    const block =
      rest === undefined
        ? Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength)
        : Buffer.concat([rest, bytes])
    const lines: Array<string> = []
    let start = 0
    for (let end = block.indexOf(newline, start); end !== -1; end = block.indexOf(newline, start)) {
      lines.push(withoutMark(block.toString("utf8", start, end)))
      start = end + 1
    }
    // Copied, so that the rest does not keep the whole block alive.
    rest = start < block.length ? Buffer.from(block.subarray(start)) : undefined
    yield lines
  }
  if (rest !== undefined) yield [withoutMark(rest.toString("utf8"))]
}

/**
 * The messages of a JSON-lines input, read as it arrives: the input is pulled in blocks (with
 * backpressure, so memory stays flat whatever its size), each block's lines parsed together.
 */
export const fromReadable = (input: Readable): Stream.Stream<Protocol.Message, InvalidMessage> =>
  Stream.suspend(() => {
    let position = 0
    return Stream.fromAsyncIterable(
      blocksOfLines(input),
      (error) => new InvalidMessage({ position, reason: `cannot read the input: ${String(error)}` }),
    ).pipe(
      Stream.mapEffect((lines) => {
        const messages: Array<Protocol.Message> = []
        for (const line of lines) {
          position++
          const parsed = parseLine(line.endsWith("\r") ? line.slice(0, -1) : line, position)
          if (Either.isLeft(parsed)) return Effect.fail(parsed.left)
          if (parsed.right !== undefined) messages.push(parsed.right)
        }
        return Effect.succeed(Chunk.unsafeFromArray(messages))
      }),
      Stream.flattenChunks,
    )
  })

/** The messages of a JSON-lines file. */
export const fromFile = (path: string): Stream.Stream<Protocol.Message, InvalidMessage> =>
  Stream.suspend(() => fromReadable(createReadStream(path, { highWaterMark: 256 * 1024 })))
