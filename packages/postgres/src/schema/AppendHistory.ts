/**
 * Append's history tables. Airbyte's `append` keeps every record received; the stream's own
 * table is keyed (one row per contact, company, ...; the analysis interface), so it cannot hold
 * two versions of a key. A stream synced with `append` therefore also writes every record, in
 * arrival order and never deduplicated or deleted, to `<table>_history`: the same typed columns
 * and `_raw`, numbered by `_history_id`, stamped with the load transaction's `_synced_at`.
 * The keyed table still shows each key's latest version, so the views work in every mode.
 */
import { type ColumnShape, syncedAt, type TableShape } from "./Table.ts"

const historyId: ColumnShape = {
  name: "_history_id",
  type: "bigint",
  identity: true,
  notNull: true,
  doc: "the order the records were loaded in",
}

/** The history table of a stream's (parent) table. */
export const historyOf = (table: TableShape): TableShape => ({
  name: `${table.name}_history`,
  doc: `every ${table.name} record loaded by an append sync, in order (append keeps every version)`,
  primaryKey: [historyId.name],
  columns: [
    historyId,
    // Key columns keep NOT NULL; the rest are nullable as in the keyed table.
    ...table.columns.map(({ name, type, notNull, doc }) => ({
      name,
      type,
      doc,
      ...(notNull ? { notNull } : {}),
    })),
    // COPY writes the record's columns only; this takes the transaction's time, like the merge's now().
    { ...syncedAt, default: "now()" },
  ],
})
