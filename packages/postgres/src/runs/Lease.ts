/**
 * The pipe's lease: `salesintel-pg state` hands a target's state to a source that buys from it in
 * another process (`source-salesintel read --state … | salesintel-pg load`). Until the load that
 * takes that input begins (and then holds the target's lock for the pipe's whole length), nothing
 * else may buy into the target from that state's view of it: a `salesintel sync` or a second
 * export (another pipe) would buy the same records. So the export reserves the target: a lease,
 * which a sync and an export respect (refused naming it, or waiting with --wait, as for a held
 * lock), the next load consumes, and which lapses after a few minutes if no load begins.
 *
 * Kept beside the lock it extends: on a server a row of `_lease` in the schema, checked on the
 * session that holds the schema's advisory lock; in a PGlite directory a file beside its lock file,
 * checked before the database is opened (so a run that waits for it holds nothing meanwhile).
 */
import { readFileSync, unlinkSync, writeFileSync } from "node:fs"
import { join } from "node:path"
import * as Effect from "effect/Effect"
import { Database, DatabaseError } from "../database/Database.ts"
import { ident, qualified } from "../database/Sql.ts"

/** What a run does with an open lease: waits for it like a held lock, or consumes it (the load). */
export type Use = "respect" | "consume"

export interface Lease {
  readonly takenAt: string
  readonly expiresAt: string
  readonly takenBy: string
}

/** The lease as a holder, for the message of a run that finds it (RunLock.RunLocked). */
export const describe = (lease: Lease): string =>
  `a pipe: ${lease.takenBy} gave the target's state to a load that has not begun, at ${lease.takenAt}; reserved until that load begins, or until ${lease.expiresAt}`

/** How long an export reserves the target by default, if no load begins. */
export const defaultMinutes = 10

const make = (minutes: number, takenBy: string, now = new Date()): Lease => ({
  takenAt: now.toISOString(),
  expiresAt: new Date(now.getTime() + minutes * 60_000).toISOString(),
  takenBy,
})

// ---------------------------------------------------------------------------------------------
// A PGlite directory: a file beside the lock file

export const fileName = "salesintel.lease"

/** The directory's open lease (not lapsed), if any. A file that does not parse reserves nothing. */
export const inDirectory = (directory: string, now = Date.now()): Lease | undefined => {
  try {
    const parsed = JSON.parse(readFileSync(join(directory, fileName), "utf8")) as Partial<Lease>
    if (typeof parsed.expiresAt !== "string" || Date.parse(parsed.expiresAt) <= now) return undefined
    return { takenAt: String(parsed.takenAt), expiresAt: parsed.expiresAt, takenBy: String(parsed.takenBy) }
  } catch {
    return undefined
  }
}

/** Removes the directory's lease (the load that begins consumes it). */
export const consumeInDirectory = (directory: string): void => {
  try {
    unlinkSync(join(directory, fileName))
  } catch {}
}

const takeInDirectory = (directory: string, lease: Lease): Effect.Effect<void, DatabaseError> =>
  Effect.try({
    try: () => writeFileSync(join(directory, fileName), `${JSON.stringify(lease)}\n`),
    catch: (cause) => new DatabaseError({ operation: `write the lease file in ${directory}`, cause }),
  })

// ---------------------------------------------------------------------------------------------
// A server: a row of `_lease`, made by the first export (a schema without it holds no lease)

const tableName = "_lease"

/** The schema's open lease (not lapsed), if any; consumed (deleted) when `use` says so. */
export const inSchema = (
  schema: string,
  use: Use,
): Effect.Effect<Lease | undefined, DatabaseError, Database> =>
  Effect.gen(function* () {
    const db = yield* Database
    const [exists] = yield* db.query("SELECT to_regclass($1) IS NOT NULL AS present", [
      qualified(schema, tableName),
    ])
    if (exists?.present !== true) return undefined
    if (use === "consume") {
      yield* db.query(`DELETE FROM ${qualified(schema, tableName)}`)
      return undefined
    }
    const [row] = yield* db.query(
      `SELECT taken_at, expires_at, taken_by FROM ${qualified(schema, tableName)} WHERE expires_at > now()`,
    )
    return row === undefined
      ? undefined
      : {
          takenAt: new Date(String(row.taken_at)).toISOString(),
          expiresAt: new Date(String(row.expires_at)).toISOString(),
          takenBy: String(row.taken_by),
        }
  })

const takeInSchema = (schema: string, lease: Lease): Effect.Effect<void, DatabaseError, Database> =>
  Effect.gen(function* () {
    const db = yield* Database
    yield* db.exec(
      `CREATE SCHEMA IF NOT EXISTS ${ident(schema)};
       CREATE TABLE IF NOT EXISTS ${qualified(schema, tableName)} (
         only_one boolean PRIMARY KEY DEFAULT true CHECK (only_one),
         taken_at timestamptz NOT NULL, expires_at timestamptz NOT NULL, taken_by text NOT NULL)`,
    )
    yield* db.query(
      `INSERT INTO ${qualified(schema, tableName)} (taken_at, expires_at, taken_by) VALUES ($1, $2, $3)
       ON CONFLICT (only_one) DO UPDATE
       SET taken_at = excluded.taken_at, expires_at = excluded.expires_at, taken_by = excluded.taken_by`,
      [lease.takenAt, lease.expiresAt, lease.takenBy],
    )
  })

/**
 * Reserves the target for the next load, for `minutes` at most: under the lock the export holds
 * (so no run is under way), in the directory when the target is PGlite's, else in the schema.
 */
export const take = (
  target: { readonly schema: string; readonly pgliteDirectory?: string | undefined },
  minutes: number,
  takenBy: string,
): Effect.Effect<Lease, DatabaseError, Database> => {
  const lease = make(minutes, takenBy)
  return Effect.as(
    target.pgliteDirectory === undefined
      ? takeInSchema(target.schema, lease)
      : takeInDirectory(target.pgliteDirectory, lease),
    lease,
  )
}
