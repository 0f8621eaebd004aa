/**
 * The ledger `_bought`: for the streams of Streams.ledgers (contacts), every key bought with the
 * day it was last bought. The loader writes it from each batch's staged records in the batch's
 * own transaction (`recordSql`), so it holds exactly what committed: a run killed at any moment
 * re-buys only what had not committed yet. `salesintel sync` asks it about the keys it meets
 * (`lookup`, a listed page at a time) and its counts (`holdings`), and keeps only a marker in the
 * state; `salesintel-pg state` puts the
 * set back into the state (`exported`) for a reader that has no database (the pipe).
 */
import { StreamState, Streams } from "@salesintel/airbyte"
import * as Chunk from "effect/Chunk"
import * as Effect from "effect/Effect"
import * as Option from "effect/Option"
import * as Stream from "effect/Stream"
import { boughtTable } from "./Bookkeeping.ts"
import { Database, type DatabaseError } from "./Database.ts"
import { ident, literal, qualified } from "./Sql.ts"

const ledgerOf = (stream: string) => (Streams.isStreamName(stream) ? Streams.ledgers[stream] : undefined)

/** Days since 1970-01-01 (UTC) of a timestamptz column, as the source counts them. */
const daySql = (column: string) => `floor(extract(epoch from ${column}) / 86400)::integer`

/**
 * The statement that records the keys of the `staged` records of `stream` as bought on the day
 * they were fetched (a later day wins), or undefined for a stream without a ledger.
 */
export const recordSql = (schema: string, stream: string, staged: string): string | undefined => {
  const ledger = ledgerOf(stream)
  if (ledger === undefined) return undefined
  return `INSERT INTO ${qualified(schema, boughtTable.name)} AS b (stream, key, day)
SELECT DISTINCT ON (${ident(ledger.key)}) ${literal(stream)}, ${ident(ledger.key)}, ${daySql("fetched_at")}
FROM ${staged} WHERE fetched_at IS NOT NULL ORDER BY ${ident(ledger.key)}, fetched_at DESC
ON CONFLICT (stream, key) DO UPDATE SET day = greatest(b.day, EXCLUDED.day)`
}

/** Whether the schema has a ledger yet (an older schema, or none, reads as empty). */
const exists = (schema: string) =>
  Effect.flatMap(Database, (db) =>
    Effect.map(
      db.query("SELECT to_regclass($1) IS NOT NULL AS present", [qualified(schema, boughtTable.name)]),
      ([row]) => row?.present === true,
    ),
  )

/** Rows a page of `read` holds: memory stays this size whatever the stream holds. */
export const pageSize = 20_000

/** A key bought and its day. */
export type Entry = readonly [key: string, day: number]

/** The ledger of `stream`, in key order, a page at a time (keyset paging: each page is one index range). */
export const read = (schema: string, stream: string): Stream.Stream<Entry, DatabaseError, Database> =>
  Stream.unwrap(
    Effect.map(exists(schema), (present) =>
      !present
        ? Stream.empty
        : Stream.paginateChunkEffect(Option.none<string>(), (after) =>
            Effect.flatMap(Database, (db) =>
              // Each page one range of the primary key's index (an OR here would scan the table).
              Option.match(after, {
                onNone: () =>
                  db.query(
                    `SELECT key, day FROM ${qualified(schema, boughtTable.name)}
                      WHERE stream = $1 ORDER BY key LIMIT ${pageSize}`,
                    [stream],
                  ),
                onSome: (key) =>
                  db.query(
                    `SELECT key, day FROM ${qualified(schema, boughtTable.name)}
                      WHERE stream = $1 AND key > $2 ORDER BY key LIMIT ${pageSize}`,
                    [stream, key],
                  ),
              }),
            ).pipe(
              Effect.map((rows) => {
                const page = Chunk.fromIterable(rows.map((row): Entry => [String(row.key), Number(row.day)]))
                const last = Chunk.last(page)
                return [
                  page,
                  rows.length < pageSize ? Option.none() : Option.map(last, ([key]) => Option.some(key)),
                ]
              }),
            ),
          ),
    ),
  )

/**
 * Which of `keys` `stream` bought, with their days: one index lookup per key, so what a sync asks
 * costs the same however much the ledger holds.
 */
export const lookup = (
  schema: string,
  stream: string,
  keys: ReadonlyArray<string>,
): Effect.Effect<ReadonlyArray<Entry>, DatabaseError, Database> =>
  keys.length === 0
    ? Effect.succeed([])
    : Effect.flatMap(exists(schema), (present) =>
        !present
          ? Effect.succeed([])
          : Effect.flatMap(Database, (db) =>
              Effect.map(
                db.query(
                  `SELECT key, day FROM ${qualified(schema, boughtTable.name)}
                    WHERE stream = $1 AND key = ANY($2::text[])`,
                  [stream, [...keys]],
                ),
                (rows) => rows.map((row): Entry => [String(row.key), Number(row.day)]),
              ),
            ),
      )

