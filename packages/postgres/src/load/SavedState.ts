/**
 * `_state`: each stream's latest committed state, and reading it back in the form the source's
 * --state takes (an array of per-stream states, StreamState.SavedStreamState).
 */
import { Message, StreamState } from "@salesintel/airbyte"
import * as Data from "effect/Data"
import * as Effect from "effect/Effect"
import * as Either from "effect/Either"
import * as Schema from "effect/Schema"
import { Database, type DatabaseError } from "../database/Database.ts"
import { qualified } from "../database/Sql.ts"
import { stateTable } from "../schema/Bookkeeping.ts"
import { jsonText } from "../schema/Nul.ts"

/**
 * Upserts a stream's state; the loader calls it inside the transaction that holds its data.
 * `asOf` is when the input the STATE came in was made (epoch milliseconds; undefined when the
 * input said no time before it). A state from an input older than the one that wrote the state
 * held is not applied: an old file loaded again would otherwise take the state back to what it
 * said then (the companies' domains bought on its days: bought again as due). Its records are
 * loaded, and what they add the tables hold (newer wins, Merge.ts), which the bought sets are
 * mended from. An untimed state replaces any (a hand-made input, as before times were kept).
 */
export const write = (
  schema: string,
  stream: string,
  state: unknown,
  asOf?: number,
): Effect.Effect<void, DatabaseError, Database> =>
  Effect.flatMap(Database, (db) =>
    db.query(
      `INSERT INTO ${qualified(schema, stateTable.name)} AS s (stream, state, updated_at, as_of)
       VALUES ($1, $2::text::jsonb, now(), $3::timestamptz)
       ON CONFLICT (stream) DO UPDATE SET state = EXCLUDED.state, updated_at = EXCLUDED.updated_at, as_of = EXCLUDED.as_of
       WHERE s.state IS NULL OR s.as_of IS NULL OR EXCLUDED.as_of IS NULL OR EXCLUDED.as_of >= s.as_of`,
      [stream, jsonText(state), isoTime(asOf)],
    ),
  )

/** Epoch milliseconds as an ISO timestamp; null when absent or out of a timestamp's range. */
const isoTime = (millis: number | undefined): string | null => {
  if (millis === undefined || !Number.isFinite(millis)) return null
  const date = new Date(millis)
  return Number.isNaN(date.getTime()) ? null : date.toISOString()
}

/**
 * A saved state that is not a JSON object (edited by hand? SQL NULL?): refused, never read as no
 * state, which would buy every record of the stream again.
 */
export class InvalidSavedState extends Data.TaggedError("InvalidSavedState")<{
  readonly schema: string
  readonly stream: string
  /** What the row holds instead, in a few words. */
  readonly actual: string
}> {
  override get message(): string {
    return `the saved state of stream ${this.stream} in ${this.schema}._state is not a JSON object (it holds ${this.actual}); fix that row, or delete it (or pass --reset-state ${this.stream}) to start the stream afresh`
  }
}

const describeValue = (value: unknown): string =>
  value === null ? "null" : Array.isArray(value) ? "an array" : `a ${typeof value}`

const decodeBlob = Schema.decodeUnknownEither(Message.JsonObject)

/**
 * Every stream's saved state, as the source's --state input (`Commands.read({ state })`). Empty
 * when nothing was loaded yet, including when the schema does not exist.
 */
export const read = (
  schema: string,
): Effect.Effect<ReadonlyArray<StreamState.SavedStreamState>, DatabaseError | InvalidSavedState, Database> =>
  Effect.gen(function* () {
    const db = yield* Database
    const [exists] = yield* db.query("SELECT to_regclass($1) IS NOT NULL AS present", [
      qualified(schema, stateTable.name),
    ])
    if (exists?.present !== true) return []
    // A NULL state is "none yet" only on the row of an overwrite under way (Loader.ts writes it
    // before the stream's first STATE); anywhere else it is refused like any state that does not
    // decode, since reading it as no state would buy the stream again.
    const rows = yield* db.query(
      `SELECT stream, state::text AS state FROM ${qualified(schema, stateTable.name)}
        WHERE state IS NOT NULL OR overwrite_since IS NULL ORDER BY stream`,
    )
    return yield* Effect.forEach(rows, (row) => {
      const stream = String(row.stream)
      if (row.state === null || row.state === undefined)
        return Effect.fail(new InvalidSavedState({ schema, stream, actual: "SQL NULL" }))
      const blob: unknown = JSON.parse(String(row.state))
      return Either.match(decodeBlob(blob), {
        onLeft: () => Effect.fail(new InvalidSavedState({ schema, stream, actual: describeValue(blob) })),
        onRight: (state) => Effect.succeed(StreamState.saved(stream, state)),
      })
    })
  })

/** Deletes the saved state of `streams` (`--reset-state`): each starts afresh on purpose. */
export const reset = (
  schema: string,
  streams: ReadonlyArray<string>,
): Effect.Effect<void, DatabaseError, Database> =>
  Effect.flatMap(Database, (db) =>
    db.query(`DELETE FROM ${qualified(schema, stateTable.name)} WHERE stream = ANY($1::text[])`, [
      [...streams],
    ]),
  )
