/**
 * @salesintel/postgres: the loader as a library (the `salesintel-pg` bin wraps it). Import a
 * module as a namespace: `import { Loader, PgDatabase, State, Runs } from "@salesintel/postgres"`.
 */

export * as Backfill from "./Backfill.ts"
export * as Batch from "./Batch.ts"
export * as Bookkeeping from "./Bookkeeping.ts"
export * as CopyText from "./CopyText.ts"
export * as Database from "./Database.ts"
export * as Ddl from "./Ddl.ts"
export * as Labels from "./Labels.ts"
export * as LoadError from "./LoadError.ts"
export * as Loader from "./Loader.ts"
export * as Location from "./Location.ts"
export * as Mapping from "./Mapping.ts"
export * as Merge from "./Merge.ts"
export * as Nul from "./Nul.ts"
export * as PGliteDatabase from "./PGliteDatabase.ts"
export * as PgDatabase from "./PgDatabase.ts"
export * as RunLifecycle from "./RunLifecycle.ts"
export * as RunLock from "./RunLock.ts"
export * as Runs from "./Runs.ts"
export * as Sql from "./Sql.ts"
export * as State from "./State.ts"
export * as StopSignal from "./StopSignal.ts"
export * as Tables from "./Tables.ts"
export * as Target from "./Target.ts"
export * as Views from "./Views.ts"
