/**
 * The --state file of a read: what the last run's STATE messages said. Accepts the per-stream form
 * Airbyte sends today (an array of STREAM state messages, or of their `state` parts) and the
 * legacy form (one object keyed by stream name).
 */
import { Either, Schema } from "effect"

const StreamState = Schema.Struct({
  type: Schema.optional(Schema.Literal("STREAM")),
  stream: Schema.Struct({
    stream_descriptor: Schema.Struct({
      name: Schema.String,
      namespace: Schema.optional(Schema.NullOr(Schema.String)),
    }),
    stream_state: Schema.optional(Schema.Unknown),
  }),
})

const Entry = Schema.Union(
  StreamState,
  Schema.Struct({ type: Schema.Literal("STATE"), state: StreamState }).pipe(
    Schema.transform(StreamState, {
      strict: true,
      decode: (message) => message.state,
      encode: (state) => ({ type: "STATE" as const, state }),
    }),
  ),
)

/** Stream name to that stream's saved state. */
export type InputState = ReadonlyMap<string, unknown>

export const decode = (input: unknown): Either.Either<InputState, string> => {
  if (input === undefined || input === null) return Either.right(new Map())
  if (Array.isArray(input)) {
    return Schema.decodeUnknownEither(Schema.Array(Entry))(input).pipe(
      Either.mapLeft((error) => `invalid state file: ${error.message.split("\n")[0]}`),
      Either.map(
        (entries) =>
          new Map(entries.map((entry) => [entry.stream.stream_descriptor.name, entry.stream.stream_state])),
      ),
    )
  }
  if (typeof input === "object")
    return Either.right(new Map(Object.entries(input as Record<string, unknown>)))
  return Either.left("invalid state file: expected a JSON array of per-stream states (or a legacy object)")
}
