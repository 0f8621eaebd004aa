/**
 * The numbers of the report's "install base and displacement" and "champion moves" sections,
 * from the views over the observations (packages/postgres, Intelligence.ts): the install base of
 * the most used products per month, who replaced what, and the products at the companies that
 * contacts left. A schema no loader with the observation tables synced (schema version 6) has
 * nothing to show, not an error.
 */
import { Database, History, Sql } from "@salesintel/postgres"
import * as Effect from "effect/Effect"
import { hasRelations, text } from "../shared/Queried.ts"

export interface TrendPoint {
  /** The calendar month (UTC) as YYYY-MM-DD, its first day. */
  readonly month: string
  readonly companiesObserved: number
  readonly companiesUsing: number
  readonly share: number
  readonly adoptions: number
  readonly drops: number
}

export interface ProductTrend {
  readonly product: string | null
  readonly vendor: string | null
  readonly category: string | null
  /** Companies whose latest observation shows it in use. */
  readonly inUse: number
  /** Per month observed, oldest first (a month whose observations did not show it: absent). */
  readonly points: ReadonlyArray<TrendPoint>
}

export interface Displacement {
  readonly category: string | null
  readonly subcategory: string | null
  readonly droppedProduct: string | null
  readonly droppedVendor: string | null
  readonly adoptedProduct: string | null
  readonly adoptedVendor: string | null
  /** Companies that made this replacement. */
  readonly companies: number
}

export interface ChampionProduct {
  readonly product: string | null
  readonly vendor: string | null
  readonly category: string | null
  /** Moves of contacts away from a company using it (a contact who moved twice, twice). */
  readonly moves: number
  /** Of those, the moves to a company that uses it, to one that does not, to one never observed. */
  readonly joinedUsing: number
  readonly joinedNotUsing: number
  readonly joinedUnobserved: number
}

export interface IntelligenceReport {
  /** Every month with observations, oldest first. */
  readonly months: ReadonlyArray<string>
  readonly trends: ReadonlyArray<ProductTrend>
  readonly displacements: ReadonlyArray<Displacement>
  readonly champions: ReadonlyArray<ChampionProduct>
}

export const empty: IntelligenceReport = { months: [], trends: [], displacements: [], champions: [] }

const view = (schema: string, name: string) => Sql.qualified(schema, name)

/** The `limit` products most in use now, with their install base per month. */
export const trends = (schema: string, limit: number) =>
  Effect.flatMap(Database.Database, (db) =>
    db.query(
      `WITH top AS (
         SELECT product, vendor, min(category) AS category, count(*) FILTER (WHERE in_use)::int AS in_use
         FROM ${view(schema, History.Intelligence.installBase.name)} GROUP BY product, vendor
         ORDER BY in_use DESC, product NULLS LAST, vendor NULLS LAST LIMIT $1
       )
       SELECT top.product, top.vendor, top.category, top.in_use,
         coalesce(json_agg(json_build_array(t.month::text, t.companies_observed, t.companies_using, t.share,
           t.adoptions, t.drops) ORDER BY t.month) FILTER (WHERE t.month IS NOT NULL), '[]') AS points
       FROM top LEFT JOIN ${view(schema, History.Intelligence.installBaseTrend.name)} t
         ON t.product = top.product AND t.vendor IS NOT DISTINCT FROM top.vendor
       GROUP BY top.product, top.vendor, top.category, top.in_use
       ORDER BY top.in_use DESC, top.product NULLS LAST, top.vendor NULLS LAST`,
      [limit],
    ),
  ).pipe(
    Effect.map((rows) =>
      rows.map(
        (row): ProductTrend => ({
          product: text(row.product),
          vendor: text(row.vendor),
          category: text(row.category),
          inUse: Number(row.in_use),
          points: (row.points as ReadonlyArray<ReadonlyArray<unknown>>).map(
            ([month, observed, using, share, adoptions, drops]) => ({
              month: String(month),
              companiesObserved: Number(observed ?? 0),
              companiesUsing: Number(using),
              share: Number(share ?? 0),
              adoptions: Number(adoptions),
              drops: Number(drops),
            }),
          ),
        }),
      ),
    ),
  )

const months = (schema: string) =>
  Effect.flatMap(Database.Database, (db) =>
    db.query(
      `SELECT DISTINCT date_trunc('month', observed_at AT TIME ZONE 'UTC')::date::text AS month
       FROM ${view(schema, History.Observations.companyObservationsTable.name)} ORDER BY 1`,
    ),
  ).pipe(Effect.map((rows) => rows.map((row) => String(row.month))))

/** Each replacement (dropped product, adopted product) and the companies that made it, the most first. */
export const displacements = (schema: string, limit: number) =>
  Effect.flatMap(Database.Database, (db) =>
    db.query(
      `SELECT category, subcategory, dropped_product, dropped_vendor, adopted_product, adopted_vendor,
         count(DISTINCT company_id)::int AS companies
       FROM ${view(schema, History.Intelligence.displacements.name)}
       GROUP BY category, subcategory, dropped_product, dropped_vendor, adopted_product, adopted_vendor
       ORDER BY companies DESC, dropped_product, dropped_vendor, adopted_product, adopted_vendor LIMIT $1`,
      [limit],
    ),
  ).pipe(
    Effect.map((rows) =>
      rows.map(
        (row): Displacement => ({
          category: text(row.category),
          subcategory: text(row.subcategory),
          droppedProduct: text(row.dropped_product),
          droppedVendor: text(row.dropped_vendor),
          adoptedProduct: text(row.adopted_product),
          adoptedVendor: text(row.adopted_vendor),
          companies: Number(row.companies),
        }),
      ),
    ),
  )

/** Per product at the companies contacts left: how many moves away, and to where, the most first. */
export const champions = (schema: string, limit: number) =>
  Effect.flatMap(Database.Database, (db) =>
    db.query(
      `SELECT product, vendor, min(category) AS category, count(DISTINCT change_id)::int AS moves,
         count(DISTINCT change_id) FILTER (WHERE joined_company_uses)::int AS joined_using,
         count(DISTINCT change_id) FILTER (WHERE NOT joined_company_uses)::int AS joined_not_using,
         count(DISTINCT change_id) FILTER (WHERE joined_company_uses IS NULL)::int AS joined_unobserved
       FROM ${view(schema, History.Intelligence.championMoves.name)}
       GROUP BY product, vendor ORDER BY moves DESC, product NULLS LAST, vendor NULLS LAST LIMIT $1`,
      [limit],
    ),
  ).pipe(
    Effect.map((rows) =>
      rows.map(
        (row): ChampionProduct => ({
          product: text(row.product),
          vendor: text(row.vendor),
          category: text(row.category),
          moves: Number(row.moves),
          joinedUsing: Number(row.joined_using),
          joinedNotUsing: Number(row.joined_not_using),
          joinedUnobserved: Number(row.joined_unobserved),
        }),
      ),
    ),
  )

/** The observation tables: a loader of schema version 6 or later has created them. */
const observationTables = History.Observations.tables.map((table) => table.name)

export interface Limits {
  /** Products whose install base is charted (the most in use). */
  readonly trendProducts: number
  /** Replacements and champion products listed (the most frequent). */
  readonly rows: number
}

export const read = (schema: string, limits: Limits) =>
  Effect.gen(function* () {
    if (!(yield* hasRelations(schema, observationTables))) return empty
    return {
      months: yield* months(schema),
      trends: yield* trends(schema, limits.trendProducts),
      displacements: yield* displacements(schema, limits.rows),
      champions: yield* champions(schema, limits.rows),
    } satisfies IntelligenceReport
  })
