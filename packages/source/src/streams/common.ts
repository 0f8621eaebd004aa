/** What every stream definition shares: decoding its saved state. */
import { ParseIssue } from "@salesintel/core"
import * as Effect from "effect/Effect"
import * as Schema from "effect/Schema"
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
