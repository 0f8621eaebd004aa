/**
 * One run at a time per target. On a server: a session-level advisory lock per schema, taken on
 * the run's own connection (so it goes when the session goes, whatever kills the process). On
 * PGlite: a lock file in its directory, created exclusively, holding the holder's pid and start
 * time; a holder whose process is dead cannot keep it. A second run fails at once naming the
 * holder, or, when asked to wait, polls until the lock is free (bounded).
 */
import { readFileSync, unlinkSync, writeFileSync } from "node:fs"
import { join } from "node:path"
import * as Data from "effect/Data"
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import type * as Scope from "effect/Scope"
import { Database, DatabaseError } from "../database/Database.ts"
import * as Lease from "./Lease.ts"

/** Another run holds the target. */
export class RunLocked extends Data.TaggedError("RunLocked")<{
  readonly target: string
  readonly holder: string
  /** How long this run waited (--wait) before giving up; undefined when it did not wait. */
  readonly waited?: string | undefined
}> {
  override get message(): string {
    return this.waited === undefined
      ? `${this.target} is in use by another run (${this.holder}); wait for it to end, or pass --wait`
      : `${this.target} is still in use by another run (${this.holder}) after waiting ${this.waited}; try again once it has ended`
  }
}

/** Whether and how long to wait for a held lock. */
export interface Wait {
  readonly wait: boolean
  /** Default one hour: a wait always ends. */
  readonly timeout?: Duration.DurationInput
  /** Default 500 ms. */
  readonly interval?: Duration.DurationInput
  /** Ends the wait early when it completes (a stop requested while waiting). */
  readonly cancel?: Effect.Effect<unknown>
}

export const noWait: Wait = { wait: false }

/**
 * Tries `attempt` until it succeeds, or until the wait (if any) runs out: then its last failure,
 * saying how long it waited. The first time it finds the lock held it logs (INFO) that it waits.
 */
const retrying = <A, E, R>(
  attempt: Effect.Effect<A, E | RunLocked, R>,
  wait: Wait,
): Effect.Effect<A, E | RunLocked, R> => {
  if (!wait.wait) return attempt
  const timeout = Duration.decode(wait.timeout ?? Duration.hours(1))
  const deadline = Date.now() + Duration.toMillis(timeout)
  const interval = wait.interval ?? Duration.millis(500)
  const pause =
    wait.cancel === undefined
      ? Effect.as(Effect.sleep(interval), true)
      : Effect.raceFirst(Effect.as(Effect.sleep(interval), true), Effect.as(wait.cancel, false))
  const gaveUp = (error: E | RunLocked) =>
    Effect.fail(
      error instanceof RunLocked
        ? new RunLocked({ target: error.target, holder: error.holder, waited: Duration.format(timeout) })
        : error,
    )
  // Only a held lock is waited for: any other failure (the database's, a directory not writable)
  // is the answer at once.
  const loop = (first: boolean): Effect.Effect<A, E | RunLocked, R> =>
    Effect.catchIf(
      attempt,
      (error): error is RunLocked => error instanceof RunLocked,
      (error) =>
        Date.now() >= deadline
          ? gaveUp(error)
          : Effect.zipRight(
              first && error instanceof RunLocked
                ? Effect.logInfo(
                    `${error.target} is in use by another run (${error.holder}): waiting for it to end (at most ${Duration.format(timeout)})`,
                  )
                : Effect.void,
              Effect.flatMap(pause, (goOn) => (goOn ? loop(false) : Effect.fail(error))),
            ),
    )
  return loop(true)
}

// Two non-negative 32-bit keys: a fixed one for this program, and one from the schema's name.
const programKey = 0x5a1e5
const schemaKey = (schema: string): number => {
  let hash = 0x811c9dc5
  for (let i = 0; i < schema.length; i++) hash = Math.imul(hash ^ schema.charCodeAt(i), 0x01000193)
  return hash & 0x7fffffff
}

const holderOfSchema = (schema: string) =>
  Effect.flatMap(Database, (db) =>
    db.query(
      `SELECT a.pid, a.application_name, a.backend_start::text AS since FROM pg_locks l
       JOIN pg_stat_activity a ON a.pid = l.pid
       WHERE l.locktype = 'advisory' AND l.granted AND l.classid = $1::bigint::oid AND l.objid = $2::bigint::oid AND l.objsubid = 2`,
      [programKey, schemaKey(schema)],
    ),
  ).pipe(
    Effect.map(([row]) =>
      row === undefined
        ? "a session that has just let go"
        : `Postgres backend pid ${row.pid}${row.application_name ? `, application ${JSON.stringify(row.application_name)}` : ""}, connected since ${row.since}`,
    ),
  )

/** Who takes a lock, whether it waits, and what it does with a pipe's lease (Lease.ts); none: ignored. */
export interface Options {
  readonly owner: string
  readonly wait?: Wait
  readonly lease?: Lease.Use
}

/**
 * Holds the schema's advisory lock on the current session until the scope closes. On PGlite (one
 * session, one process: its directory lock already guards it) this does nothing. `owner` names
 * the run for the holder message another run prints (the session's application_name). A run that
 * respects the pipe's lease finds an open one as it would a holder: it lets go of the lock and
 * fails, or waits.
 */
