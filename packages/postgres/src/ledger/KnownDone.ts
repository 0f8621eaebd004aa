/**
 * `_known_done`: the known records' identities (contacts.known, a file's or a query's rows) a sync
 * looked up and found held whole, each on the day it did (Streams.knownDone). The source keeps
 * them here instead of in its state under `salesintel sync` (the contacts' `emails` field then
 * says "ledger"): a team's 100,000 CRM emails are neither held in the run's memory nor written into
 * every checkpoint. Written from the records of the `_known_done` stream in the transaction of the
 * STATE that follows them, like every record, so a run killed at any moment looks up again only
 * what had not committed.
 *
 * They are not an index of a table (no row says an identity was looked up): `reconcile` leaves
 * them alone. An overwrite of the contacts (a full refresh) that ends forgets those it did not
 * look up again (`forgetOlderSql`), as the state's set was replaced; `--reset-state` forgets them
 * with the stream's ledger (Ledger.reset); `salesintel forget` deletes a person's (Forget.ts);
 * `salesintel-pg state` and `salesintel plan` write them into the state (`intoState`).
 */
import { PackedIds, type Streams } from "@salesintel/airbyte"
import * as Effect from "effect/Effect"
import { Database, type DatabaseError } from "../database/Database.ts"
import { epochDaySql, qualified } from "../database/Sql.ts"
import type { TableShape } from "../schema/Table.ts"
import type { DatedAhead } from "./Ledger.ts"

export const knownDoneTable: TableShape = {
  name: "_known_done",
  doc: "known contacts' identities (an email, a name at a domain, a profile URL, a match id) looked up and found held: not looked up again until refresh_after_days",
  primaryKey: ["stream", "key"],
  columns: [
    { name: "stream", type: "text", notNull: true, doc: "the stream whose known records they are" },
    {
      name: "key",
      type: "text",
      notNull: true,
      doc: "the identity: an email, or name:first|last|domain, linkedin:URL, match_id:ID",
    },
    {
      name: "day",
      type: "integer",
      notNull: true,
      doc: "the day it was last looked up, in days since 1970-01-01 (UTC): what refresh_after_days counts from",
    },
    {
      name: "synced_at",
      type: "timestamptz",
      notNull: true,
      default: "now()",
      doc: "when it was last written here (the load transaction's time)",
    },
  ],
}

const table = (schema: string) => qualified(schema, knownDoneTable.name)

/** Writes the identities of `records` as done on the day each was fetched (a later day wins), in the open transaction. */
export const write = (
  schema: string,
  records: ReadonlyArray<Streams.KnownDoneRecord>,
): Effect.Effect<void, DatabaseError, Database> =>
  Effect.flatMap(Database, (db) =>
    Effect.forEach(
      records.filter((record) => record.keys.length > 0),
      (record) =>
        db.query(
          `INSERT INTO ${table(schema)} AS d (stream, key, day, synced_at)
           SELECT DISTINCT $1, k, ${epochDaySql("$3::timestamptz")}, now() FROM unnest($2::text[]) AS k
           ON CONFLICT (stream, key) DO UPDATE SET day = greatest(d.day, EXCLUDED.day), synced_at = now()`,
          [record.stream, [...record.keys], record._salesintel_fetched_at],
        ),
      { discard: true },
    ),
  )

/** A key done and its day. */
export type Entry = readonly [key: string, day: number]

/** Which of `keys` are done for `stream`, each with its day (keys not done are left out). */
export const lookup = (
  schema: string,
  stream: string,
  keys: ReadonlyArray<string>,
): Effect.Effect<ReadonlyArray<Entry>, DatabaseError, Database> =>
  keys.length === 0
    ? Effect.succeed([])
    : Effect.flatMap(Database, (db) =>
        Effect.map(
          db.query(`SELECT key, day FROM ${table(schema)} WHERE stream = $1 AND key = ANY($2::text[])`, [
            stream,
            [...keys],
          ]),
          (rows) => rows.map((row): Entry => [String(row.key), Number(row.day)]),
        ),
      )

/**
 * The identities `stream` has done on days after tomorrow (written by a worker whose clock was
 * ahead), which the source names in a WARN as it does `_bought`'s: undefined when there are none.
 */
