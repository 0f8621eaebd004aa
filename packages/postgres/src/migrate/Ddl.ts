/**
 * Creates and migrates the schema, idempotently. Tables are generated from their descriptions
 * (Tables.ts, Bookkeeping.ts): CREATE TABLE IF NOT EXISTS, then ADD COLUMN IF NOT EXISTS for
 * every column, so a newer version's columns are added to existing tables without touching their
 * rows. Changes that are not additive go into `migrations`, applied once each and recorded in
 * `_schema_version`; a database migrated by a newer version than this one is refused.
 */
import * as Data from "effect/Data"
import * as Effect from "effect/Effect"
import { Database, type DatabaseError, transaction } from "../database/Database.ts"
import { ident, literal, qualified } from "../database/Sql.ts"
import * as ChangeTables from "../history/ChangeTables.ts"
import * as LogDerived from "../history/LogDerived.ts"
import * as Market from "../history/Market.ts"
import * as Observations from "../history/Observations.ts"
import { views } from "../history/Views.ts"
import * as KnownDone from "../ledger/KnownDone.ts"
import * as Rejected from "../ledger/Rejected.ts"
import * as Suppressions from "../ledger/Suppressions.ts"
import { historyOf } from "../schema/AppendHistory.ts"
import { boughtTable, runsTable, schemaVersionTable, stateTable } from "../schema/Bookkeeping.ts"
import * as Labels from "../schema/Labels.ts"
import { type ColumnShape, syncedAt, type TableShape } from "../schema/Table.ts"
import { allMappings, mappings } from "../schema/Tables.ts"
import * as Backfill from "./Backfill.ts"

export class SchemaTooNew extends Data.TaggedError("SchemaTooNew")<{
  readonly schema: string
  readonly found: number
  readonly supported: number
}> {
  override get message(): string {
    return `schema ${this.schema} is at version ${this.found}, newer than this loader supports (${this.supported}): upgrade @salesintel/postgres`
  }
}

interface Migration {
  readonly version: number
  readonly description: string
  /** Statements beyond the generated, additive DDL. */
  readonly sql: (schema: string) => string
  /** Work beyond SQL text, after `sql` (re-deriving new columns from `_raw`). */
  readonly run?: (schema: string) => Effect.Effect<void, DatabaseError, Database>
}

