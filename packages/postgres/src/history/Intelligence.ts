/**
 * What repeated observations mean, as views over the user's own purchases: the install base
 * (since when a company has used a product, how often it was seen), its trend per month, the
 * displacements (a product replaced by a rival of its subcategory) and the champion moves (a
 * contact who left a company that used a product, and where they went). Technologies come from
 * the observation log alone (Observations.ts), through the tables the loader keeps with it
 * (LogDerived.ts): adoptions and drops are taken between each company's consecutive observations
 * in time, so a reload, or records loaded out of order, change nothing here (the change table, which compares a batch with the row it replaces, is not
 * read). Moves come from job_changes. They know only what was bought: a company or contact never
 * bought is never observed, and an observation is a purchase, so every date here is as fine as
 * `refresh_after_days` makes the purchases.
 */

import { qualified } from "../database/Sql.ts"
import { named } from "../schema/Tables.ts"
import { jobChangesTable } from "./ChangeTables.ts"
import {
  categoryUsageMonthsTable,
  inUseTable,
  labelledAt,
  logChangesTable,
  monthEnd,
  monthOf,
  observedMonthsTable,
  sameProduct,
  sightingsTable,
  usageMonthsTable,
} from "./LogDerived.ts"
import { companyObservationsTable, technologyObservationsTable } from "./Observations.ts"
import type { View } from "./View.ts"

/**
 * How close a drop and an adoption of the same subcategory at one company must be observed to
 * count as a displacement: 90 days, either order (a migration often adopts the new product first).
 */
export const displacementWindowDays = 90

export const tables = (schema: string) => ({
  companyObservations: qualified(schema, companyObservationsTable.name),
  technologyObservations: qualified(schema, technologyObservationsTable.name),
  jobChanges: qualified(schema, jobChangesTable.name),
  companies: qualified(schema, named.companies.name),
  logChanges: qualified(schema, logChangesTable.name),
  sightings: qualified(schema, sightingsTable.name),
  inUse: qualified(schema, inUseTable.name),
  usage: qualified(schema, usageMonthsTable.name),
  categoryUsage: qualified(schema, categoryUsageMonthsTable.name),
  observedMonths: qualified(schema, observedMonthsTable.name),
})

export { monthEnd, monthOf, sameProduct }

/** The value at the latest observation of a group. */
export const latest = (column: string, at = "observed_at"): string =>
  `(array_agg(${column} ORDER BY ${at} DESC))[1]`

export const installBase: View = {
  name: "technology_install_base",
  doc: "one row per company and product ever observed in use there: when it was first and last seen, whether the company's latest observation shows it, how often it was seen",
  columns: {
    company_id: "the company (companies.company_id)",
    company_name: "the company's name as its latest observation says it",
    company_domain: "the company's first web domain (companies.company_domains[1])",
    company_size_range: "the company's employee count band as the provider labels it (companies.size_range)",
    category: "the product's technology category (as its latest observation says it)",
    subcategory: "the product's technology subcategory (as its latest observation says it)",
    product: "the product (taxonomy_products.product)",
    vendor: "the product's vendor",
    first_seen_at: "the first observation of the company that showed the product in use",
    last_seen_at: "the last observation of the company that showed the product in use",
    in_use: "whether the company's latest observation shows the product in use",
    observations: "how many observations of the company showed the product in use",
    company_observations: "how many times the company was observed (bought with its technologies)",
    tenure_days:
      "whole days from first_seen_at to last_seen_at (a time it was dropped in between included): how long it has been seen",
    adopted_at:
      "the first observation that showed it adopted (in use, and not at the company's observation before); null when it was in use at the company's first observation (which counts as seen, not as adopted) and never adopted again",
    dropped_at:
      "for a product not in use now, the observation that showed it dropped (not in use, and in use at the one before); else null",
  },
  // The sightings are kept by the loader (LogDerived.ts); the company's own figures are read from
  // its observations, by its latest (one row each).
  sql: (schema) => {
    const t = tables(schema)
    return `WITH companies_seen AS (
  SELECT company_id, max(observed_at) AS observed_at, count(*) AS company_observations,
    ${latest("company_name")} AS company_name
  FROM ${t.companyObservations} GROUP BY company_id
)
SELECT s.company_id, c.company_name, co.company_domains[1] AS company_domain, co.size_range AS company_size_range,
  s.category, s.subcategory, s.product, s.vendor, s.first_seen_at, s.last_seen_at, s.last_seen_at = c.observed_at AS in_use, s.observations,
  c.company_observations,
  floor(extract(epoch FROM s.last_seen_at - s.first_seen_at) / 86400)::integer AS tenure_days,
  s.adopted_at,
  CASE WHEN s.last_seen_at < c.observed_at AND s.dropped_at > s.last_seen_at THEN s.dropped_at END AS dropped_at
FROM ${t.sightings} s
JOIN companies_seen c ON c.company_id = s.company_id
LEFT JOIN ${t.companies} co ON co.company_id = s.company_id`
  },
}

