/**
 * The keys the records a schema holds give another stream (Streams.derivedKeys), each once: what a
 * substream of `salesintel sync` asks as it begins (the company domains of every contact held, for
 * `companies.from_contacts`). Each key is the SQL twin of its function over records, reading the
 * column the table keeps it in.
 */
import type { Streams } from "@salesintel/airbyte"
import * as Effect from "effect/Effect"
import { Database, type DatabaseError } from "../database/Database.ts"
import { qualified } from "../database/Sql.ts"

/**
 * `company_domain`: the first of the contact's company domains (the contacts table's
 * `company_domains`, the flat field or else the nested block's), trimmed and lower-cased.
 */
const expressions: {
  readonly [Name in Streams.DerivedKey["key"]]: { readonly table: string; readonly sql: string }
} = {
  company_domain: { table: "contacts", sql: "lower(btrim(company_domains[1]))" },
}

/** Every distinct `key` the schema's records give; none where the table is not there yet. */
export const keys = (
  schema: string,
  key: Streams.DerivedKey,
): Effect.Effect<ReadonlyArray<string>, DatabaseError, Database> =>
  Effect.flatMap(Database, (db) => {
    const { table, sql } = expressions[key.key]
    const name = qualified(schema, table)
    return Effect.flatMap(db.query("SELECT to_regclass($1) IS NOT NULL AS present", [name]), ([row]) =>
      row?.present !== true
        ? Effect.succeed([])
        : Effect.map(db.query(`SELECT DISTINCT ${sql} AS key FROM ${name} WHERE ${sql} <> ''`), (rows) =>
            rows.map((found) => String(found.key)),
          ),
    )
  })