export const migrations: ReadonlyArray<Migration> = [
  { version: 1, description: "stream tables, _state, _sync_runs and views", sql: () => "" },
  // The generated DDL adds the columns and tables; this fills them for the contacts and companies
  // already loaded, from their `_raw`. Recorded so that an older loader, which would leave the new
  // columns and tables unfilled, refuses the schema.
  {
    version: 2,
    description:
      "typed company size/revenue and location parts on contacts, contact_social_profiles, company_sites, label tables, comments",
    sql: () => "",
    run: (schema) =>
      Effect.forEach(
        [mappings.contacts, mappings.companies],
        (mapping) => Backfill.backfill(schema, mapping),
        {
          discard: true,
        },
      ),
  },
  // A `_state` row holds a stream's state, or marks an overwrite under way (overwrite_since). One
  // with neither was left by an overwrite of a stream that never checkpointed, and means "no
  // state"; the loader now deletes such rows, and a NULL state without an overwrite is refused as
  // a state that does not decode (State.read). These are the old ones.
  {
    version: 3,
    description: "_state rows hold a state or an unfinished overwrite: rows with neither removed",
    sql: (schema) =>
      `DELETE FROM ${qualified(schema, stateTable.name)} WHERE state IS NULL AND overwrite_since IS NULL`,
  },
  // The generated DDL creates the change tables (ChangeTables.ts). Recorded so that an older loader,
  // which would overwrite observations without keeping what changed, refuses the schema.
  {
    version: 4,
    description: "technology_changes and job_changes, filled by every load from then on",
    sql: () => "",
  },
  // The generated DDL creates the ledger (Ledger.ts). Recorded so that an older loader, which
  // would commit contacts without their ledger rows, refuses the schema: a sync would then re-buy.
  {
    version: 5,
    description: "_bought, the ledger of keys bought, written with the records it covers",
    sql: () => "",
  },
  // The generated DDL creates the observation tables (Observations.ts); the companies held get one
  // observation each, as their rows say. Recorded so that an older loader, which would buy
  // observations without keeping them, refuses the schema.
  {
    version: 6,
    description: "company_observations and technology_observations, seeded from the companies held",
    sql: (schema) => Observations.seedSql(schema),
  },
  // The generated DDL creates `_rejected` (Rejected.ts). Recorded so that an older loader, which
  // would refuse the records of the `_rejected` stream, refuses the schema instead.
  {
    version: 7,
    description: "_rejected: records a page carried that did not decode, kept whole with the reason",
    sql: () => "",
  },
  // The generated DDL adds company_sites.fetched_at and _state.as_of, which newer-wins reads
  // (Merge.ts, SavedState.ts); a site or state held without one is compared by when it was loaded, or
  // replaced as before. Recorded so that an older loader, which would let an older file loaded
  // after a newer one take rows and states back, refuses the schema.
  {
    version: 8,
    description:
      "newer wins: company_sites.fetched_at and _state.as_of; an older record or state never replaces a newer one",
    sql: () => "",
  },
  // A rejected record with its key is held like a row until stale (Rejected.ts, Ledger.ts): looked
  // up by this index. Recorded so that an older loader, whose syncs would buy them again every
  // run, refuses the schema.
  {
    version: 9,
    description: "_rejected indexed by (stream, key): a contact bought and rejected is held until stale",
    sql: (schema) => Rejected.indexSql(schema),
  },
  // The generated DDL creates `_suppressed` and `_suppression_key` (Suppressions.ts). Recorded so
  // that an older loader, whose syncs would buy the people forgotten again, refuses the schema.
  {
    version: 10,
    description: "_suppressed and _suppression_key: the people and companies forgotten, as keyed hashes",
    sql: () => "",
  },
  // The market views join `market` (Market.ts); created here, not generated, for its checks and
  // because it has no key. Recorded so that an older loader, whose views would not know it, and
  // whose syncs would not write the config's market into it, refuses the schema.
  {
    version: 11,
    description:
      "market: the team's own products, its rivals' and its complements', which the market views join",
    sql: (schema) => Market.createSql(schema),
  },
  // The generated DDL creates the tables the loader keeps with the observation log (LogDerived.ts);
  // this fills them from the log held and indexes products by time. Recorded so that an older
  // loader, which would write observations without them (the views would then miss its loads),
  // refuses the schema.
  {
    version: 12,
    description:
      "technology_log_changes, technology_sightings, technology_in_use and the monthly usage counts, kept with the observation log and read by its views",
    sql: (schema) => LogDerived.fillSql(schema),
  },
  // The generated DDL creates `_known_done` (KnownDone.ts). Recorded so that an older loader, which
  // would refuse the records of the `_known_done` stream, refuses the schema instead.
  {
    version: 13,
    description:
      "_known_done: the known contacts' identities looked up under salesintel sync, kept out of the state",
    sql: () => "",
  },
]

export const currentVersion = Math.max(...migrations.map((migration) => migration.version))

/** The data tables (parents before their children), then the bookkeeping tables. */
export const tables: ReadonlyArray<TableShape> = [
  ...allMappings.flatMap((mapping) => [
    { ...mapping.table, columns: [...mapping.table.columns, syncedAt] },
    historyOf(mapping.table),
    ...mapping.children.map((child) => ({ ...child.table, columns: [...child.table.columns, syncedAt] })),
  ]),
  ...ChangeTables.tables,
  ...Observations.tables,
  ...LogDerived.tables,
  ...Labels.all.map((lookup) => lookup.table),
  stateTable,
  runsTable,
  boughtTable,
  Rejected.rejectedTable,
  KnownDone.knownDoneTable,
  Suppressions.suppressedTable,
  Suppressions.keyTable,
]

const columnSql = (column: ColumnShape): string =>
  [
    ident(column.name),
    column.type,
    column.identity === true ? "GENERATED BY DEFAULT AS IDENTITY" : "",
    column.default === undefined ? "" : `DEFAULT ${column.default}`,
    column.notNull === true ? "NOT NULL" : "",
  ]
    .filter((part) => part !== "")
    .join(" ")

const list = (names: ReadonlyArray<string>): string => names.map(ident).join(", ")

