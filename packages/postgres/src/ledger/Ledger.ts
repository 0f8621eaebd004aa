/**
 * The ledger `_bought`: for the streams of Streams.ledgers (contacts), the key of every row the
 * stream's table holds, with the day it was last bought. The tables are the truth of what was
 * bought; the ledger is their index, changed in the same transaction as the rows: the loader writes
 * it from each batch's staged records (`recordSql`), an overwrite that deletes rows deletes their
 * keys (`forgetDeletedSql`), and a run that finds it apart from its table (emptied by hand, older
 * than the rows, a schema copied, a day edited) rebuilds it from the rows first (`reconcile`): each
 * key a row's, on the day the row was fetched. So a run killed at any moment re-buys only what had
 * not committed, and nothing the tables hold is bought again.
 *
 * A key is also held by a rejected record of its stream that carries it (`_rejected`, Rejected.ts):
 * bought, paid for, kept whole, but fit for no row. The held set every reader sees is the ledger's
 * keys and those, each on its latest day, so a contact bought and rejected is not bought again
 * until it is stale, like one with a row; the ledger itself stays the index of the table alone.
 *
 * `salesintel sync` asks it about the keys it meets (`lookup`, a listed page at a time) and its
 * counts (`holdings`), and keeps only a marker in the state; `salesintel-pg state` and `salesintel
 * plan` put the set as the tables hold it into the state (`exported`), whatever the state says,
 * for a reader that has no database (the pipe) or must not write (the plan).
 */
import { StreamState, Streams } from "@salesintel/airbyte"
import * as Chunk from "effect/Chunk"
import * as Effect from "effect/Effect"
import * as Option from "effect/Option"
import * as Stream from "effect/Stream"
import { Database, type DatabaseError } from "../database/Database.ts"
import { epochDaySql, fetchedDaySql, ident, literal, qualified } from "../database/Sql.ts"
import { boughtTable } from "../schema/Bookkeeping.ts"
import { mappingOf } from "../schema/Tables.ts"
import * as HeldCompanies from "./HeldCompanies.ts"
import * as KnownDone from "./KnownDone.ts"
import * as Rejected from "./Rejected.ts"

const ledgerOf = (stream: string) => (Streams.isStreamName(stream) ? Streams.ledgers[stream] : undefined)

/** The rows a ledger indexes: the stream's table, its key column, and a row's day bought. */
interface Rows {
  readonly table: string
  readonly key: string
  /** The day a row (aliased `t`) was bought: when it was fetched (or, older rows, loaded). */
  readonly day: string
}

const rowsOf = (schema: string, stream: string): Rows | undefined => {
  const ledger = ledgerOf(stream)
  const mapping = mappingOf(stream)
  if (ledger === undefined || mapping === undefined) return undefined
  return {
    table: qualified(schema, mapping.table.name),
    key: ident(ledger.key),
    day: fetchedDaySql("t"),
  }
}

/**
 * Whether both the ledger and `table` exist: a schema from before the ledger (version 5), which
 * the plan reads without migrating, or none, holds nothing.
 */
const bothExist = (schema: string, table: string) =>
  Effect.flatMap(Database, (db) =>
    Effect.map(
      db.query("SELECT to_regclass($1) IS NOT NULL AND to_regclass($2) IS NOT NULL AS present", [
        qualified(schema, boughtTable.name),
        table,
      ]),
      ([row]) => row?.present === true,
    ),
  )

/**
 * The statement that records the keys of the `staged` records of `stream` as bought on the day
 * they were fetched (a later day wins), or undefined for a stream without a ledger.
 */
