/**
 * Products against each other and over time, from the observation log (Observations.ts): which
 * products go together (affinity, with the lift over chance), how each product's share moves
 * (momentum: the latest month against 3 and 6 months before), and our share against rivals' and
 * complements' per month (the market table, Market.ts). Shares are among the companies observed,
 * each at its last observation of the month, so a growing watch list does not read as growth.
 */

import { qualified } from "../database/Sql.ts"
import { monthEnd, monthOf, tables } from "./Intelligence.ts"
import { marketTableName, mayMatch } from "./Market.ts"
import type { View } from "./View.ts"

/** A product's vendor as a join key: '' for none (the taxonomy's key does the same). */
const vendorKey = (alias: string): string => `coalesce(${alias}.vendor, '')`

export const affinity: View = {
  name: "product_affinity",
  doc: "pairs of products in use together, among the companies observed at their latest observation: how many use both, each, and the lift over chance (1: as often as chance; above: together more often)",
  columns: {
    product_a:
      "the first product of the pair (pairs are listed once, product_a before product_b in byte order)",
    vendor_a: "its vendor",
    product_b: "the second product of the pair",
    vendor_b: "its vendor",
    companies_both: "companies whose latest observation shows both in use",
    companies_a: "companies whose latest observation shows product_a in use",
    companies_b: "companies whose latest observation shows product_b in use",
    companies_observed: "companies observed (each at its latest observation)",
    lift: "companies_both * companies_observed / (companies_a * companies_b)",
  },
  sql: (schema) => {
    const t = tables(schema)
    // Products numbered once (in byte order), each company's as a sorted array (an observation lists
    // each product once, Observations.ts), its pairs unnested from it and counted on integers. The
    // planner sizes an unnested array at ten, close to a company's products, and reads the
    // companies' count from the table's statistics (not through a CTE, which it guesses at 200), so
    // the plan is costed near what it does: a self-join of the rows, costed at millions, was
    // compiled by the JIT for 0.4 s at each query.
    const vendorKeyOf = vendorKey("u")
    return `WITH products AS (
  SELECT u.product, ${vendorKeyOf} AS vendor_key, nullif(${vendorKeyOf}, '') AS vendor, count(*) AS companies,
    row_number() OVER (ORDER BY u.product COLLATE "C", ${vendorKeyOf} COLLATE "C") AS id
  FROM ${t.inUse} u GROUP BY u.product, ${vendorKeyOf}
),
baskets AS (
  SELECT array_agg(p.id ORDER BY p.id) AS ids
  FROM ${t.inUse} u JOIN products p ON p.product = u.product AND p.vendor_key = ${vendorKeyOf}
  GROUP BY u.company_id
),
pairs AS (
  SELECT a, b, count(*) AS companies_both
  FROM baskets k CROSS JOIN LATERAL unnest(k.ids) a CROSS JOIN LATERAL unnest(k.ids) b
  WHERE a < b GROUP BY a, b
)
SELECT pa.product AS product_a, pa.vendor AS vendor_a, pb.product AS product_b, pb.vendor AS vendor_b,
  p.companies_both, pa.companies AS companies_a, pb.companies AS companies_b, o.companies AS companies_observed,
  round(p.companies_both * o.companies::numeric / (pa.companies * pb.companies), 4) AS lift
FROM pairs p
CROSS JOIN (SELECT count(DISTINCT company_id) AS companies FROM ${t.companyObservations}) o
JOIN products pa ON pa.id = p.a
JOIN products pb ON pb.id = p.b`
  },
}

