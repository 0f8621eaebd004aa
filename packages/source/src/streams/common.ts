/** Pieces every stream definition shares: decoding its state, record metadata, part keys. */
import { ParseIssue } from "@salesintel/core"
import { Effect, Schema } from "effect"
import { StateError } from "../StateError.ts"

/**
 * Decodes a stream's saved state; no state at all is the schema's empty value. Unknown keys are
 * refused: a misspelled key read as "nothing bought yet" would buy everything again.
 */
export const decodeState = <A, I>(stream: string, schema: Schema.Schema<A, I>, state: unknown) =>
  Schema.decodeUnknown(schema, { onExcessProperty: "error" })(state ?? {}).pipe(
    Effect.mapError((error) => {
      const issue = ParseIssue.fromParseError(error)
      return new StateError({ stream, path: issue.path, description: issue.description })
    }),
  )

/** JSON with object keys sorted: the same filters always give the same text. */
export const canonicalJson = (value: unknown): string =>
  JSON.stringify(value, (_, inner: unknown) =>
    inner !== null && typeof inner === "object" && !Array.isArray(inner)
      ? Object.fromEntries(
          Object.entries(inner as Record<string, unknown>).sort(([a], [b]) => a.localeCompare(b)),
        )
      : inner,
  )
