/**
 * The reference for the derived tables (LogDerived.ts): the views that walked the whole
 * observation log at each query, as they were before (the install base, its trends, the
 * displacements), kept for the tests to compare the views over the derived tables with.
 */

import { qualified } from "../database/Sql.ts"
import { labelledAt } from "../history/LogDerived.ts"
import { companyObservationsTable, technologyObservationsTable } from "../history/Observations.ts"
import type { View } from "../history/View.ts"
import { named } from "../schema/Tables.ts"

/**
 * How close a drop and an adoption of the same subcategory at one company must be observed to
 * count as a displacement: 90 days, either order (a migration often adopts the new product first).
 */
export const displacementWindowDays = 90

export const tables = (schema: string) => ({
  companyObservations: qualified(schema, companyObservationsTable.name),
  technologyObservations: qualified(schema, technologyObservationsTable.name),
  companies: qualified(schema, named.companies.name),
})

/** The calendar month (UTC, whatever the session's time zone) of a timestamptz, as a date. */
export const monthOf = (column: string): string => `date_trunc('month', ${column} AT TIME ZONE 'UTC')::date`

/**
 * CTE `month_last`: each company's last observation in each calendar month (UTC). A month's users
 * are counted there, so a company that dropped a product mid-month does not count as using it.
 */
export const monthLast = (t: ReturnType<typeof tables>): string => `month_last AS (
  SELECT company_id, ${monthOf("observed_at")} AS month, max(observed_at) AS observed_at
  FROM ${t.companyObservations} GROUP BY company_id, ${monthOf("observed_at")}
)`

/** The value at the latest observation of a group. */
export const latest = (column: string, at = "observed_at"): string =>
  `(array_agg(${column} ORDER BY ${at} DESC))[1]`

export const sameProduct = (a: string, b: string): string =>
  `${a}.product = ${b}.product AND ${a}.vendor IS NOT DISTINCT FROM ${b}.vendor`

/**
 * CTEs `log_steps` (each company observation with the one before it) and `log_changes` (products
 * adopted: in use at an observation and not at the one before; dropped: the reverse), from the log
 * alone. A company's first observation has none before it: what it shows is seen, not adopted.
 */
export const logChanges = (t: ReturnType<typeof tables>): string => `log_steps AS (
  SELECT company_id, observed_at, company_name,
    lag(observed_at) OVER (PARTITION BY company_id ORDER BY observed_at) AS previous_at
  FROM ${t.companyObservations}
),
log_changes AS (
  SELECT n.company_id, s.company_name, n.category, n.subcategory, n.product, n.vendor, 'adopted' AS change,
    s.observed_at, s.previous_at
  FROM log_steps s JOIN ${t.technologyObservations} n ON n.company_id = s.company_id AND n.observed_at = s.observed_at
  WHERE s.previous_at IS NOT NULL AND NOT EXISTS (
    SELECT 1 FROM ${t.technologyObservations} p
    WHERE p.company_id = s.company_id AND p.observed_at = s.previous_at AND ${sameProduct("p", "n")})
  UNION ALL
  SELECT p.company_id, s.company_name, p.category, p.subcategory, p.product, p.vendor, 'dropped', s.observed_at,
    s.previous_at
  FROM log_steps s JOIN ${t.technologyObservations} p ON p.company_id = s.company_id AND p.observed_at = s.previous_at
  WHERE NOT EXISTS (
    SELECT 1 FROM ${t.technologyObservations} n
    WHERE n.company_id = s.company_id AND n.observed_at = s.observed_at AND ${sameProduct("n", "p")})
)`

