/**
 * `_rejected`: the records a stream's pages carried that did not decode (Streams.rejected), each
 * whole as the provider sent it, with the stream it was for, its key when it has one, the reason,
 * when it was fetched and rejected, and the run that loaded it. They were paid for (a credited page
 * is charged per record on it) but fit no table, and a run says how many it rejected (its summary,
 * `_sync_runs.streams`). Written in the transaction of the STATE that covers them, like every
 * record. One row per stream and record: the same bad record loaded again (a rerun, a full refresh,
 * the same input twice) updates its row instead of adding one.
 *
 * A rejected record with its key was bought as surely as one with a row: of a ledger stream, its
 * key is held (Ledger.ts reads the ledger's keys and these, `keyedSql`) until it is stale by the day
 * it was fetched, so no run buys it again before then. It is not written into the ledger, which
 * stays the index of its table: `_rejected` is the truth of these keys, and its own index on
 * (stream, key) (`indexSql`) their look-up.
 */
import type { Streams } from "@salesintel/airbyte"
import * as Effect from "effect/Effect"
import { Database, type DatabaseError } from "../database/Database.ts"
import { epochDaySql, ident, qualified } from "../database/Sql.ts"
import { jsonText, stripNul } from "../schema/Nul.ts"
import type { TableShape } from "../schema/Table.ts"

export const rejectedTable: TableShape = {
  name: "_rejected",
  doc: "records a page carried that did not decode: paid for, fit for no table, kept whole with the reason",
  primaryKey: ["stream", "record_md5"],
  columns: [
    { name: "stream", type: "text", notNull: true, doc: "the stream the record was for" },
    {
      name: "record_md5",
      type: "text",
      notNull: true,
      doc: "md5 of the record's JSON (as jsonb writes it): one row per stream and record",
    },
    { name: "key", type: "text", doc: "the record's primary key, when it carries one (null: it has none)" },
    {
      name: "reason",
      type: "text",
      doc: "why it did not decode: the path of the bad value and what was wrong",
    },
    { name: "record", type: "jsonb", doc: "the record whole, as the provider sent it" },
    { name: "fetched_at", type: "timestamptz", doc: "when the source fetched it" },
    {
      name: "rejected_at",
      type: "timestamptz",
      notNull: true,
      default: "now()",
      doc: "when it was loaded here (the load transaction's time)",
    },
    {
      name: "run_id",
      type: "bigint",
      doc: "the run that loaded it (`_sync_runs.id`), when the load had one",
    },
  ],
}

/** Writes `rows` into `schema`'s `_rejected`, in the open transaction. */
export const write = (
  schema: string,
  rows: ReadonlyArray<Streams.RejectedRecord>,
  runId: number | undefined,
): Effect.Effect<void, DatabaseError, Database> =>
  Effect.flatMap(Database, (db) =>
    Effect.forEach(
      rows,
      (row) =>
        db.query(
          `INSERT INTO ${qualified(schema, rejectedTable.name)} AS r
             (stream, record_md5, key, reason, record, fetched_at, rejected_at, run_id)
           SELECT $1, md5(v.record::text), $2, $3, v.record, $5::timestamptz, now(), $6::bigint
             FROM (SELECT $4::jsonb AS record) v
           ON CONFLICT (stream, record_md5) DO UPDATE SET
             key = excluded.key, reason = excluded.reason, fetched_at = excluded.fetched_at,
             rejected_at = excluded.rejected_at, run_id = excluded.run_id`,
          [
            stripNul(row.stream),
            row.key === null ? null : stripNul(row.key),
            stripNul(row.reason),
            jsonText(row.record),
            row._salesintel_fetched_at,
            runId ?? null,
          ],
        ),
      { discard: true },
    ),
  )

/** The index a rejected key is looked up by (Ledger.ts): the records that carry one, by stream. */
export const indexSql = (schema: string): string =>
  `CREATE INDEX IF NOT EXISTS ${ident("_rejected_stream_key")} ON ${qualified(schema, rejectedTable.name)} (stream, key) WHERE key IS NOT NULL`

/** The day a rejected record (aliased `alias`) was bought: when it was fetched (or else loaded). */
export const daySql = (alias: string): string =>
  epochDaySql(`coalesce(${alias}.fetched_at, ${alias}.rejected_at)`)

/**
 * The keys of the rejected records of the stream `stream` (a SQL expression: a parameter or a
 * literal) that carry one, each once, on the latest day one of its records was fetched (columns
 * `key`, `day`), with `where` (over the alias `r`) narrowing them.
 */
export const keyedSql = (schema: string, stream: string, where = ""): string =>
  `SELECT r.key, max(${daySql("r")}) AS day FROM ${qualified(schema, rejectedTable.name)} AS r
    WHERE r.stream = ${stream} AND r.key IS NOT NULL${where === "" ? "" : ` AND ${where}`} GROUP BY r.key`
