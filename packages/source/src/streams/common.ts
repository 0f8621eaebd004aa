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

/**
 * When to write a checkpoint whose size grows with the data (the set of ids bought): after every
 * page while it is small, then whenever the records since the last one reach 1/`ratio` of it.
 * The bytes of state written stay proportional to the records emitted (instead of growing with
 * their square), and a run killed without warning re-buys at most 1/`ratio` of what it holds.
 */
export const amortizedCheckpoints = (stateEntries: () => number, ratio = 50) => {
  let recordsSince = 0
  return {
    /** Counts `records` just emitted; true when a checkpoint is due now. */
    due(records: number): boolean {
      recordsSince += records
      if (recordsSince < Math.max(1, Math.floor(stateEntries() / ratio))) return false
      recordsSince = 0
      return true
    },
    /** A checkpoint was written for another reason. */
    written(): void {
      recordsSince = 0
    },
  }
}
