/**
 * A run's credits mark written ahead of its spending where the database cannot take it at once:
 * embedded PGlite has one connection, whose open load transaction would hold the mark back until
 * its commit (and lose it to a kill). There the mark goes to a small file in the PGlite directory
 * (beside its lock file), written whole and flushed before the credits are spent; the next sync
 * moves it into the killed run's row (`_sync_runs.credits`) once that run is marked abandoned, and
 * a run that ends removes it (its row then says what it spent). On a server the mark is written
 * to the row directly, on a connection of its own (Runs.reserveAhead).
 */
import { closeSync, fsyncSync, openSync, readFileSync, renameSync, rmSync, writeSync } from "node:fs"
import { join } from "node:path"
import * as Effect from "effect/Effect"
import { Database, DatabaseError } from "../database/Database.ts"
import { qualified } from "../database/Sql.ts"
import { runsTable } from "../schema/Bookkeeping.ts"
import type { RunId } from "./Runs.ts"

/** The mark file of `schema`'s runs in the PGlite `directory`. */
export const fileFor = (directory: string, schema: string): string =>
  join(directory, `salesintel-credits-ahead.${encodeURIComponent(schema)}.json`)

const failed = (operation: string) => (cause: unknown) => new DatabaseError({ operation, cause })

/** Records that run `run` may spend up to `mark` credits: written whole (a rename) and flushed. */
export const write = (path: string, run: RunId, mark: number): Effect.Effect<void, DatabaseError> =>
  Effect.try({
    try: () => {
      const temporary = `${path}.tmp`
      const descriptor = openSync(temporary, "w")
      try {
        writeSync(descriptor, JSON.stringify({ run, mark }))
        fsyncSync(descriptor)
      } finally {
        closeSync(descriptor)
      }
      renameSync(temporary, path)
    },
    catch: failed(`write the credits mark ${path}`),
  })

/** Removes the mark file (the run that wrote it has ended, or its mark is in its row). */
export const clear = (path: string): Effect.Effect<void> => Effect.sync(() => rmSync(path, { force: true }))

const readMark = (path: string): { readonly run: number; readonly mark: number } | undefined => {
  try {
    const parsed: unknown = JSON.parse(readFileSync(path, "utf8"))
    if (typeof parsed !== "object" || parsed === null) return undefined
    const { run, mark } = parsed as Record<string, unknown>
    return typeof run === "number" && typeof mark === "number" ? { run, mark } : undefined
  } catch {
    // No file (no run was killed), or one cut short by a kill mid-write: the rename never happened.
    return undefined
  }
}

/**
 * Moves a killed run's mark into its row: the run the file names, if it was abandoned, counts at
 * least its mark. Call it under the target's lock, after the dead runs were marked abandoned.
 */
export const recover = (schema: string, path: string): Effect.Effect<void, DatabaseError, Database> =>
  Effect.gen(function* () {
    const found = readMark(path)
    if (found === undefined) return
    const db = yield* Database
    yield* db.query(
      `UPDATE ${qualified(schema, runsTable.name)} SET credits = greatest(coalesce(credits, 0), $2::bigint)
       WHERE id = $1 AND status = 'abandoned'`,
      [found.run, found.mark],
    )
    yield* clear(path)
  })
