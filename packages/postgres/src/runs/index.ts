/**
 * Runs: each run's row in `_sync_runs` (the module's own exports), one run at a time per target
 * (Lock), a run's begin and end (Lifecycle), how a signal stops it (StopSignal), its credits written
 * ahead of spending where the database cannot take them at once (CreditsAhead), and the saved
 * states handed to a pipe's source (StateExport).
 */

export * as SavedState from "../load/SavedState.ts"
export * as CreditsAhead from "./CreditsAhead.ts"
export * as Lifecycle from "./RunLifecycle.ts"
export * as Lock from "./RunLock.ts"
export * from "./Runs.ts"
export * as StateExport from "./StateExport.ts"
export * as StopSignal from "./StopSignal.ts"
