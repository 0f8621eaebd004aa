/**
 * The numbers of the report's "Your market" sections, from the market the user declared (the
 * `market` table: products or vendors as ours, rivals' or complements) and the views over it
 * (packages/postgres): the share of the companies observed using ours and the rivals' per month
 * (market_share_trend), the accounts to act on (displacement_opportunities) and the products
 * most often beside ours (product_affinity). A schema a loader without the market synced, or a
 * market with nothing declared, has nothing to show, not an error: the section says how to
 * declare one (as IntelligenceData.ts does for a schema without the observations).
 */
import { Database, History, Sql } from "@salesintel/postgres"
import * as Effect from "effect/Effect"
import { hasRelations, text } from "../shared/Queried.ts"

/** The table and views the sections read: all are there once a loader with the market has run. */
export const marketTable = History.Market.marketTableName
export const shareView = History.MarketTrends.shareTrend.name
export const opportunitiesView = History.MarketViews.opportunities.name
export const affinityView = History.MarketTrends.affinity.name
export const requiredRelations: ReadonlyArray<string> = [
  marketTable,
  shareView,
  opportunitiesView,
  affinityView,
]

export interface SharePoint {
  /** The calendar month (UTC) as YYYY-MM-DD, its first day. */
  readonly month: string
  /** "ours", "rival" or "complement". */
  readonly role: string
  readonly companiesObserved: number
  readonly companiesUsing: number
  readonly share: number
}

export interface Opportunity {
  /** "dropped a rival", "adopted a complement" or "champion joined a rival account". */
  readonly reason: string
  readonly companyName: string | null
  readonly companyDomain: string | null
  readonly companySizeRange: string | null
  readonly product: string | null
  readonly vendor: string | null
  readonly role: string | null
  /** When it was observed (UTC), as YYYY-MM-DD. */
  readonly happenedOn: string | null
  readonly evidence: string | null
  readonly contactName: string | null
}

/** A product seen beside one of ours: companies using both, each, and the lift over chance. */
export interface Affinity {
  readonly ourProduct: string | null
  readonly ourVendor: string | null
  readonly product: string | null
  readonly vendor: string | null
  readonly companiesBoth: number
  readonly companiesOurs: number
  readonly companiesOther: number
  readonly companiesObserved: number
  /** How many times more often than chance the two are used together (null: not computable). */
  readonly lift: number | null
}

/** Rows shown (the first `limit`) and how many there are in all, so a cut list says so. */
export interface Listed<Row> {
  readonly rows: ReadonlyArray<Row>
  readonly total: number
}

export type MarketReport =
  | { readonly _tag: "Undeclared"; readonly loaded: boolean }
  | {
      readonly _tag: "Declared"
      /** Per month and role, oldest first. */
      readonly shares: ReadonlyArray<SharePoint>
      readonly opportunities: Listed<Opportunity>
      readonly affinity: Listed<Affinity>
    }

/** A schema whose loader has no market (loaded: false) or whose market is empty (loaded: true). */
export const undeclared = (loaded: boolean): MarketReport => ({ _tag: "Undeclared", loaded })

const numberOr = (value: unknown): number | null =>
  value === null || value === undefined ? null : Number(value)

export const shares = (schema: string) =>
  Effect.flatMap(Database.Database, (db) =>
    db.query(
      `SELECT month::text AS month, role, companies_observed::int AS observed, companies_using::int AS using,
         share::float8 AS share
       FROM ${Sql.qualified(schema, shareView)} ORDER BY month, role`,
    ),
  ).pipe(
    Effect.map((rows) =>
      rows.map(
        (row): SharePoint => ({
          month: String(row.month).slice(0, 10),
          role: String(row.role),
          companiesObserved: Number(row.observed),
          companiesUsing: Number(row.using),
          share: Number(row.share ?? 0),
        }),
      ),
    ),
  )

