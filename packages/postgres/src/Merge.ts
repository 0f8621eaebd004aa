/**
 * One batch of one stream, in two steps: stage (COPY the rows into session-local temporary
 * tables) and merge (one INSERT ... ON CONFLICT DO UPDATE into the stream's table; for each
 * child table, delete the batch's parents' old children and insert the new ones). Runs inside the
 * loader's open transaction; nothing here commits.
 */
import { Effect } from "effect"
import { Database, type DatabaseError } from "./Database.ts"
import type { Mapped, StreamMapping } from "./Mapping.ts"
import { ident, qualified } from "./Sql.ts"
import type { TableShape } from "./Table.ts"

const stageOf = (table: TableShape): string => `pg_temp.${ident(`_salesintel_stage_${table.name}`)}`
const columnsOf = (table: TableShape): ReadonlyArray<string> =>
  table.columns.map((column) => ident(column.name))

const stagedTables = (mapping: StreamMapping): ReadonlyArray<TableShape> => [
  mapping.table,
  ...mapping.children.map((child) => child.table),
]

/** Creates (once per session) and empties the stream's staging tables. Outside any transaction is fine. */
export const prepare = (mapping: StreamMapping): Effect.Effect<void, DatabaseError, Database> =>
  Effect.flatMap(Database, (db) =>
    db.exec(
      stagedTables(mapping)
        .map(
          (table) =>
            `CREATE TEMP TABLE IF NOT EXISTS ${ident(`_salesintel_stage_${table.name}`)} (${table.columns
              .map((column) => `${ident(column.name)} ${column.type}`)
              .join(", ")});\nTRUNCATE ${stageOf(table)};`,
        )
        .join("\n"),
    ),
  )

const upsertSql = (schema: string, table: TableShape): string => {
  const columns = columnsOf(table)
  const keys = new Set(table.primaryKey)
  const updates = table.columns
    .filter((column) => !keys.has(column.name))
    .map((column) => `${ident(column.name)} = EXCLUDED.${ident(column.name)}`)
  return `INSERT INTO ${qualified(schema, table.name)} (${columns.join(", ")}, "_synced_at")
SELECT ${columns.join(", ")}, now() FROM ${stageOf(table)}
ON CONFLICT (${table.primaryKey.map(ident).join(", ")}) DO UPDATE SET ${[...updates, `"_synced_at" = EXCLUDED."_synced_at"`].join(", ")}`
}

// By an array of keys, not a join with the staging table: the planner would sort and scan the
// whole child table for each batch (quadratic over a sync); `= ANY` probes the primary key index.
const deleteChildrenSql = (schema: string, parent: TableShape, child: TableShape, key: string): string => {
  const type = parent.columns.find((column) => column.name === key)?.type ?? "text"
  return `DELETE FROM ${qualified(schema, child.name)} WHERE ${ident(key)} = ANY($1::${type}[])`
}

const insertSql = (schema: string, table: TableShape): string => {
  const columns = columnsOf(table)
  return `INSERT INTO ${qualified(schema, table.name)} (${columns.join(", ")}, "_synced_at")
SELECT ${columns.join(", ")}, now() FROM ${stageOf(table)}`
}

const copyData = (lines: ReadonlyArray<string>): string => `${lines.join("\n")}\n`

/** Stages and merges one batch: `rows` holds the latest record per key, in arrival order. */
export const mergeBatch = (
  schema: string,
  mapping: StreamMapping,
  rows: ReadonlyArray<Mapped>,
): Effect.Effect<void, DatabaseError, Database> =>
  Effect.gen(function* () {
    if (rows.length === 0) return
    const db = yield* Database
    yield* db.copyIn(stageOf(mapping.table), columnsOf(mapping.table), copyData(rows.map((row) => row.line)))
    yield* db.query(upsertSql(schema, mapping.table))
    for (const [index, child] of mapping.children.entries()) {
      // Replaced, not appended: the parent's list as it is now is the whole truth.
      yield* db.query(deleteChildrenSql(schema, mapping.table, child.table, child.parentKey), [
        rows.map((row) => row.key),
      ])
      const lines = rows.flatMap((row) => row.children[index] ?? [])
      if (lines.length === 0) continue
      yield* db.copyIn(stageOf(child.table), columnsOf(child.table), copyData(lines))
      yield* db.query(insertSql(schema, child.table))
      yield* db.exec(`TRUNCATE ${stageOf(child.table)}`)
    }
    yield* db.exec(`TRUNCATE ${stageOf(mapping.table)}`)
  })
