/**
 * The tables as data: the stream tables and their mappings (Tables), the loader's own tables
 * (Bookkeeping: `_state`, `_sync_runs`), the code lookup tables (Labels).
 */
export * as Bookkeeping from "./Bookkeeping.ts"
export * as Labels from "./Labels.ts"
export * as Tables from "./Tables.ts"
