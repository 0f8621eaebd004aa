/**
 * The load: Airbyte messages into the tables, each STATE committed with the records before it
 * (the module's own exports), and where the contacts held were bought from (Provenance).
 */
export * from "./Loader.ts"
export * as Provenance from "./Provenance.ts"
