/**
 * One run's lifecycle, shared by `salesintel sync` and `salesintel-pg load`: take the target's
 * lock, bring the schema up to date, mark runs left `running` by dead processes `abandoned` (safe:
 * no live run can hold the lock), make the ledger the index of the tables again where it is not
 * (Ledger.reconcile: emptied or edited by hand, older than the rows), record the new run; at the end record how it ended, without
 * letting a failed bookkeeping write hide the error that ended the run.
 */
import * as Deferred from "effect/Deferred"
import * as Effect from "effect/Effect"
import type * as Layer from "effect/Layer"
import type * as Scope from "effect/Scope"
import type { Database, DatabaseError } from "../database/Database.ts"
import * as Ledger from "../ledger/Ledger.ts"
import * as Ddl from "../migrate/Ddl.ts"
import * as RunLock from "./RunLock.ts"
import * as Runs from "./Runs.ts"

export interface Begun {
  readonly runId: Runs.RunId
  /** Runs found `running` and marked abandoned. */
  readonly abandoned: ReadonlyArray<Runs.RunId>
  /** What the ledger lacked or held beyond its tables, mended before the run (said to the user). */
  readonly reconciled: ReadonlyArray<Ledger.Reconciled>
}

/** The lock options with a wait that a stop (a signal while waiting) ends. */
export const stoppable = <A>(lock: RunLock.Options, stop: Deferred.Deferred<A>): RunLock.Options =>
  lock.wait === undefined ? lock : { ...lock, wait: { ...lock.wait, cancel: Deferred.await(stop) } }

/** Holds the schema's lock until the scope closes (PGlite's directory lock is the Target's). */
export const begin = (
  schema: string,
  lock: RunLock.Options,
  startedAt?: Date,
): Effect.Effect<Begun, DatabaseError | Ddl.SchemaTooNew | RunLock.RunLocked, Database | Scope.Scope> =>
  Effect.gen(function* () {
    yield* RunLock.schema(schema, lock)
    yield* Ddl.ensure(schema)
    const abandoned = yield* Runs.abandon(schema)
    const reconciled = (yield* Ledger.reconcileAll(schema)).filter(Ledger.changedAny)
    const runId = yield* Runs.start(schema, startedAt)
    return { runId, abandoned, reconciled }
  })

/**
 * Records the run's end. When the run already failed on its own error (`alreadyFailed`), a failed
 * bookkeeping write is tried once more on a new connection (`reconnect`: the run's own may be what
 * was lost), then ignored: the caller reports the run's error, which is the news (a dropped
 * connection fails both: the UPDATE's failure is only its echo).
 */
export const end = (
  schema: string,
  runId: Runs.RunId,
  finish: Runs.Finish,
  alreadyFailed: boolean,
  reconnect?: Layer.Layer<Database, DatabaseError>,
): Effect.Effect<void, DatabaseError, Database> => {
  if (!alreadyFailed) return Runs.finish(schema, runId, finish)
  const again =
    reconnect === undefined ? Effect.void : Effect.provide(Runs.finish(schema, runId, finish), reconnect)
  return Effect.ignore(Effect.catchAll(Runs.finish(schema, runId, finish), () => again))
}
