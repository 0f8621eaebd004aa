/**
 * `_sync_runs`: one row per run. `start` inserts a running row and returns its id; `progress`
 * updates its per-stream figures in each commit's transaction (so the row says what committed
 * even if the process dies); `finish` sets its end and status. A row left "running" by a process
 * that died is marked "abandoned" by the next run (`abandon`, called under the target's lock, so
 * no live run can be running then).
 */
import * as Effect from "effect/Effect"
import { Database, type DatabaseError } from "../database/Database.ts"
import { qualified } from "../database/Sql.ts"
import { runsTable } from "../schema/Bookkeeping.ts"
import { jsonText } from "../schema/Nul.ts"

export type RunId = number

export interface StreamFigures {
  readonly records: number
  /** Credits the source spent on the stream, when known (the loader alone does not know them). */
  readonly credits?: number
  /** Its records that did not decode, kept in `_rejected` (Rejected.ts); absent when none. */
  readonly rejected?: number
}

/**
 * Each stream's figures from its records and its rejected records (a stream whose every record was
 * rejected has figures too), with `rejected` only where there were some.
 */
export const figuresOf = (
  records: Readonly<Record<string, number>>,
  rejected: Readonly<Record<string, number>>,
): Record<string, StreamFigures> =>
  Object.fromEntries(
    [...new Set([...Object.keys(records), ...Object.keys(rejected)])].map((stream) => {
      const count = rejected[stream] ?? 0
      return [stream, { records: records[stream] ?? 0, ...(count > 0 ? { rejected: count } : {}) }]
    }),
  )

/**
 * How a run ended: succeeded (everything due was bought), stopped_at_budget (it ended on its own
 * at its credit budget: what it bought committed, the rest is due on the next run), failed,
 * interrupted by a signal (what committed stays), or abandoned (its process died).
 */
export type Status = "running" | "succeeded" | "stopped_at_budget" | "failed" | "interrupted" | "abandoned"

export interface Finish {
  readonly status: Exclude<Status, "running" | "abandoned">
  readonly streams: Readonly<Record<string, StreamFigures>>
  readonly error?: string
  /** Credits possibly charged without delivery (the source's count; the loader alone has none). */
  readonly creditsUncertain?: number
  /** Credits the run spent, all streams (the source's count; the loader alone has none). */
  readonly credits?: number
  /**
   * How far before the clock the run's start was dated (`start`'s `startedAt`), in milliseconds:
   * its end is dated as far back, so the row keeps the run's own duration.
   */
  readonly datedBackMs?: number
}

/**
 * Records a new run, started now, or at `startedAt` for a run that reads as of another time (the
 * demo's first sync, dated a month back): its row then says when its data is from.
 */
export const start = (schema: string, startedAt?: Date): Effect.Effect<RunId, DatabaseError, Database> =>
  Effect.gen(function* () {
    const db = yield* Database
    const [row] = yield* db.query(
      `INSERT INTO ${qualified(schema, runsTable.name)} (status, started_at)
       VALUES ('running', coalesce($1::timestamptz, now())) RETURNING id::text AS id`,
      [startedAt?.toISOString() ?? null],
    )
    return Number(row?.id)
  })

export const finish = (
  schema: string,
  id: RunId,
  outcome: Finish,
): Effect.Effect<void, DatabaseError, Database> =>
  Effect.flatMap(Database, (db) =>
    db.query(
      `UPDATE ${qualified(schema, runsTable.name)}
       SET finished_at = greatest(started_at, now() - $6::bigint * interval '1 millisecond'), status = $2,
         streams = $3::text::jsonb, error = $4, credits_uncertain = $5, credits = $7
       WHERE id = $1`,
      [
        id,
        outcome.status,
        jsonText(outcome.streams),
        outcome.error ?? null,
        outcome.creditsUncertain ?? null,
        Math.max(0, Math.round(outcome.datedBackMs ?? 0)),
        outcome.credits ?? null,
      ],
    ),
  )

/** Records (and credits) committed so far; call it inside the transaction that commits them. */
export const progress = (
  schema: string,
  id: RunId,
  streams: Readonly<Record<string, StreamFigures>>,
): Effect.Effect<void, DatabaseError, Database> =>
  Effect.flatMap(Database, (db) =>
    db.query(`UPDATE ${qualified(schema, runsTable.name)} SET streams = $2::text::jsonb WHERE id = $1`, [
      id,
      jsonText(streams),
    ]),
  )