export const recordSql = (schema: string, stream: string, staged: string): string | undefined => {
  const ledger = ledgerOf(stream)
  if (ledger === undefined) return undefined
  return `INSERT INTO ${qualified(schema, boughtTable.name)} AS b (stream, key, day)
SELECT DISTINCT ON (${ident(ledger.key)}) ${literal(stream)}, ${ident(ledger.key)}, ${epochDaySql("fetched_at")}
FROM ${staged} WHERE fetched_at IS NOT NULL ORDER BY ${ident(ledger.key)}, fetched_at DESC
ON CONFLICT (stream, key) DO UPDATE SET day = greatest(b.day, EXCLUDED.day)`
}

/**
 * The statement that forgets the keys of `stream` whose rows are gone (an overwrite deleted them),
 * for the transaction that deleted them; undefined for a stream without a ledger.
 */
export const forgetDeletedSql = (schema: string, stream: string): string | undefined => {
  const rows = rowsOf(schema, stream)
  if (rows === undefined) return undefined
  return `DELETE FROM ${qualified(schema, boughtTable.name)} AS b
WHERE b.stream = ${literal(stream)} AND NOT EXISTS (SELECT 1 FROM ${rows.table} AS t WHERE t.${rows.key} = b.key)`
}

/**
 * What `reconcile` changed: rows whose key the ledger lacked, keys whose row was gone, keys whose
 * day was not their row's.
 */
export interface Reconciled {
  readonly stream: string
  readonly added: number
  readonly removed: number
  readonly redated: number
}

/** Whether a reconcile changed anything (what a run tells the user about). */
export const changedAny = (changed: Reconciled): boolean =>
  changed.added > 0 || changed.removed > 0 || changed.redated > 0

/**
 * Makes the ledger of `stream` the index of its table again, in one transaction: a row whose key
 * it lacks is added (on the day the row was fetched), a key whose row is gone is forgotten, a key
 * whose day is not the day its row was fetched gets that day. After a run of this code nothing is
 * to do (the loader keeps both in step); it mends a ledger emptied, edited or older than its
 * table, so nothing the tables hold is bought again, and what is due again is due by its row.
 * One set-based statement, whatever the table holds.
 */
export const reconcile = (
  schema: string,
  stream: string,
): Effect.Effect<Reconciled, DatabaseError, Database> => {
  const rows = rowsOf(schema, stream)
  const none: Reconciled = { stream, added: 0, removed: 0, redated: 0 }
  if (rows === undefined) return Effect.succeed(none)
  return Effect.flatMap(bothExist(schema, rows.table), (present) =>
    !present
      ? Effect.succeed(none)
      : Effect.flatMap(Database, (db) =>
          Effect.map(db.query(reconcileSql(schema, rows), [stream]), ([row]) => ({
            stream,
            added: Number(row?.added ?? 0),
            removed: Number(row?.removed ?? 0),
            redated: Number(row?.redated ?? 0),
          })),
        ),
  )
}

/**
 * One statement (so one transaction, and one pass over the table and the ledger: a full join, 2 s
 * at a million contacts on a busy machine, where an anti-join each way and a join took 6): the
 * rows and keys that differ, then what the ledger lacks added, what has no row forgotten, and a
 * day that is not the row's (edited by hand, or kept from a record the row did not take) mended.
 */
const reconcileSql = (schema: string, rows: Rows) => {
  const ledger = qualified(schema, boughtTable.name)
  return `WITH apart AS (
  SELECT t.${rows.key} AS key, ${rows.day} AS day, b.key AS indexed
    FROM ${rows.table} AS t
    FULL JOIN (SELECT key, day FROM ${ledger} WHERE stream = $1) AS b ON b.key = t.${rows.key}
   WHERE b.key IS NULL OR t.${rows.key} IS NULL OR b.day <> ${rows.day}
), added AS (
  INSERT INTO ${ledger} (stream, key, day) SELECT $1, key, day FROM apart WHERE indexed IS NULL
  ON CONFLICT (stream, key) DO NOTHING RETURNING 1
), removed AS (
  DELETE FROM ${ledger} AS b USING apart
   WHERE apart.key IS NULL AND b.stream = $1 AND b.key = apart.indexed RETURNING 1
), redated AS (
  UPDATE ${ledger} AS b SET day = apart.day FROM apart
   WHERE apart.key IS NOT NULL AND apart.indexed IS NOT NULL AND b.stream = $1 AND b.key = apart.indexed
  RETURNING 1
)
SELECT (SELECT count(*) FROM added)::integer AS added, (SELECT count(*) FROM removed)::integer AS removed,
       (SELECT count(*) FROM redated)::integer AS redated`
}