export const createTableSql = (schema: string, table: TableShape): string => {
  const parts = [...table.columns.map(columnSql), `PRIMARY KEY (${list(table.primaryKey)})`]
  const create = `CREATE TABLE IF NOT EXISTS ${qualified(schema, table.name)} (\n  ${parts.join(",\n  ")}\n);`
  // Additive migration: columns a newer description has and an older table lacks.
  const additions = table.columns
    .map(
      (column) =>
        `ALTER TABLE ${qualified(schema, table.name)} ADD COLUMN IF NOT EXISTS ${columnSql({ ...column, notNull: false })};`,
    )
    .join("\n")
  // Child tables have no foreign key to their parent (its per-row checks cost more than the rest
  // of the child insert): the loader replaces a parent's children in the same transaction, and
  // deletes them with it (Loader.ts). Tables made by an earlier version lose the constraint here.
  const dropForeignKey =
    table.parent === undefined
      ? ""
      : `\nALTER TABLE ${qualified(schema, table.name)} DROP CONSTRAINT IF EXISTS ${ident(`${table.name}_${table.parent.key}_fkey`)};`
  return `${create}\n${additions}${dropForeignKey}`
}

const viewsSql = (schema: string): string =>
  views
    .map((view) => {
      const name = qualified(schema, view.name)
      const columns = Object.entries(view.columns ?? {}).map(
        ([column, doc]) => `COMMENT ON COLUMN ${name}.${ident(column)} IS ${literal(doc)};`,
      )
      return [
        `DROP VIEW IF EXISTS ${name};`,
        `CREATE VIEW ${name} AS\n${view.sql(schema)};`,
        `COMMENT ON VIEW ${name} IS ${literal(view.doc)};`,
        ...columns,
      ].join("\n")
    })
    .join("\n")

/** The lookup tables' rows as this version knows them: written, and codes it does not know removed. */
export const labelsSql = (schema: string): string =>
  Labels.all
    .map(({ table, rows }) => {
      const name = qualified(schema, table.name)
      const columns = table.columns.map((column) => ident(column.name))
      const values = rows.map(
        (row) =>
          `(${row.map((value) => (typeof value === "number" ? String(value) : literal(value))).join(", ")})`,
      )
      const updates = columns.slice(1).map((column) => `${column} = EXCLUDED.${column}`)
      const codes = rows.map((row) => literal(String(row[0]))).join(", ")
      return `INSERT INTO ${name} (${columns.join(", ")}) VALUES ${values.join(", ")}
ON CONFLICT (${ident(table.primaryKey[0] ?? "code")}) DO UPDATE SET ${updates.join(", ")};
DELETE FROM ${name} WHERE ${columns[0]} NOT IN (${codes});`
    })
    .join("\n")

/** COMMENT ON every table and column, from the descriptions' docs (what \\d+ and catalogs show). */
export const commentsSql = (schema: string, described: ReadonlyArray<TableShape>): string =>
  described
    .flatMap((table) => [
      `COMMENT ON TABLE ${qualified(schema, table.name)} IS ${literal(table.doc)};`,
      ...table.columns.map(
        (column) =>
          `COMMENT ON COLUMN ${qualified(schema, table.name)}.${ident(column.name)} IS ${literal(column.doc)};`,
      ),
    ])
    .join("\n")

/** Creates or migrates `schema` to this version's tables and views. Safe to run concurrently. */
export const ensure = (schema: string): Effect.Effect<void, DatabaseError | SchemaTooNew, Database> =>
  transaction(
    Effect.gen(function* () {
      const db = yield* Database
      // Serialises concurrent ensures of the same schema (CREATE ... IF NOT EXISTS can race).
      yield* db.query("SELECT pg_advisory_xact_lock(hashtext($1))", [`salesintel-ddl:${schema}`])
      yield* db.exec(
        `CREATE SCHEMA IF NOT EXISTS ${ident(schema)};\n${createTableSql(schema, schemaVersionTable)}`,
      )
      const [row] = yield* db.query(
        `SELECT coalesce(max(version), 0) AS version FROM ${qualified(schema, schemaVersionTable.name)}`,
      )
      const found = Number(row?.version ?? 0)
      if (found > currentVersion) return yield* new SchemaTooNew({ schema, found, supported: currentVersion })
      yield* db.exec(tables.map((table) => createTableSql(schema, table)).join("\n"))
      for (const migration of migrations.filter((candidate) => candidate.version > found)) {
        const sql = migration.sql(schema)
        if (sql !== "") yield* db.exec(sql)
        if (migration.run !== undefined) yield* migration.run(schema)
        yield* db.query(
          `INSERT INTO ${qualified(schema, schemaVersionTable.name)} (version, description) VALUES ($1, $2)`,
          [migration.version, migration.description],
        )
      }
      yield* db.exec(
        `${labelsSql(schema)}\n${commentsSql(schema, [...tables, schemaVersionTable])}\n${viewsSql(schema)}`,
      )
    }),
  )
