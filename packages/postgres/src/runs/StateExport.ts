/**
 * `salesintel-pg state`: the state a pipe's source reads from, handed out under the target's lock
 * (so it is what the last run committed, never a run's half) and with the pipe's lease (Lease.ts),
 * so that nothing else buys from the same view of the target until the pipe's load begins.
 */
import type { StreamState } from "@salesintel/airbyte"
import * as Effect from "effect/Effect"
import type { Database, DatabaseError } from "../database/Database.ts"
import * as Ledger from "../ledger/Ledger.ts"
import * as SavedState from "../load/SavedState.ts"
import * as Lease from "./Lease.ts"
import * as RunLock from "./RunLock.ts"

export interface ExportOptions {
  readonly schema: string
  /** The embedded database's directory (its lease is a file there); undefined for a server. */
  readonly pgliteDirectory?: string | undefined
  readonly wait: RunLock.Wait
  /** How long the lease holds if no load begins; 0: none (a look at the state). */
  readonly leaseMinutes: number
}

/** Who an export is, to the runs that find its lock or its lease. */
export const owner = "salesintel-pg state"

/** The state as the source's --state takes it, the sets a sync keeps in the ledger written back in. */
export const exportState = (
  options: ExportOptions,
): Effect.Effect<
  ReadonlyArray<StreamState.SavedStreamState>,
  DatabaseError | RunLock.RunLocked | SavedState.InvalidSavedState,
  Database
> =>
  Effect.scoped(
    Effect.gen(function* () {
      // Under the lock no run is under way (PGlite's directory lock is the Target's, taken the same way).
      yield* RunLock.schema(options.schema, { owner, wait: options.wait, lease: "respect" })
      const saved = yield* SavedState.read(options.schema)
      const entries = yield* Ledger.exported(options.schema, saved)
      if (options.leaseMinutes > 0) yield* Lease.take(options, options.leaseMinutes, owner)
      return entries
    }),
  )