export const ahead = (
  schema: string,
  stream: string,
  today: number,
): Effect.Effect<DatedAhead | undefined, DatabaseError, Database> =>
  Effect.flatMap(Database, (db) =>
    Effect.map(
      db.query(
        `SELECT count(*)::integer AS keys, count(DISTINCT day)::integer AS days, min(day) AS first, max(day) AS last
         FROM ${table(schema)} WHERE stream = $1 AND day > $2::integer + 1`,
        [stream, today],
      ),
      ([row]) =>
        Number(row?.keys ?? 0) === 0
          ? undefined
          : {
              keys: Number(row?.keys),
              days: Number(row?.days),
              first: Number(row?.first),
              last: Number(row?.last),
            },
    ),
  )

/** Rows written at a time when a state's set moves here. */
const adoptSlice = 20_000

/** Records `entries` (a set a state held) as done, each on its day (a later day wins). */
export const adopt = (
  schema: string,
  stream: string,
  entries: ReadonlyArray<Entry>,
): Effect.Effect<void, DatabaseError, Database> =>
  Effect.flatMap(Database, (db) =>
    Effect.forEach(
      Array.from({ length: Math.ceil(entries.length / adoptSlice) }, (_, index) =>
        entries.slice(index * adoptSlice, (index + 1) * adoptSlice),
      ),
      (slice) =>
        db.query(
          `INSERT INTO ${table(schema)} AS d (stream, key, day)
           SELECT DISTINCT ON (k) $1, k, day FROM unnest($2::text[], $3::integer[]) AS e(k, day) ORDER BY k, day DESC
           ON CONFLICT (stream, key) DO UPDATE SET day = greatest(d.day, EXCLUDED.day)`,
          [stream, slice.map(([key]) => key), slice.map(([, day]) => day)],
        ),
      { discard: true },
    ),
  )

/**
 * The statement an overwrite of `stream` runs as it ends (in its transaction): the identities it
 * did not look up again are forgotten, as a full refresh's state kept only those it looked up.
 * `since` is the SQL of when the overwrite began.
 */
export const forgetOlderSql = (schema: string, since: string): string =>
  `DELETE FROM ${table(schema)} WHERE stream = $1 AND synced_at < ${since}`

/** Whether the schema has the table yet (the plan and an export read a schema without migrating it). */
const exists = (schema: string) =>
  Effect.flatMap(Database, (db) =>
    Effect.map(
      db.query("SELECT to_regclass($1) IS NOT NULL AS present", [table(schema)]),
      ([row]) => row?.present === true,
    ),
  )

/** Forgets what `streams` looked up (`--reset-state`). */
export const reset = (schema: string, streams: ReadonlyArray<string>) =>
  Effect.flatMap(exists(schema), (present) =>
    !present
      ? Effect.void
      : Effect.flatMap(Database, (db) =>
          db.query(`DELETE FROM ${table(schema)} WHERE stream = ANY($1::text[])`, [[...streams]]),
        ),
  )

/** A state's dated set: days to keys (a day's keys a list, or packed by the source). */
type DatedJson = Readonly<Record<string, unknown>>

/**
 * The identities `stream` has done, in the state's form (day -> keys), merged with `saved` when the
 * state holds a set of its own (one a pipe's load wrote), or undefined when there are none at all.
 * Read whole: the plan and a pipe's source take the set in their state.
 */
export const intoState = (
  schema: string,
  stream: string,
  saved: DatedJson | undefined,
): Effect.Effect<DatedJson | undefined, DatabaseError, Database> =>
  Effect.flatMap(exists(schema), (present) =>
    !present
      ? Effect.succeed(saved)
      : Effect.flatMap(Database, (db) =>
          Effect.map(
            db.query(
              `SELECT day::text AS day, array_agg(key ORDER BY key) AS keys FROM ${table(schema)} WHERE stream = $1 GROUP BY day`,
              [stream],
            ),
            (rows) => {
              if (rows.length === 0) return saved
              const days: Record<string, unknown> = { ...saved }
              // A day the state also holds keeps both lists (the source reads a key's latest day).
              for (const row of rows) {
                const keys = Array.isArray(row.keys) ? row.keys.map(String) : []
                const before = days[String(row.day)]
                const held =
                  typeof before === "string"
                    ? PackedIds.unpack(before)
                    : Array.isArray(before)
                      ? before.map(String)
                      : []
                days[String(row.day)] = [...held, ...keys]
              }
              return days
            },
          ),
        ),
  )