/** Every ledger stream reconciled (Streams.ledgers): what a run does first, under its lock. */
export const reconcileAll = (
  schema: string,
): Effect.Effect<ReadonlyArray<Reconciled>, DatabaseError, Database> =>
  Effect.forEach(
    Streams.names.filter((stream) => ledgerOf(stream) !== undefined),
    (stream) => reconcile(schema, stream),
  )

/** What a reconcile did, in a line for the user; undefined when the ledger was in step. */
export const describeReconciled = (schema: string, changed: Reconciled): string | undefined => {
  const parts = [
    ...(changed.added > 0
      ? [
          `${changed.added} ${changed.stream} rows held in ${schema}.${changed.stream} were missing from the ledger ${schema}._bought: added back from the rows (they will not be bought again)`,
        ]
      : []),
    ...(changed.removed > 0
      ? [
          `${changed.removed} keys of the ledger ${schema}._bought had no row in ${schema}.${changed.stream}: forgotten (what the tables do not hold is bought again when met)`,
        ]
      : []),
    ...(changed.redated > 0
      ? [
          `${changed.redated} ${changed.stream} keys of the ledger ${schema}._bought had another day than their row's fetched_at in ${schema}.${changed.stream}: mended to the row's day (refresh_after_days counts from when a row was fetched)`,
        ]
      : []),
  ]
  return parts.length === 0 ? undefined : `ledger: ${parts.join("; ")}`
}

/**
 * Whether the schema has a ledger yet (an older schema, or none, reads as empty), and `_rejected`
 * (version 7): the plan reads a schema without migrating it.
 */
const present = (schema: string) =>
  Effect.flatMap(Database, (db) =>
    Effect.map(
      db.query("SELECT to_regclass($1) IS NOT NULL AS bought, to_regclass($2) IS NOT NULL AS rejected", [
        qualified(schema, boughtTable.name),
        qualified(schema, Rejected.rejectedTable.name),
      ]),
      ([row]) => ({ bought: row?.bought === true, rejected: row?.rejected === true }),
    ),
  )

/** Whether the schema has a ledger yet (an older schema, or none, reads as empty). */
const exists = (schema: string) => Effect.map(present(schema), (found) => found.bought)

/** Rows a page of `held` holds: memory stays this size whatever the stream holds. */
export const pageSize = 20_000

/** A key bought and its day. */
export type Entry = readonly [key: string, day: number]

/**
 * Which of `keys` `stream` bought, with their days: the ledger's, and those of its rejected records
 * that carry them (a key in both on its latest day). One index lookup per key in each, so what a
 * sync asks costs the same however much they hold.
 */
export const lookup = (
  schema: string,
  stream: string,
  keys: ReadonlyArray<string>,
): Effect.Effect<ReadonlyArray<Entry>, DatabaseError, Database> =>
  keys.length === 0
    ? Effect.succeed([])
    : Effect.flatMap(present(schema), (found) =>
        !found.bought
          ? Effect.succeed([])
          : Effect.flatMap(Database, (db) =>
              Effect.map(db.query(lookupSql(schema, found.rejected), [stream, [...keys]]), (rows) =>
                rows.map((row): Entry => [String(row.key), Number(row.day)]),
              ),
            ),
      )

const lookupSql = (schema: string, withRejected: boolean) => {
  const ledger = `SELECT key, day FROM ${qualified(schema, boughtTable.name)} WHERE stream = $1 AND key = ANY($2::text[])`
  return !withRejected
    ? ledger
    : `SELECT key, max(day)::integer AS day
         FROM (${ledger} UNION ALL ${Rejected.keyedSql(schema, "$1", "r.key = ANY($2::text[])")}) AS k
        GROUP BY key`
}

