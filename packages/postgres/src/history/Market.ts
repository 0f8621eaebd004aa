/**
 * The user's market: which products (or vendors) are the team's own, its rivals' and its
 * complements', as a table the market views join (MarketViews.ts). `salesintel sync` replaces its
 * rows with the config's `market` section when the config has one, and leaves them alone when it
 * has none, so a market changed in SQL holds until a config declares another.
 */
import * as Effect from "effect/Effect"
import { Database, type DatabaseError, transaction } from "../database/Database.ts"
import { literal, qualified } from "../database/Sql.ts"

export const marketTableName = "market"

export const roles = ["ours", "rival", "complement"] as const
export type Role = (typeof roles)[number]

/** One entry: a product (its vendor optional), or a whole vendor (product null). */
export interface Entry {
  readonly role: Role
  readonly product: string | null
  readonly vendor: string | null
}

const columnDocs: Readonly<Record<string, string>> = {
  role: "ours, rival or complement",
  product:
    "a product as the taxonomy names it (taxonomy_products.product); null: every product of the vendor",
  vendor: "the product's vendor, or with product null the vendor whose every product has this role",
}

/**
 * The table (migration 11). Not generated from a TableShape: it has no key (an entry may be
 * listed twice without harm) and its checks say what an entry is.
 */
export const createSql = (schema: string): string => {
  const table = qualified(schema, marketTableName)
  return [
    `CREATE TABLE IF NOT EXISTS ${table} (
  role text NOT NULL CHECK (role IN (${roles.map(literal).join(", ")})),
  product text NULL,
  vendor text NULL,
  CHECK (product IS NOT NULL OR vendor IS NOT NULL)
);`,
    `COMMENT ON TABLE ${table} IS ${literal("the team's market: its own products, its rivals' and its complements' (salesintel sync writes it from the config's market section; change it in SQL freely). An entry matches a product by name (and vendor when it names one), or every product of its vendor when product is null")};`,
    ...Object.entries(columnDocs).map(
      ([column, doc]) => `COMMENT ON COLUMN ${table}.${column} IS ${literal(doc)};`,
    ),
  ].join("\n")
}

/**
 * Whether market entry `m` matches the product row `t` (columns product and vendor): by product
 * (and vendor when the entry names one), or by vendor when the entry names no product.
 */
export const matches = (m: string, t: string): string =>
  `((${m}.product IS NOT NULL AND ${m}.product = ${t}.product AND (${m}.vendor IS NULL OR ${m}.vendor = ${t}.vendor)) OR (${m}.product IS NULL AND ${m}.vendor = ${t}.vendor))`

/**
 * Whether the product row `t` names a product or vendor the market lists (for `role`, or any
 * role): the names are read once per query (hashed subplans: over 2,000,000 rows 0.38 s, where
 * arrays searched row by row took 0.50), so this cheap test can go before the exact match
 * (`matches`), which is a subquery per row or a join.
 */
export const mayMatch = (market: string, t: string, role?: Role): string => {
  const ofRole = role === undefined ? "" : `role = '${role}' AND `
  return `(${t}.product IN (SELECT product FROM ${market} WHERE ${ofRole}product IS NOT NULL)
    OR ${t}.vendor IN (SELECT vendor FROM ${market} WHERE ${ofRole}product IS NULL))`
}

/**
 * Whether the product row `t` is one of `role`'s in the market table `market`. The names are
 * checked first, so the exact match runs only for the few rows that pass: over hundreds of
 * thousands of rows, it alone costs a quarter of a second.
 */
export const hasRole = (market: string, role: Role, t: string): string =>
  `${mayMatch(market, t, role)}
  AND EXISTS (SELECT 1 FROM ${market} m WHERE m.role = '${role}' AND ${matches("m", t)})`

/** Replaces the market held with `entries`, in one transaction. */
export const replace = (
  schema: string,
  entries: ReadonlyArray<Entry>,
): Effect.Effect<void, DatabaseError, Database> =>
  transaction(
    Effect.gen(function* () {
      const db = yield* Database
      const table = qualified(schema, marketTableName)
      yield* db.query(`DELETE FROM ${table}`)
      for (const entry of entries)
        yield* db.query(`INSERT INTO ${table} (role, product, vendor) VALUES ($1, $2, $3)`, [
          entry.role,
          entry.product,
          entry.vendor,
        ])
    }),
  )

/**
 * The products and vendors the target's taxonomy holds (taxonomy_products), what a market entry
 * is checked against; empty when the target holds no taxonomy.
 */
export const taxonomyNames = (
  schema: string,
): Effect.Effect<
  { readonly products: ReadonlyArray<string>; readonly vendors: ReadonlyArray<string> },
  DatabaseError,
  Database
> =>
  Effect.gen(function* () {
    const db = yield* Database
    const rows = yield* db.query(
      `SELECT 'product' AS kind, product AS name FROM ${qualified(schema, "taxonomy_products")}
       UNION SELECT 'vendor', vendor FROM ${qualified(schema, "taxonomy_products")} WHERE vendor IS NOT NULL`,
    )
    const of = (kind: string) => rows.filter((row) => row.kind === kind).map((row) => String(row.name))
    return { products: of("product"), vendors: of("vendor") }
  })
