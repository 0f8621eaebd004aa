/**
 * The state a read starts from: what the last run's STATE messages said, per stream. Accepts the
 * per-stream form Airbyte sends today (an array of STREAM states, or of whole STATE messages) and
 * the legacy form (one object keyed by stream name). The loader keeps the same envelope in its
 * `_state` table and gives it back in the first form.
 */
import { ParseIssue } from "@salesintel/core"
import * as Either from "effect/Either"
import * as Schema from "effect/Schema"
import { type JsonObject, StreamState } from "./Message.ts"
import { didYouMean, isStreamName, names } from "./Streams.ts"

/** One entry of the per-stream form: the state part of a STATE message, or the whole message. */
const StreamEntry = Schema.Struct({ type: Schema.optional(Schema.Literal("STREAM")), stream: StreamState })
const MessageEntry = Schema.Struct({ type: Schema.Literal("STATE"), state: StreamEntry })

/** Decoded by the form its `type` names, so that an error's path points into that form. */
const decodeEntry = (entry: unknown, index: number): Either.Either<StreamState, string> => {
  const isMessage =
    typeof entry === "object" && entry !== null && (entry as { type?: unknown }).type === "STATE"
  const decoded = isMessage
    ? Either.map(Schema.decodeUnknownEither(MessageEntry)(entry), (message) => message.state.stream)
    : Either.map(Schema.decodeUnknownEither(StreamEntry)(entry), (state) => state.stream)
  return Either.mapLeft(decoded, (error) => {
    const issue = ParseIssue.fromParseError(error, [index])
    return `invalid state file at ${issue.path}: ${issue.description}`
  })
}

/** Where an entry's stream name sits: inside `state` for a whole STATE message. */
const pathOf = (entry: unknown, index: number): string =>
  typeof entry === "object" && entry !== null && (entry as { type?: unknown }).type === "STATE"
    ? `[${index}].state.stream.stream_descriptor.name`
    : `[${index}].stream.stream_descriptor.name`

/** The per-stream form of a saved state, as `_state` gives it back and a read takes it. */
export interface SavedStreamState {
  readonly type: "STREAM"
  readonly stream: StreamState
}

export const saved = (stream: string, state: JsonObject): SavedStreamState => ({
  type: "STREAM",
  stream: { stream_descriptor: { name: stream }, stream_state: state },
})

/** Stream name to that stream's saved state. */
export type InputState = ReadonlyMap<string, unknown>

export const decode = (input: unknown): Either.Either<InputState, string> => {
  if (input === undefined || input === null) return Either.right(new Map())
  if (Array.isArray(input)) {
    return Either.flatMap(Either.all(input.map(decodeEntry)), (states) => {
      // A state for a stream the registry does not have is a wrong file, as in the legacy form.
      const index = states.findIndex((state) => !isStreamName(state.stream_descriptor.name))
      const unknown = states[index]
      if (unknown !== undefined)
        return Either.left(
          `invalid state file at ${pathOf(input[index], index)}: ${JSON.stringify(unknown.stream_descriptor.name)} is not a stream (${didYouMean([unknown.stream_descriptor.name]) ?? `expected one of ${names.join(", ")}`})`,
        )
      // Two states for one stream: which one the last run meant cannot be told, so neither is used.
      const first = new Map<string, number>()
      for (const [at, state] of states.entries()) {
        const earlier = first.get(state.stream_descriptor.name)
        if (earlier !== undefined)
          return Either.left(
            `invalid state file at ${pathOf(input[at], at)}: a second state for stream ${state.stream_descriptor.name} (the first is at [${earlier}]); keep one state per stream`,
          )
        first.set(state.stream_descriptor.name, at)
      }
      return Either.right(new Map(states.map((state) => [state.stream_descriptor.name, state.stream_state])))
    })
  }
  if (typeof input === "object") {
    // The legacy form is keyed by stream name: a key that names no stream is a wrong file (or a
    // typo), and reading it as "no state" would buy every contact again.
    const unknown = Object.keys(input).find((name) => !isStreamName(name))
    if (unknown !== undefined)
      return Either.left(
        `invalid state file: ${JSON.stringify(unknown)} is not a stream (${didYouMean([unknown]) ?? `expected one of ${names.join(", ")}, or a JSON array of per-stream states`})`,
      )
    // A stream whose state is null here is not "no state": that would buy everything again.
    const nulled = Object.entries(input).find(([, value]) => value === null)
    if (nulled !== undefined)
      return Either.left(
        `invalid state file at ${nulled[0]}: expected the stream's state (a JSON object), actual null; remove the key to start that stream afresh`,
      )
    return Either.right(new Map(Object.entries(input)))
  }
  return Either.left("invalid state file: expected a JSON array of per-stream states (or a legacy object)")
}