/**
 * Records that the running run `id` may spend up to `mark` credits, before it spends them (a
 * mark written ahead: CreditBudget.writtenAhead). Call it on a connection of its own, outside the
 * run's open transaction, so that it is committed whatever becomes of the run's process.
 */
export const reserveAhead = (
  schema: string,
  id: RunId,
  mark: number,
): Effect.Effect<void, DatabaseError, Database> =>
  Effect.flatMap(Database, (db) =>
    db.query(
      `UPDATE ${qualified(schema, runsTable.name)} SET credits = greatest(coalesce(credits, 0), $2::bigint)
       WHERE id = $1 AND status = 'running'`,
      [id, mark],
    ),
  )

/**
 * Marks every run still "running" as abandoned and returns their ids. Only under the target's
 * lock (RunLock): then no live process is running one.
 */
export const abandon = (schema: string): Effect.Effect<ReadonlyArray<RunId>, DatabaseError, Database> =>
  Effect.flatMap(Database, (db) =>
    db.query(
      `UPDATE ${qualified(schema, runsTable.name)}
       SET status = 'abandoned', finished_at = now(),
           error = coalesce(error, 'its process ended without finishing the run (killed?); what it committed stays')
       WHERE status = 'running' RETURNING id::text AS id`,
    ),
  ).pipe(Effect.map((rows) => rows.map((row) => Number(row.id))))

/**
 * The credits of every run started in [from, until): what a credit allowance's period spent. Each
 * run counts its `credits` (for a killed run, the mark it wrote ahead: at least what it was
 * charged), or where it has none (a run killed before it could record any) the credits its
 * committed streams say. Runs failed, interrupted and abandoned count as the provider charged them.
 */
export const spentBetween = (
  schema: string,
  from: Date,
  until: Date,
): Effect.Effect<number, DatabaseError, Database> =>
  Effect.gen(function* () {
    const db = yield* Database
    // A target no run has used yet (plan before the first sync) has spent nothing.
    const [table] = yield* db.query("SELECT to_regclass($1) IS NOT NULL AS present", [
      qualified(schema, runsTable.name),
    ])
    if (table?.present !== true) return 0
    const rows = yield* db.query(
      `SELECT coalesce(sum(coalesce(r.credits,
           CASE WHEN jsonb_typeof(r.streams) = 'object' THEN
             (SELECT sum((s.value->>'credits')::bigint) FROM jsonb_each(r.streams) s) END, 0)), 0)::text AS spent
       FROM ${qualified(schema, runsTable.name)} r
       WHERE r.started_at >= $1::timestamptz AND r.started_at < $2::timestamptz`,
      [from.toISOString(), until.toISOString()],
    )
    return Number(rows[0]?.spent ?? 0)
  })

export interface Run {
  readonly id: RunId
  readonly startedAt: Date
  readonly finishedAt: Date | null
  readonly status: string
  readonly streams: Readonly<Record<string, StreamFigures>> | null
  readonly error: string | null
  /**
   * The run's credits: what it spent, or for a run killed (abandoned) the mark it wrote ahead (at
   * least what it was charged); null for a load, or a run recorded before the column was.
   */
  readonly credits: number | null
}

// pg returns Date objects, PGlite may too; a string is parsed as a fallback.
const toDate = (value: unknown): Date => (value instanceof Date ? value : new Date(String(value)))

/** The latest runs, newest first. */
export const list = (
  schema: string,
  limit = 20,
): Effect.Effect<ReadonlyArray<Run>, DatabaseError, Database> =>
  Effect.gen(function* () {
    const db = yield* Database
    const rows = yield* db.query(
      // Ordered by the column, a number: `ORDER BY id` would order by the text alias (9 before 11).
      `SELECT r.id::text AS id, started_at, finished_at, status, streams::text AS streams, error,
         credits::text AS credits
       FROM ${qualified(schema, runsTable.name)} r ORDER BY r.id DESC LIMIT $1`,
      [limit],
    )
    return rows.map(
      (row): Run => ({
        id: Number(row.id),
        startedAt: toDate(row.started_at),
        finishedAt: row.finished_at === null ? null : toDate(row.finished_at),
        status: String(row.status),
        streams: row.streams === null ? null : JSON.parse(String(row.streams)),
        error: row.error === null ? null : String(row.error),
        credits: row.credits === null ? null : Number(row.credits),
      }),
    )
  })
