/**
 * Protocol messages as JSON lines, in and out. In: the input is pulled in blocks (with
 * backpressure, so memory stays flat whatever its size), lines are cut on the bytes, RECORDs take
 * the fast path of RecordLine.ts and every other message its Schema; message types a reader does
 * not act on (SPEC, CATALOG, ...) are skipped, as Airbyte destinations do. Out: one line per
 * message, a chunk of lines per write, waiting for a full pipe to drain.
 */
import { createReadStream } from "node:fs"
import type { Readable, Writable } from "node:stream"
import { ParseIssue } from "@salesintel/core"
import * as Chunk from "effect/Chunk"
import * as Data from "effect/Data"
import * as Effect from "effect/Effect"
import * as Either from "effect/Either"
import type * as ParseResult from "effect/ParseResult"
import * as Schema from "effect/Schema"
import * as Stream from "effect/Stream"
import * as Message from "./Message.ts"
import * as RecordLine from "./RecordLine.ts"

/**
 * A line that is not a protocol message this reader understands. `position` is the 1-based index
 * of the line in the input.
 */
export class InvalidMessage extends Data.TaggedError("InvalidMessage")<{
  readonly position: number
  readonly reason: string
  /** The line does not parse as JSON at all (rather than being JSON that is not a message). */
  readonly notJson?: boolean
}> {
  override get message(): string {
    return `message ${this.position}: ${this.reason}`
  }
}

/** The message types a reader acts on; the others are skipped. */
export type Incoming =
  | Message.RecordMessage
  | Message.StateMessage
  | Message.LogMessage
  | Message.TraceErrorMessage
  | Message.StreamStatusMessage
  | Message.EstimateMessage

type Decoder = (input: unknown) => Either.Either<Incoming, ParseResult.ParseError>

const decoders: Readonly<Record<string, Decoder>> = {
  RECORD: Schema.decodeUnknownEither(Message.RecordMessage),
  STATE: Schema.decodeUnknownEither(Message.StateMessage),
  LOG: Schema.decodeUnknownEither(Message.LogMessage),
  TRACE: Schema.decodeUnknownEither(Message.schemas.TRACE),
}

/**
 * One line as a message: `undefined` for a blank line or a type the reader skips, an
 * InvalidMessage for anything that is not JSON or not a well-formed message.
 */
export const parseLine = (
  line: string,
  position: number,
): Either.Either<Incoming | undefined, InvalidMessage> => {
  if (line.length === 0 || (line.charCodeAt(0) <= 32 && line.trim() === "")) return Either.right(undefined)
  let json: unknown
  try {
    json = JSON.parse(line)
  } catch (error) {
    return Either.left(
      new InvalidMessage({
        position,
        reason: `not JSON (${error instanceof Error ? error.message : error})`,
        notJson: true,
      }),
    )
  }
  const record = RecordLine.read(json, line)
  if (record !== undefined) return Either.right(record)
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
 * A block's lines; `unterminated`: its one line is the input's last and has no newline (a writer
 * stopped in the middle of it, or one that does not end its last line).
 */
interface Lines {
  readonly lines: ReadonlyArray<string>
  readonly unterminated: boolean
}

/**
 * The input's lines, one array per block read (a line may span blocks). Lines are cut on the
 * bytes and each decoded alone: one newline byte never sits inside a multi-byte UTF-8 character,
 * and decoding a whole block into one string to split it costs twice as much (measured).
 */
async function* blocksOfLines(input: AsyncIterable<Uint8Array | string>): AsyncGenerator<Lines> {
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
    yield { lines, unterminated: false }
  }
  if (rest !== undefined) yield { lines: [withoutMark(rest.toString("utf8"))], unterminated: true }
}

/** What a reader is told of the input beyond its messages. */
export interface ReadOptions {
  /**
   * The input ended in the middle of a line that is not JSON (its writer stopped while writing it:
   * a source killed mid-write): that line, at `position`, is not a message, and the input ends
   * before it instead of failing on it. Without this, such a line fails the input as not JSON.
   */
  readonly onCutOff?: (position: number) => Effect.Effect<void>
}

/**
 * The messages of a JSON-lines input, read as it arrives: the input is pulled in blocks (with
 * backpressure, so memory stays flat whatever its size), each block's lines parsed together.
 */
export const fromReadable = (
  input: Readable,
  options: ReadOptions = {},
): Stream.Stream<Incoming, InvalidMessage> =>
  Stream.suspend(() => {
    let position = 0
    return Stream.fromAsyncIterable(
      blocksOfLines(input),
      (error) => new InvalidMessage({ position, reason: `cannot read the input: ${String(error)}` }),
    ).pipe(
      // A bad line fails the input only after the messages before it in its block: a reader
      // commits what came before (a complete STATE and its records) before it stops.
      Stream.flatMap(({ lines, unterminated }) => {
        const messages: Array<Incoming> = []
        for (const line of lines) {
          position++
          const parsed = parseLine(line.endsWith("\r") ? line.slice(0, -1) : line, position)
          if (Either.isLeft(parsed) && unterminated && options.onCutOff !== undefined && parsed.left.notJson)
            return Stream.drain(Stream.fromEffect(options.onCutOff(position)))
          if (Either.isLeft(parsed))
            return Stream.concat(Stream.fromChunk(Chunk.unsafeFromArray(messages)), Stream.fail(parsed.left))
          if (parsed.right !== undefined) messages.push(parsed.right)
        }
        return Stream.fromChunk(Chunk.unsafeFromArray(messages))
      }),
    )
  })

/** The messages of a JSON-lines file. */
export const fromFile = (path: string): Stream.Stream<Incoming, InvalidMessage> =>
  Stream.suspend(() => fromReadable(createReadStream(path, { highWaterMark: 256 * 1024 })))

/** One message as one line, with its newline. */
export const serialize = (message: Message.Message): string =>
  `${message.type === "RECORD" ? RecordLine.write(message) : JSON.stringify(message)}\n`

const writeText = (output: Writable, text: string): Effect.Effect<void> =>
  Effect.async<void>((resume) => {
    if (output.write(text)) resume(Effect.void)
    else output.once("drain", () => resume(Effect.void))
  })

/**
 * Writes every message to `output`, one JSON line each, a chunk of lines per write, waiting for
 * the pipe to drain when it is full: a slow reader (the loader, Airbyte) slows the writer down
 * instead of the writer buffering without bound. Succeeds with whether a TRACE error was written.
 */
export const write = <E, R>(
  messages: Stream.Stream<Message.Message, E, R>,
  output: Writable,
): Effect.Effect<boolean, E, R> =>
  messages.pipe(
    Stream.mapChunks((chunk) => {
      let text = ""
      let failed = false
      for (const message of chunk) {
        if (message.type === "TRACE" && message.trace.type === "ERROR") failed = true
        text += serialize(message)
      }
      return Chunk.of({ text, failed })
    }),
    Stream.runFoldEffect(false, (failed, written) =>
      Effect.as(writeText(output, written.text), failed || written.failed),
    ),
  )
