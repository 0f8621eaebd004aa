/**
 * The load: Airbyte messages into the tables, each STATE committed with the records before it
 * (the module's own exports), the streams' saved states it commits (SavedState), where the
 * contacts held were bought from (Provenance), and the batch and its merge it is built of (Batch,
 * Merge: what the loader's benchmark times).
 */
export * as Batch from "../merge/Batch.ts"
export * as Merge from "../merge/Merge.ts"
export * from "./Loader.ts"
export * as Provenance from "./Provenance.ts"
export * as SavedState from "./SavedState.ts"