/**
 * How many keys `stream` holds, and how many of them were bought less than `refreshAfterDays`
 * before `today` (all of them when it is undefined): what the source decides a search's path and
 * its estimate by, without reading the keys.
 */
export const holdings = (
  schema: string,
  stream: string,
  today: number,
  refreshAfterDays: number | undefined,
): Effect.Effect<{ readonly held: number; readonly fresh: number }, DatabaseError, Database> =>
  Effect.flatMap(exists(schema), (present) =>
    !present
      ? Effect.succeed({ held: 0, fresh: 0 })
      : Effect.flatMap(Database, (db) =>
          Effect.map(
            db.query(
              `SELECT count(*)::integer AS held,
                      count(*) FILTER (WHERE $3::integer IS NULL OR $2::integer - day < $3::integer)::integer AS fresh
                 FROM ${qualified(schema, boughtTable.name)} WHERE stream = $1`,
              [stream, today, refreshAfterDays ?? null],
            ),
            ([row]) => ({ held: Number(row?.held ?? 0), fresh: Number(row?.fresh ?? 0) }),
          ),
        ),
  )

/**
 * Records `entries` (a set the state held) as bought, a later day winning: a state moved into the
 * ledger. Runs in whatever transaction is open; in batches of `pageSize`.
 */
export const adopt = (
  schema: string,
  stream: string,
  entries: Iterable<Entry>,
): Effect.Effect<void, DatabaseError, Database> =>
  Effect.gen(function* () {
    const db = yield* Database
    const all = [...entries]
    for (let start = 0; start < all.length; start += pageSize) {
      const slice = all.slice(start, start + pageSize)
      yield* db.query(
        `INSERT INTO ${qualified(schema, boughtTable.name)} AS b (stream, key, day)
         SELECT $1, key, max(day) FROM unnest($2::text[], $3::integer[]) AS t(key, day) GROUP BY key
         ON CONFLICT (stream, key) DO UPDATE SET day = greatest(b.day, EXCLUDED.day)`,
        [stream, slice.map(([key]) => key), slice.map(([, day]) => day)],
      )
    }
  })

/** Forgets what `streams` bought (`--reset-state`: each starts afresh, and re-buys, on purpose). */
export const reset = (
  schema: string,
  streams: ReadonlyArray<string>,
): Effect.Effect<void, DatabaseError, Database> =>
  Effect.flatMap(exists(schema), (present) =>
    !present
      ? Effect.void
      : Effect.flatMap(Database, (db) =>
          db.query(`DELETE FROM ${qualified(schema, boughtTable.name)} WHERE stream = ANY($1::text[])`, [
            [...streams],
          ]),
        ),
  )

/**
 * `state` with its ledger set written back in (day -> keys, as the source reads it) when its field
 * says the set is in the ledger; any other state as it is.
 */
export const withSet = (
  schema: string,
  stream: string,
  state: Readonly<Record<string, unknown>>,
): Effect.Effect<Readonly<Record<string, unknown>>, DatabaseError, Database> => {
  const ledger = ledgerOf(stream)
  if (ledger === undefined || state[ledger.stateField] !== Streams.inLedger) return Effect.succeed(state)
  return Effect.suspend(() => {
    // Grouped by day a page at a time (a fold per element would recurse once per row of a page).
    const days = new Map<number, Array<string>>()
    const group = (entries: Chunk.Chunk<Entry>) =>
      Effect.sync(() => {
        for (const [key, day] of entries) {
          const keys = days.get(day)
          if (keys === undefined) days.set(day, [key])
          else keys.push(key)
        }
      })
    return Effect.as(Stream.runForEachChunk(read(schema, stream), group), days)
  }).pipe(
    Effect.map((days) => ({
      ...state,
      [ledger.stateField]: Object.fromEntries([...days].map(([day, keys]) => [String(day), keys])),
    })),
  )
}

/** Every saved state with its ledger sets written back in: the source's --state input for the pipe. */
export const exported = (
  schema: string,
  saved: ReadonlyArray<StreamState.SavedStreamState>,
): Effect.Effect<ReadonlyArray<StreamState.SavedStreamState>, DatabaseError, Database> =>
  Effect.forEach(saved, (entry) => {
    const stream = entry.stream.stream_descriptor.name
    return Effect.map(withSet(schema, stream, entry.stream.stream_state ?? {}), (state) =>
      StreamState.saved(stream, state),
    )
  })