/** The ledger's keys dated after tomorrow: how many, on how many days, the first and the last. */
export interface DatedAhead {
  readonly keys: number
  readonly days: number
  readonly first: number
  readonly last: number
}

/**
 * How many keys `stream` holds, and how many of them were bought less than `refreshAfterDays`
 * before `today` (all of them when it is undefined): what the source decides a search's path and
 * its estimate by, without reading the keys. The ledger's keys, and its rejected records' keys that
 * add to them (one the ledger lacks, or holds on a day that is not fresh). And the ledger's keys
 * dated after tomorrow (rows a worker whose clock was ahead fetched), which the source names in a
 * WARN: left out when there are none.
 */
export const holdings = (
  schema: string,
  stream: string,
  today: number,
  refreshAfterDays: number | undefined,
): Effect.Effect<
  { readonly held: number; readonly fresh: number; readonly ahead?: DatedAhead },
  DatabaseError,
  Database
> =>
  Effect.flatMap(present(schema), (found) =>
    !found.bought
      ? Effect.succeed({ held: 0, fresh: 0 })
      : Effect.flatMap(Database, (db) =>
          Effect.map(
            db.query(holdingsSql(schema, found.rejected), [stream, today, refreshAfterDays ?? null]),
            ([row]) => {
              const counts = { held: Number(row?.held ?? 0), fresh: Number(row?.fresh ?? 0) }
              const ahead = Number(row?.ahead ?? 0)
              return ahead === 0
                ? counts
                : {
                    ...counts,
                    ahead: {
                      keys: ahead,
                      days: Number(row?.ahead_days),
                      first: Number(row?.first_ahead),
                      last: Number(row?.last_ahead),
                    },
                  }
            },
          ),
        ),
  )

/**
 * `day` bought less than $3 days before $2 (every day when $3 is null); a day after $2 (a clock
 * ahead) is as old as $2, as the source ages it (DatedSet.isDue).
 */
const freshSql = (day: string) => `($3::integer IS NULL OR greatest($2::integer - ${day}, 0) < $3::integer)`

/**
 * The ledger counted as it is (one pass, as before), plus the rejected keys it lacks, and the
 * fresh rejected keys it does not hold fresh: a pass over the rejected records, however few.
 */
const holdingsSql = (schema: string, withRejected: boolean) => {
  const ledger = qualified(schema, boughtTable.name)
  const ahead = "day > $2::integer + 1"
  const counted = `SELECT count(*)::integer AS held, count(*) FILTER (WHERE ${freshSql("day")})::integer AS fresh,
                          count(*) FILTER (WHERE ${ahead})::integer AS ahead,
                          count(DISTINCT day) FILTER (WHERE ${ahead})::integer AS ahead_days,
                          min(day) FILTER (WHERE ${ahead}) AS first_ahead, max(day) FILTER (WHERE ${ahead}) AS last_ahead
                     FROM ${ledger} WHERE stream = $1`
  if (!withRejected) return counted
  return `WITH counted AS (${counted}), added AS (
  SELECT r.day, b.key AS indexed FROM (${Rejected.keyedSql(schema, "$1")}) AS r
    LEFT JOIN ${ledger} AS b ON b.stream = $1 AND b.key = r.key
   WHERE b.key IS NULL OR NOT ${freshSql("b.day")}
)
SELECT counted.held + (SELECT count(*) FROM added WHERE indexed IS NULL)::integer AS held,
       counted.fresh + (SELECT count(*) FROM added WHERE ${freshSql("day")})::integer AS fresh,
       counted.ahead, counted.ahead_days, counted.first_ahead, counted.last_ahead
  FROM counted`
}