const trendColumns = {
  month: "the calendar month (UTC) of the observations",
  companies_observed: "companies observed (bought with their technologies) that month",
  companies_using:
    "of those, the companies whose last observation that month showed it in use (one that dropped it mid-month does not count)",
  share:
    "companies_using / companies_observed: the share among the companies observed that month, so a growing watch list does not read as growth",
  adoptions: "adoptions observed that month (in use at a company's observation, not at its one before)",
  drops: "drops observed that month (in use at a company's observation before, not at this one)",
  net: "adoptions less drops",
}

export const installBaseTrend: View = {
  name: "technology_install_base_trend",
  doc: "per product and month: the companies observed, those using it among them and their share, and the adoptions and drops observed",
  columns: {
    ...trendColumns,
    category: "the product's technology category",
    subcategory: "the product's technology subcategory",
    product: "the product (taxonomy_products.product)",
    vendor: "the product's vendor",
  },
  sql: (schema) => trendSql(schema, ["product", "vendor"], ["category", "subcategory"]),
}

const installBaseTrendByCategory: View = {
  name: "technology_install_base_trend_by_category",
  doc: "per technology category and month: the companies observed, those using any of its products among them and their share, and the adoptions and drops observed",
  columns: { ...trendColumns, category: "the technology category" },
  sql: (schema) => trendSql(schema, ["category"], []),
}

/**
 * The labels of a trend's row `g` (a product's, in month g.month): as the latest of its users'
 * last observations of the month says them, else (a null, or no user) as its latest change of the
 * month says them. Looked up by the products' indexes, latest first. Users observed at one time
 * carry the taxonomy's labels of that time, so a tie among them picks the same labels; changes of
 * one time may not (a drop carries the labels of the observation before), so among them the one
 * whose labels were observed last is taken (`labelledAt`), then the greater company_id: the index
 * holds that order, and the labels do not depend on the plan. Bound
 * by the month's end alone: the row counts a user (or a change) in the month, so the latest row
 * found before the month's end that qualifies is in it. With the start bound as well, the planner
 * expects a handful of rows and fetches every row of the month to sort them (1.0 s instead of
 * 0.03 s for 2,000 rows at 2,000 companies).
 */
const labelled = (t: ReturnType<typeof tables>, labels: ReadonlyArray<string>): string => {
  const inMonth = (at: string) => `${at} < ${monthEnd("g.month")}`
  const ofProduct = (row: string) =>
    `${row}.product = g.product AND ${row}.vendor IS NOT DISTINCT FROM g.vendor`
  return `LEFT JOIN LATERAL (
  SELECT ${labels.map((label) => `r.${label}`).join(", ")} FROM ${t.technologyObservations} r
  WHERE g.companies_using > 0 AND ${ofProduct("r")} AND ${inMonth("r.observed_at")}
    AND NOT EXISTS (
      SELECT 1 FROM ${t.companyObservations} o
      WHERE o.company_id = r.company_id AND o.observed_at > r.observed_at AND o.observed_at < ${monthEnd("g.month")})
  ORDER BY r.observed_at DESC LIMIT 1
) u ON true
LEFT JOIN LATERAL (
  SELECT ${labels.map((label) => `c.${label}`).join(", ")} FROM ${t.logChanges} c
  WHERE (g.adoptions > 0 OR g.drops > 0) AND ${ofProduct("c")} AND ${inMonth("c.observed_at")}
  ORDER BY c.observed_at DESC, ${labelledAt("c.")} DESC, c.company_id DESC LIMIT 1
) c ON true`
}

/**
 * A trend from the counts the loader keeps (`counts`, keyed by month and `keys`), with `labels`
 * looked up (`labelled`): the users and the changes of each month are counted when observed.
 */
const trendSql = (schema: string, keys: ReadonlyArray<string>, labels: ReadonlyArray<string>): string => {
  const t = tables(schema)
  const counts = labels.length === 0 ? t.categoryUsage : t.usage
  const picked = [
    ...labels.map((label) => `coalesce(u.${label}, c.${label}) AS ${label}`),
    ...keys.map((key) => `g.${key}`),
  ]
  return `SELECT g.month, ${picked.join(", ")},
  m.companies_observed, g.companies_using,
  round(g.companies_using::numeric / nullif(m.companies_observed, 0), 4) AS share,
  g.adoptions, g.drops, g.adoptions - g.drops AS net
FROM ${counts} g
LEFT JOIN ${t.observedMonths} m ON m.month = g.month
${labels.length === 0 ? "" : labelled(t, labels)}
WHERE g.companies_using > 0 OR g.adoptions > 0 OR g.drops > 0`
}