export const schema = (
  name: string,
  options: Options,
): Effect.Effect<void, RunLocked | DatabaseError, Database | Scope.Scope> =>
  Effect.gen(function* () {
    const db = yield* Database
    if (db.kind !== "pg") return
    yield* db.query("SELECT set_config('application_name', $1, false)", [
      `${options.owner} pid ${process.pid}`.slice(-63),
    ])
    const attempt = Effect.gen(function* () {
      const [row] = yield* db.query("SELECT pg_try_advisory_lock($1, $2) AS locked", [
        programKey,
        schemaKey(name),
      ])
      const target = `schema ${JSON.stringify(name)}`
      if (row?.locked !== true) return yield* new RunLocked({ target, holder: yield* holderOfSchema(name) })
      const lease = options.lease === undefined ? undefined : yield* Lease.inSchema(name, options.lease)
      if (lease === undefined) return
      yield* db.query("SELECT pg_advisory_unlock($1, $2)", [programKey, schemaKey(name)])
      return yield* new RunLocked({ target, holder: Lease.describe(lease) })
    })
    // The wait is outside the acquisition (which is uninterruptible): a stop can end it.
    yield* retrying(
      Effect.acquireRelease(attempt, () =>
        Effect.ignore(db.query("SELECT pg_advisory_unlock($1, $2)", [programKey, schemaKey(name)])),
      ),
      options.wait ?? noWait,
    )
  })

/** The lock file's name inside a PGlite directory. */
export const lockFileName = "salesintel.lock"

interface Holder {
  readonly pid: number
  readonly since: string
  readonly command: string
}

const alive = (pid: number): boolean => {
  try {
    process.kill(pid, 0)
    return true
  } catch (error) {
    // EPERM: it exists, it is someone else's.
    return (error as NodeJS.ErrnoException).code === "EPERM"
  }
}

const readHolder = (path: string): { readonly text: string; readonly holder: Holder | undefined } => {
  const text = readFileSync(path, "utf8")
  try {
    const parsed = JSON.parse(text) as Partial<Holder>
    return typeof parsed.pid === "number"
      ? {
          text,
          holder: { pid: parsed.pid, since: String(parsed.since), command: String(parsed.command ?? "") },
        }
      : { text, holder: undefined }
  } catch {
    return { text, holder: undefined }
  }
}

/**
 * One attempt at the directory's lock file: created exclusively, or taken over from a dead holder.
 * A directory it cannot write (read-only, no permission, a full disk) is said as such, naming it.
 */
const tryDirectory = (
  directory: string,
  owner: string,
  lease: Lease.Use | undefined,
): Effect.Effect<void, RunLocked | DatabaseError> =>
  Effect.suspend((): Effect.Effect<void, RunLocked | DatabaseError> => {
    const path = join(directory, lockFileName)
    const mine: Holder = { pid: process.pid, since: new Date().toISOString(), command: owner }
    for (let attempt = 0; attempt < 3; attempt++) {
      try {
        writeFileSync(path, `${JSON.stringify(mine)}\n`, { flag: "wx" })
        return leaseUnderLock(directory, path, lease)
      } catch (error) {
        if ((error as NodeJS.ErrnoException).code !== "EEXIST")
          return Effect.fail(
            new DatabaseError({
              operation: `write the lock file in the PGlite directory ${directory}`,
              cause: error,
            }),
          )
      }
      let current: ReturnType<typeof readHolder>
      try {
        current = readHolder(path)
      } catch {
        continue // removed meanwhile: try again
      }
      const { holder } = current
      if (holder !== undefined && (holder.pid === process.pid || alive(holder.pid)))
        return Effect.fail(
          new RunLocked({
            target: `the PGlite directory ${directory}`,
            holder: `pid ${holder.pid}${holder.command ? ` (${holder.command})` : ""}, since ${holder.since}`,
          }),
        )
      // The holder is dead (or the file is unreadable: a crash while writing it). Remove it only
      // if it is still the file just read, then try again.
      try {
        if (readFileSync(path, "utf8") === current.text) unlinkSync(path)
      } catch {}
    }
    return Effect.fail(new RunLocked({ target: `the PGlite directory ${directory}`, holder: "unknown" }))
  })

/**
 * With the directory's lock file just made: the load consumes the pipe's lease; a run that respects
 * an open one lets go of the lock and fails as if it were held (or waits).
 */
const leaseUnderLock = (
  directory: string,
  lockFile: string,
  lease: Lease.Use | undefined,
): Effect.Effect<void, RunLocked> => {
  if (lease === "consume") Lease.consumeInDirectory(directory)
  const open = lease === "respect" ? Lease.inDirectory(directory) : undefined
  if (open === undefined) return Effect.void
  try {
    unlinkSync(lockFile)
  } catch {}
  return Effect.fail(
    new RunLocked({ target: `the PGlite directory ${directory}`, holder: Lease.describe(open) }),
  )
}

/** Holds the PGlite directory's lock file until the scope closes. The directory must exist. */
export const directory = (
  path: string,
  options: Options,
): Effect.Effect<void, RunLocked | DatabaseError, Scope.Scope> =>
  retrying(
    Effect.acquireRelease(tryDirectory(path, options.owner, options.lease), () =>
      Effect.sync(() => {
        const file = join(path, lockFileName)
        try {
          if (readHolder(file).holder?.pid === process.pid) unlinkSync(file)
        } catch {}
      }),
    ),
    options.wait ?? noWait,
  )