/** The `limit` latest opportunities (then by company and product), and how many there are. */
export const opportunities = (schema: string, limit: number) =>
  Effect.gen(function* () {
    const db = yield* Database.Database
    const view = Sql.qualified(schema, opportunitiesView)
    const [count] = yield* db.query(`SELECT count(*)::int AS n FROM ${view}`)
    const rows = yield* db.query(
      `SELECT reason, company_name, company_domain, company_size_range, product, vendor, role,
         to_char(happened_at AT TIME ZONE 'UTC', 'YYYY-MM-DD') AS happened_on, evidence, contact_name
       FROM ${view}
       ORDER BY happened_at DESC NULLS LAST, company_name NULLS LAST, product NULLS LAST, reason LIMIT $1`,
      [limit],
    )
    return {
      total: Number(count?.n ?? 0),
      rows: rows.map(
        (row): Opportunity => ({
          reason: String(row.reason),
          companyName: text(row.company_name),
          companyDomain: text(row.company_domain),
          companySizeRange: text(row.company_size_range),
          product: text(row.product),
          vendor: text(row.vendor),
          role: text(row.role),
          happenedOn: text(row.happened_on),
          evidence: text(row.evidence),
          contactName: text(row.contact_name),
        }),
      ),
    } satisfies Listed<Opportunity>
  })

/**
 * SQL true when (product, vendor) is one of ours: a market row naming the product, or naming
 * only the vendor (every product of it is ours).
 */
const isOurs = (schema: string, product: string, vendor: string): string =>
  `EXISTS (SELECT 1 FROM ${Sql.qualified(schema, marketTable)} m WHERE m.role = 'ours'
     AND (m.product = ${product} OR (m.product IS NULL AND m.vendor = ${vendor})))`

/**
 * The products beside ours: every pair of product_affinity with one of ours in it, turned so
 * ours comes first (a pair of two of ours once, as the view has it); the `limit` used together
 * by the most companies (then the highest lift), and how many there are.
 */
export const affinity = (schema: string, limit: number) =>
  Effect.gen(function* () {
    const db = yield* Database.Database
    const view = Sql.qualified(schema, affinityView)
    const turned = `SELECT product_a AS our_product, vendor_a AS our_vendor, product_b AS product, vendor_b AS vendor,
         companies_both, companies_a AS companies_ours, companies_b AS companies_other, companies_observed, lift
       FROM ${view} WHERE ${isOurs(schema, "product_a", "vendor_a")}
       UNION ALL
       SELECT product_b, vendor_b, product_a, vendor_a, companies_both, companies_b, companies_a, companies_observed, lift
       FROM ${view} WHERE ${isOurs(schema, "product_b", "vendor_b")} AND NOT ${isOurs(schema, "product_a", "vendor_a")}`
    const [count] = yield* db.query(`SELECT count(*)::int AS n FROM (${turned}) p`)
    const rows = yield* db.query(
      `SELECT our_product, our_vendor, product, vendor, companies_both::int AS companies_both,
         companies_ours::int AS companies_ours, companies_other::int AS companies_other,
         companies_observed::int AS companies_observed, lift::float8 AS lift
       FROM (${turned}) p
       ORDER BY companies_both DESC, lift DESC NULLS LAST, our_product NULLS LAST, product NULLS LAST,
         vendor NULLS LAST
       LIMIT $1`,
      [limit],
    )
    return {
      total: Number(count?.n ?? 0),
      rows: rows.map(
        (row): Affinity => ({
          ourProduct: text(row.our_product),
          ourVendor: text(row.our_vendor),
          product: text(row.product),
          vendor: text(row.vendor),
          companiesBoth: Number(row.companies_both),
          companiesOurs: Number(row.companies_ours),
          companiesOther: Number(row.companies_other),
          companiesObserved: Number(row.companies_observed),
          lift: numberOr(row.lift),
        }),
      ),
    } satisfies Listed<Affinity>
  })

const declaredRows = (schema: string) =>
  Effect.flatMap(Database.Database, (db) =>
    db.query(`SELECT count(*)::int AS n FROM ${Sql.qualified(schema, marketTable)}`),
  ).pipe(Effect.map(([row]) => Number(row?.n ?? 0)))

export interface Limits {
  /** Opportunities listed (the latest). */
  readonly opportunities: number
  /** Products listed beside ours (the most used together). */
  readonly affinity: number
}

export const read = (schema: string, limits: Limits) =>
  Effect.gen(function* () {
    if (!(yield* hasRelations(schema, requiredRelations))) return undeclared(false)
    if ((yield* declaredRows(schema)) === 0) return undeclared(true)
    return {
      _tag: "Declared",
      shares: yield* shares(schema),
      opportunities: yield* opportunities(schema, limits.opportunities),
      affinity: yield* affinity(schema, limits.affinity),
    } satisfies MarketReport
  })