export const momentum: View = {
  name: "product_momentum",
  doc: "per product: its share among the companies observed in the latest month observed, against 3 and 6 months before, and the net adoptions since, with the companies behind each figure (each company at its last observation of the month)",
  columns: {
    product: "the product (taxonomy_products.product)",
    vendor: "the product's vendor",
    category: "the product's technology category, as the latest observation showing it says it",
    share_now: "companies_using_now / companies_observed_now; null when no company was observed that month",
    share_3m_before: "the same, 3 calendar months before the latest month observed",
    share_6m_before: "the same, 6 calendar months before",
    companies_using_now: "companies whose last observation of the latest month shows it in use",
    companies_using_3m: "the same, 3 months before",
    companies_using_6m: "the same, 6 months before",
    companies_observed_now: "companies observed in the latest month observed (UTC)",
    companies_observed_3m: "companies observed 3 months before",
    companies_observed_6m: "companies observed 6 months before",
    net_adoptions_3m: "adoptions less drops observed after the month 3 months before, up to the latest month",
    net_adoptions_6m: "the same after the month 6 months before",
  },
  sql: (schema) => {
    const t = tables(schema)
    const periods = ["now", "3m", "6m"] as const
    const sumIn = (table: string, column: string, period: string) =>
      `coalesce(sum(${table}.${column}) FILTER (WHERE ${table}.month = p.month_${period}), 0)::bigint`
    const netAfter = (period: string) =>
      `coalesce(sum(u.adoptions - u.drops) FILTER (WHERE u.month > p.month_${period}), 0)::bigint`
    // Every figure is a sum of the monthly counts the loader keeps (LogDerived.ts): a month's users
    // are counted at each company's last observation of it, and the adoptions less the drops
    // after a month are the net adoptions since.
    return `WITH p AS (
  SELECT m.month AS month_now, (m.month - interval '3 months')::date AS month_3m,
    (m.month - interval '6 months')::date AS month_6m
  FROM (SELECT max(month) AS month FROM ${t.observedMonths}) m
),
observed AS (
  SELECT ${periods.map((period) => `${sumIn("o", "companies_observed", period)} AS companies_${period}`).join(", ")}
  FROM p LEFT JOIN ${t.observedMonths} o ON o.month IN (p.month_now, p.month_3m, p.month_6m)
),
counted AS (
  SELECT u.product, ${vendorKey("u")} AS vendor_key, min(u.vendor) AS vendor,
    ${periods.map((period) => `${sumIn("u", "companies_using", period)} AS using_${period}`).join(", ")},
    ${netAfter("3m")} AS net_3m, ${netAfter("6m")} AS net_6m
  FROM p JOIN ${t.usage} u ON u.month >= p.month_6m
  GROUP BY u.product, ${vendorKey("u")}
)
SELECT c.product, c.vendor, l.category,
  ${periods.map((period, index) => `round(c.using_${period}::numeric / nullif(o.companies_${period}, 0), 4) AS share_${["now", "3m_before", "6m_before"][index]}`).join(",\n  ")},
  c.using_now AS companies_using_now, c.using_3m AS companies_using_3m, c.using_6m AS companies_using_6m,
  o.companies_now AS companies_observed_now, o.companies_3m AS companies_observed_3m,
  o.companies_6m AS companies_observed_6m, c.net_3m AS net_adoptions_3m, c.net_6m AS net_adoptions_6m
FROM counted c CROSS JOIN observed o
LEFT JOIN LATERAL (
  SELECT r.category FROM ${t.technologyObservations} r
  WHERE r.product = c.product AND ${vendorKey("r")} = c.vendor_key ORDER BY r.observed_at DESC LIMIT 1
) l ON true
WHERE c.using_now > 0 OR c.using_3m > 0 OR c.using_6m > 0 OR c.net_3m <> 0 OR c.net_6m <> 0`
  },
}

export const shareTrend: View = {
  name: "market_share_trend",
  doc: "per calendar month (UTC) and market role present in the market table: the companies observed, those using any product of that role at their last observation of the month, and their share",
  columns: {
    month: "the calendar month (UTC)",
    role: "ours, rival or complement (market.role)",
    companies_observed: "companies observed that month",
    companies_using:
      "of those, the companies whose last observation that month shows a product of the role in use",
    share: "companies_using / companies_observed",
  },
  sql: (schema) => {
    const t = tables(schema)
    const market = qualified(schema, marketTableName)
    // The log's rows of the market's products first (a scan with a cheap test of the names), then
    // their roles by two equality joins that hash, then those at a company's last observation of
    // their month (looked up by the log's key, for these rows alone); the months' companies
    // observed are the loader's counts (observed_months, LogDerived.ts).
    return `WITH market_rows AS (
  SELECT u.company_id, u.observed_at, u.product, u.vendor FROM ${t.technologyObservations} u
  WHERE ${mayMatch(market, "u")}
),
roled AS (
  SELECT x.company_id, x.observed_at, m.role FROM market_rows x
  JOIN ${market} m ON m.product = x.product AND (m.vendor IS NULL OR m.vendor = x.vendor)
  UNION
  SELECT x.company_id, x.observed_at, m.role FROM market_rows x JOIN ${market} m ON m.product IS NULL AND m.vendor = x.vendor
),
using_role AS (
  SELECT ${monthOf("r.observed_at")} AS month, r.role, count(*) AS companies_using
  FROM roled r
  WHERE NOT EXISTS (
    SELECT 1 FROM ${t.companyObservations} o
    WHERE o.company_id = r.company_id AND o.observed_at > r.observed_at AND o.observed_at < ${monthEnd(monthOf("r.observed_at"))})
  GROUP BY 1, 2
)
SELECT mo.month, r.role, mo.companies_observed, coalesce(u.companies_using, 0) AS companies_using,
  round(coalesce(u.companies_using, 0)::numeric / nullif(mo.companies_observed, 0), 4) AS share
FROM ${t.observedMonths} mo
CROSS JOIN (SELECT DISTINCT role FROM ${market}) r
LEFT JOIN using_role u ON u.month = mo.month AND u.role = r.role`
  },
}

export const marketTrendViews: ReadonlyArray<View> = [affinity, momentum, shareTrend]