export const displacements: View = {
  name: "technology_displacements",
  doc: `a company that dropped a product and adopted another of the same category and subcategory, the two observed within ${displacementWindowDays} days of each other (either order): one row per such pair`,
  columns: {
    company_id: "the company (companies.company_id)",
    company_name: "the company's name as the adoption's observation says it",
    category: "the technology category of both products",
    subcategory: "the technology subcategory of both products",
    dropped_product: "the product it stopped using",
    dropped_vendor: "that product's vendor",
    dropped_at:
      "the observation that showed the drop (in use at the company's observation before, not at this one)",
    adopted_product: "the product it started using",
    adopted_vendor: "that product's vendor",
    adopted_at: "the observation that showed the adoption",
    days_apart: `whole days from the drop's observation to the adoption's (negative: adopted first); within ${displacementWindowDays}`,
  },
  sql: (schema) => {
    const t = tables(schema)
    const window = `interval '${displacementWindowDays} days'`
    return `SELECT d.company_id, a.company_name, d.category, d.subcategory,
  d.product AS dropped_product, d.vendor AS dropped_vendor, d.observed_at AS dropped_at,
  a.product AS adopted_product, a.vendor AS adopted_vendor, a.observed_at AS adopted_at,
  trunc(extract(epoch FROM a.observed_at - d.observed_at) / 86400)::integer AS days_apart
FROM ${t.logChanges} d
JOIN ${t.logChanges} a ON a.company_id = d.company_id AND a.change = 'adopted'
  AND a.category IS NOT DISTINCT FROM d.category AND a.subcategory = d.subcategory
  AND NOT (${sameProduct("a", "d")})
  AND a.observed_at BETWEEN d.observed_at - ${window} AND d.observed_at + ${window}
WHERE d.change = 'dropped'`
  },
}

export const championMoves: View = {
  name: "champion_moves",
  doc: "contacts who moved to another company (one named: not a company left for none), one row per product in use at the company they left (at its last observation before the contact's observation that showed the move), with whether the company they joined uses it",
  columns: {
    match_id: "the contact (contacts.match_id)",
    display_name: "the contact's name",
    left_company_id: "the company they left (companies.company_id)",
    left_company_name: "its name",
    left_job_title: "their job title there",
    joined_company_id: "the company they joined",
    joined_company_name: "its name",
    job_title: "their job title at the company they joined",
    job_level: "their job level code there (job_levels.code)",
    job_department: "their job department code there (job_departments.code)",
    last_seen_at: "the contact's observation before the move (still at the company they left)",
    moved_seen_at: "the contact's observation that shows the move: it happened in between",
    left_company_observed_at:
      "the observation of the company they left whose products are listed: its last before moved_seen_at (one made with or after the contact's own shows the company as it is after the move, so it is not taken)",
    category: "the product's technology category",
    subcategory: "the product's technology subcategory",
    product: "a product in use at the company they left",
    vendor: "the product's vendor",
    joined_company_uses:
      "whether the joined company's latest observation shows the product in use; null when the joined company was never observed",
    change_id: "the move (job_changes.change_id)",
  },
  sql: (schema) => {
    const t = tables(schema)
    // The products at both companies looked up by the log's key, move by move: a join would sort
    // or hash the whole log for a few thousand moves.
    return `WITH moves AS (
  SELECT * FROM ${t.jobChanges}
  WHERE 'company' = ANY(changed) AND from_company_id IS NOT NULL AND to_company_id IS NOT NULL
    AND to_company_id <> from_company_id
),
left_seen AS (
  SELECT m.change_id, max(o.observed_at) AS observed_at
  FROM moves m JOIN ${t.companyObservations} o ON o.company_id = m.from_company_id AND o.observed_at < m.observed_at
  GROUP BY m.change_id
)
SELECT m.match_id, m.display_name, m.from_company_id AS left_company_id, m.from_company_name AS left_company_name,
  m.from_job_title AS left_job_title, m.to_company_id AS joined_company_id, m.to_company_name AS joined_company_name,
  m.to_job_title AS job_title, m.to_job_level AS job_level, m.to_job_department AS job_department,
  m.last_seen_at, m.observed_at AS moved_seen_at, s.observed_at AS left_company_observed_at,
  p.category, p.subcategory, p.product, p.vendor,
  CASE WHEN j.observed_at IS NULL THEN NULL ELSE EXISTS (
    SELECT 1 FROM ${t.technologyObservations} u
    WHERE u.company_id = m.to_company_id AND u.observed_at = j.observed_at AND ${sameProduct("u", "p")}
  ) END AS joined_company_uses,
  m.change_id
FROM moves m
JOIN left_seen s ON s.change_id = m.change_id
CROSS JOIN LATERAL (
  SELECT p.category, p.subcategory, p.product, p.vendor FROM ${t.technologyObservations} p
  WHERE p.company_id = m.from_company_id AND p.observed_at = s.observed_at OFFSET 0
) p
CROSS JOIN LATERAL (
  SELECT max(o.observed_at) AS observed_at FROM ${t.companyObservations} o WHERE o.company_id = m.to_company_id
) j`
  },
}

export const intelligenceViews: ReadonlyArray<View> = [
  installBase,
  installBaseTrend,
  installBaseTrendByCategory,
  displacements,
  championMoves,
]