/**
 * Records the keys of `entries` (a set the state held) as bought: a state moved into the ledger.
 * Only keys whose row the table holds are recorded, each on the day its row was fetched: the
 * tables are the truth, and a key with no row is not held (the ledger would otherwise say bought
 * what no table has), nor is a day the row does not say (as `reconcile` mends it). Runs in
 * whatever transaction is open; in batches of `pageSize`.
 */
export const adopt = (
  schema: string,
  stream: string,
  entries: Iterable<Entry>,
): Effect.Effect<void, DatabaseError, Database> =>
  Effect.gen(function* () {
    const rows = rowsOf(schema, stream)
    if (rows === undefined) return
    const db = yield* Database
    const all = [...entries]
    for (let start = 0; start < all.length; start += pageSize) {
      const slice = all.slice(start, start + pageSize)
      yield* db.query(
        `INSERT INTO ${qualified(schema, boughtTable.name)} AS b (stream, key, day)
         SELECT $1, t.${rows.key}, ${rows.day} FROM ${rows.table} AS t WHERE t.${rows.key} = ANY($2::text[])
         ON CONFLICT (stream, key) DO UPDATE SET day = EXCLUDED.day`,
        [stream, slice.map(([key]) => key)],
      )
    }
  })

/**
 * Forgets what `streams` bought, and the known identities they looked up (`--reset-state`: each
 * starts afresh, and re-buys, on purpose).
 */
export const reset = (
  schema: string,
  streams: ReadonlyArray<string>,
): Effect.Effect<void, DatabaseError, Database> =>
  Effect.zipRight(
    Effect.flatMap(exists(schema), (present) =>
      !present
        ? Effect.void
        : Effect.flatMap(Database, (db) =>
            db.query(`DELETE FROM ${qualified(schema, boughtTable.name)} WHERE stream = ANY($1::text[])`, [
              [...streams],
            ]),
          ),
    ),
    KnownDone.reset(schema, streams),
  )

/**
 * The keys the table of `stream` holds, each on the day its row was fetched (the set exactly as
 * `reconcile` leaves the ledger, read without writing anything), and the keys its rejected records
 * carry, on the day they were fetched (a key in both on its latest day): in key order, a page at a
 * time (keyset paging on the table's primary key and on the rejected records' index).
 */
export const held = (schema: string, stream: string): Stream.Stream<Entry, DatabaseError, Database> => {
  const rows = rowsOf(schema, stream)
  if (rows === undefined) return Stream.empty
  return Stream.unwrap(
    Effect.map(Effect.zip(bothExist(schema, rows.table), rejectedKeyed(schema, stream)), ([both, keyed]) =>
      !both ? Stream.empty : pages(heldSql(schema, stream, rows, keyed)),
    ),
  )
}

/**
 * Whether `stream` has a rejected record with its key: the pages merge the two sources only then
 * (merging costs 18 ms a page of 20,000 where the table alone costs 3, on a busy machine).
 */
const rejectedKeyed = (schema: string, stream: string) =>
  Effect.flatMap(present(schema), (found) =>
    !found.rejected
      ? Effect.succeed(false)
      : Effect.flatMap(Database, (db) =>
          Effect.map(
            db.query(
              `SELECT EXISTS (SELECT 1 FROM ${qualified(schema, Rejected.rejectedTable.name)}
                               WHERE stream = $1 AND key IS NOT NULL) AS keyed`,
              [stream],
            ),
            ([row]) => row?.keyed === true,
          ),
        ),
  )

/**
 * A page of the held keys after the key given (none: from the first): each source's first
 * `pageSize` keys past it, merged; the first `pageSize` of those are the merged set's next page,
 * and a page shorter than that is the last.
 */
