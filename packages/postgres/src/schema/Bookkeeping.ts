/**
 * The loader's own tables: `_state` (each stream's latest committed state) and `_sync_runs` (one
 * row per run). Described like the data tables so the same DDL generator creates and migrates them.
 */
import type { TableShape } from "./Table.ts"

export const stateTable: TableShape = {
  name: "_state",
  doc: "one row per stream: the latest STATE the loader committed with its data",
  primaryKey: ["stream"],
  columns: [
    { name: "stream", type: "text", notNull: true, doc: "stream name" },
    { name: "state", type: "jsonb", doc: "the stream_state of the stream's latest committed STATE message" },
    {
      name: "updated_at",
      type: "timestamptz",
      notNull: true,
      default: "now()",
      doc: "when it was committed",
    },
    {
      name: "overwrite_since",
      type: "timestamptz",
      doc: "set while an overwrite load of the stream is unfinished: rows older than this go when it finishes",
    },
    {
      name: "as_of",
      type: "timestamptz",
      doc: "when the input that wrote the state was made: the latest emitted_at of its records and traces up to the STATE (null when it had none); a STATE from an older input never replaces this one",
    },
  ],
}

export const runsTable: TableShape = {
  name: "_sync_runs",
  doc: "one row per sync or load run",
  primaryKey: ["id"],
  columns: [
    { name: "id", type: "bigint", notNull: true, identity: true, doc: "run id" },
    { name: "started_at", type: "timestamptz", notNull: true, default: "now()", doc: "when the run started" },
    { name: "finished_at", type: "timestamptz", doc: "null while running (or if the process died)" },
    {
      name: "status",
      type: "text",
      notNull: true,
      default: "'running'",
      doc: "running, succeeded, stopped_at_budget (ended at its credit budget; the rest is due next run), failed, interrupted (a signal; what committed stays) or abandoned (its process died)",
    },
    {
      name: "streams",
      type: "jsonb",
      doc: "per stream: records and credits committed so far, updated with each commit",
    },
    { name: "error", type: "text", doc: "why the run failed" },
    {
      name: "credits",
      type: "bigint",
      doc: "credits the run spent (a sync; null for a load): while it runs, a mark written ahead of its spending in blocks, at least what it may have been charged; at its end what it spent. A run killed (abandoned) keeps its last mark: at most one block more than it was charged",
    },
    {
      name: "credits_uncertain",
      type: "integer",
      doc: "credits possibly charged without delivery (requests that timed out or lost their connection)",
    },
  ],
}

/**
 * The ledger of what was bought: one row per stream and key (a contact's match_id), with the day
 * it was last bought. Written by the loader in the same transaction as the records it covers
 * (Ledger.ts), so what committed is exactly what is known to be bought; `salesintel sync` keeps a
 * stream's bought set here instead of in its state (Streams.ledgers).
 */
export const boughtTable: TableShape = {
  name: "_bought",
  doc: "one row per stream and key bought (a contact's match_id): the ledger incremental syncs diff against",
  primaryKey: ["stream", "key"],
  columns: [
    { name: "stream", type: "text", notNull: true, doc: "stream name" },
    { name: "key", type: "text", notNull: true, doc: "the key bought (contacts: match_id)" },
    {
      name: "day",
      type: "integer",
      notNull: true,
      doc: "the day it was last bought, in days since 1970-01-01 (UTC): what refresh_after_days counts from",
    },
  ],
}

export const schemaVersionTable: TableShape = {
  name: "_schema_version",
  doc: "the schema versions applied (Ddl.ts migrations)",
  primaryKey: ["version"],
  columns: [
    { name: "version", type: "integer", notNull: true, doc: "the schema version a migration brought" },
    { name: "applied_at", type: "timestamptz", notNull: true, default: "now()", doc: "when it was applied" },
    { name: "description", type: "text", doc: "what the migration changed" },
  ],
}
