/**
 * @salesintel/postgres: the loader as a library (the `salesintel-pg` bin wraps it), one namespace
 * per concern: `import { Database, Loader, Runs } from "@salesintel/postgres"`.
 * - Database, Sql, PgDatabase, PGliteDatabase: the connection, a server or embedded PGlite
 *   (database/); Target: which one a command works on.
 * - Main: the `salesintel-pg` command; Loader: a load of Airbyte messages and the states it
 *   commits (load/, over the batch and its merge: merge/).
 * - Runs: runs, their lock and lifecycle, stop signals, credits written ahead (runs/).
 * - Ledger: `_bought` and what is read from the tables as held; Forget: erasure (ledger/).
 * - Ddl: the schema made current (migrate/); Schema: the tables as data (schema/).
 * - History: changes, observations, the views and the market (history/).
 */
export * as Database from "./database/Database.ts"
export * as PGliteDatabase from "./database/PGliteDatabase.ts"
export * as PgDatabase from "./database/PgDatabase.ts"
export * as Sql from "./database/Sql.ts"
export * as History from "./history/index.ts"
export * as Forget from "./ledger/Forget.ts"
export * as Ledger from "./ledger/index.ts"
export * as Loader from "./load/index.ts"
export * as Main from "./Main.ts"
export * as Ddl from "./migrate/Ddl.ts"
export * as Runs from "./runs/index.ts"
export * as Schema from "./schema/index.ts"
export * as Target from "./Target.ts"