const heldSql =
  (schema: string, stream: string, rows: Rows, withRejected: boolean) =>
  (after: boolean): string => {
    const table = `SELECT t.${rows.key} AS key, ${rows.day} AS day FROM ${rows.table} AS t
      ${after ? `WHERE t.${rows.key} > $1` : ""} ORDER BY t.${rows.key} LIMIT ${pageSize}`
    if (!withRejected) return table
    const rejected = `${Rejected.keyedSql(schema, literal(stream), after ? "r.key > $1" : "")} ORDER BY r.key LIMIT ${pageSize}`
    return `SELECT key, max(day)::integer AS day FROM ((${table}) UNION ALL (${rejected})) AS k
    GROUP BY key ORDER BY key LIMIT ${pageSize}`
  }

/** The entries `select` gives, a page at a time, each page after the last key of the one before. */
const pages = (select: (after: boolean) => string): Stream.Stream<Entry, DatabaseError, Database> =>
  Stream.paginateChunkEffect(Option.none<string>(), (after) =>
    Effect.flatMap(Database, (db) =>
      db.query(select(Option.isSome(after)), Option.isSome(after) ? [after.value] : []),
    ).pipe(
      Effect.map((found) => {
        const page = Chunk.fromIterable(found.map((row): Entry => [String(row.key), Number(row.day)]))
        const next =
          found.length < pageSize ? Option.none() : Option.map(Chunk.last(page), ([key]) => Option.some(key))
        return [page, next]
      }),
    ),
  )

/** The set the tables hold for `stream`, in the state's form (day -> keys), or undefined when empty. */
const heldByDay = (
  schema: string,
  stream: string,
): Effect.Effect<Record<string, Array<string>> | undefined, DatabaseError, Database> =>
  Effect.suspend(() => {
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
    return Effect.as(Stream.runForEachChunk(held(schema, stream), group), days)
  }).pipe(
    Effect.map((days) =>
      days.size === 0 ? undefined : Object.fromEntries([...days].map(([day, keys]) => [String(day), keys])),
    ),
  )

/** A state's dated set (days to keys), not the ledger's marker. */
const isDated = (value: unknown): value is Readonly<Record<string, unknown>> =>
  typeof value === "object" && value !== null && !Array.isArray(value)

/**
 * Every saved state with the bought set of each ledger stream written in as the tables hold it,
 * whatever the state said (a marker, a set of its own, or no state at all), its known identities
 * done (KnownDone.ts) likewise, and the companies'
 * mended from their table (HeldCompanies.ts): the source's --state
 * input for the pipe, and what the plan diffs against, so both see everything the database holds
 * and nothing it does not.
 */
export const exported = (
  schema: string,
  saved: ReadonlyArray<StreamState.SavedStreamState>,
): Effect.Effect<ReadonlyArray<StreamState.SavedStreamState>, DatabaseError, Database> =>
  Effect.gen(function* () {
    const out = new Map(saved.map((entry) => [entry.stream.stream_descriptor.name, entry]))
    for (const stream of Streams.names) {
      const ledger = ledgerOf(stream)
      if (ledger === undefined) continue
      const state = out.get(stream)?.stream.stream_state ?? {}
      const set = yield* heldByDay(schema, stream)
      const doneField = Streams.knownDone.stateFields[stream]
      const savedDone = doneField === undefined ? undefined : state[doneField]
      // A state that said "ledger" gets the table's set, even an empty one; one that had no field, none.
      const done =
        doneField === undefined
          ? undefined
          : ((yield* KnownDone.intoState(schema, stream, isDated(savedDone) ? savedDone : undefined)) ??
            (savedDone === Streams.inLedger ? {} : undefined))
      if (set === undefined && done === undefined && !out.has(stream)) continue
      out.set(
        stream,
        StreamState.saved(stream, {
          ...state,
          [ledger.stateField]: set ?? {},
          ...(doneField === undefined || done === undefined ? {} : { [doneField]: done }),
        }),
      )
    }
    // In the order saved, then any stream only the tables had; the companies' set mended from
    // their table as a sync mends it (HeldCompanies.ts).
    return (yield* HeldCompanies.mend(schema, [...out.values()])).saved
  })
