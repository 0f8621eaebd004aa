/**
 * The load: Airbyte messages into the tables, each STATE committed with the records before it
 * (the module's own exports), where the contacts held were bought from (Provenance), and the
 * batch and its merge the loader is built of (Batch, Merge: what the loader's benchmark times).
 */
export * as Batch from "./Batch.ts"
export * from "./Loader.ts"
export * as Merge from "./Merge.ts"
export * as Provenance from "./Provenance.ts"