const installBase: View = {
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
  sql: (schema) => {
    const t = tables(schema)
    return `WITH companies_seen AS (
  SELECT company_id, max(observed_at) AS observed_at, count(*) AS company_observations,
    ${latest("company_name")} AS company_name
  FROM ${t.companyObservations} GROUP BY company_id
),
seen AS (
  SELECT company_id, product, vendor, ${latest("category")} AS category, ${latest("subcategory")} AS subcategory,
    min(observed_at) AS first_seen_at, max(observed_at) AS last_seen_at, count(*) AS observations
  FROM ${t.technologyObservations} GROUP BY company_id, product, vendor
),
${logChanges(t)},
adopted AS (
  SELECT company_id, product, vendor, min(observed_at) AS adopted_at
  FROM log_changes WHERE change = 'adopted' GROUP BY company_id, product, vendor
),
dropped AS (
  SELECT company_id, product, vendor, max(observed_at) AS dropped_at
  FROM log_changes WHERE change = 'dropped' GROUP BY company_id, product, vendor
)
SELECT s.company_id, c.company_name, co.company_domains[1] AS company_domain, co.size_range AS company_size_range,
  s.category, s.subcategory, s.product, s.vendor, s.first_seen_at, s.last_seen_at, s.last_seen_at = c.observed_at AS in_use, s.observations,
  c.company_observations,
  floor(extract(epoch FROM s.last_seen_at - s.first_seen_at) / 86400)::integer AS tenure_days,
  a.adopted_at,
  CASE WHEN s.last_seen_at < c.observed_at AND d.dropped_at > s.last_seen_at THEN d.dropped_at END AS dropped_at
FROM seen s
JOIN companies_seen c ON c.company_id = s.company_id
LEFT JOIN ${t.companies} co ON co.company_id = s.company_id
LEFT JOIN adopted a ON a.company_id = s.company_id AND ${sameProduct("a", "s")}
LEFT JOIN dropped d ON d.company_id = s.company_id AND ${sameProduct("d", "s")}`
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

const installBaseTrend: View = {
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
 * A trend grouped by `keys` (compared null-safely) with `labels` taken from the latest
 * observation: observations give the users, the change table the adoptions and drops.
 */
const trendSql = (schema: string, keys: ReadonlyArray<string>, labels: ReadonlyArray<string>): string => {
  const t = tables(schema)
  const group = ["month", ...keys].join(", ")
  // Ties in time among changes: the one whose labels were observed last (an adoption's at the
  // change, a drop's at the observation before), then the greater company_id, as the views pick.
  const changeOrder = `observed_at DESC, ${labelledAt("")} DESC, company_id DESC`
  const described = labels.map((label) => `(array_agg(${label} ORDER BY ${changeOrder}))[1] AS ${label}`)
  const usedLabels = labels.map((label) => `${latest(`u.${label}`, "u.observed_at")} AS ${label}`)
  // Null-safe and hashable (a FULL JOIN needs that): null and '' stay apart.
  const join = keys
    .map(
      (key) => `coalesce(c.${key}, '') = coalesce(u.${key}, '') AND (c.${key} IS NULL) = (u.${key} IS NULL)`,
    )
    .join(" AND ")
  const picked = [...labels, ...keys].map((key) => `coalesce(u.${key}, c.${key}) AS ${key}`)
  return `WITH ${logChanges(t)},
months AS (
  SELECT ${monthOf("observed_at")} AS month, count(DISTINCT company_id) AS companies_observed
  FROM ${t.companyObservations} GROUP BY 1
),
${monthLast(t)},
used AS (
  SELECT l.month, ${[...keys.map((key) => `u.${key}`), ...usedLabels].join(", ")},
    count(DISTINCT u.company_id) AS companies_using
  FROM month_last l
  JOIN ${t.technologyObservations} u ON u.company_id = l.company_id AND u.observed_at = l.observed_at
  GROUP BY ${["l.month", ...keys.map((key) => `u.${key}`)].join(", ")}
),
changed AS (
  SELECT ${monthOf("observed_at")} AS month, ${[...keys, ...described].join(", ")},
    count(*) FILTER (WHERE change = 'adopted') AS adoptions, count(*) FILTER (WHERE change = 'dropped') AS drops
  FROM log_changes GROUP BY ${group}
)
SELECT coalesce(u.month, c.month) AS month, ${picked.join(", ")},
  m.companies_observed, coalesce(u.companies_using, 0) AS companies_using,
  round(coalesce(u.companies_using, 0)::numeric / nullif(m.companies_observed, 0), 4) AS share,
  coalesce(c.adoptions, 0) AS adoptions, coalesce(c.drops, 0) AS drops,
  coalesce(c.adoptions, 0) - coalesce(c.drops, 0) AS net
FROM used u
FULL JOIN changed c ON c.month = u.month AND ${join}
LEFT JOIN months m ON m.month = coalesce(u.month, c.month)`
}

const displacements: View = {
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
    return `WITH ${logChanges(t)}
SELECT d.company_id, a.company_name, d.category, d.subcategory,
  d.product AS dropped_product, d.vendor AS dropped_vendor, d.observed_at AS dropped_at,
  a.product AS adopted_product, a.vendor AS adopted_vendor, a.observed_at AS adopted_at,
  trunc(extract(epoch FROM a.observed_at - d.observed_at) / 86400)::integer AS days_apart
FROM log_changes d
JOIN log_changes a ON a.company_id = d.company_id AND a.change = 'adopted'
  AND a.category IS NOT DISTINCT FROM d.category AND a.subcategory = d.subcategory
  AND NOT (${sameProduct("a", "d")})
  AND a.observed_at BETWEEN d.observed_at - ${window} AND d.observed_at + ${window}
WHERE d.change = 'dropped'`
  },
}

export const logWalkViews: ReadonlyArray<View> = [
  installBase,
  installBaseTrend,
  installBaseTrendByCategory,
  displacements,
]

/** The products in use at each company's latest observation, from the log (technology_in_use). */
export const inUseWalk = {
  name: "technology_in_use",
  columns: "company_id, observed_at, category, subcategory, product, vendor",
  sql: (schema: string) => {
    const t = tables(schema)
    return `SELECT u.company_id, u.observed_at, u.category, u.subcategory, u.product, u.vendor
FROM ${t.technologyObservations} u
JOIN (SELECT company_id, max(observed_at) AS observed_at FROM ${t.companyObservations} GROUP BY company_id) l
  ON l.company_id = u.company_id AND l.observed_at = u.observed_at`
  },
}
