/**
 * Products against each other and over time, from the observation log (Observations.ts): which
 * products go together (affinity, with the lift over chance), how each product's share moves
 * (momentum: the latest month against 3 and 6 months before), and our share against rivals' and
 * complements' per month (the market table, Market.ts). Shares are among the companies observed,
 * each at its last observation of the month, so a growing watch list does not read as growth.
 */
import { monthLast, monthOf, tables } from "./Intelligence.ts"
import { marketTableName } from "./Market.ts"
import { inUseNow } from "./MarketViews.ts"
import { qualified } from "./Sql.ts"
import type { View } from "./Views.ts"

/** A product's vendor as a join key: '' for none (the taxonomy's key does the same). */
const vendorKey = (alias: string): string => `coalesce(${alias}.vendor, '')`

const affinity: View = {
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
    // Products numbered once (in byte order), so the pairs are joined and counted on integers.
    return `WITH ${inUseNow(t)},
used AS (SELECT DISTINCT u.company_id, u.product, ${vendorKey("u")} AS vendor_key FROM in_use_now u),
products AS (
  SELECT product, vendor_key, nullif(vendor_key, '') AS vendor, count(*) AS companies,
    row_number() OVER (ORDER BY product COLLATE "C", vendor_key COLLATE "C") AS id
  FROM used GROUP BY product, vendor_key
),
numbered AS (
  SELECT u.company_id, p.id FROM used u JOIN products p ON p.product = u.product AND p.vendor_key = u.vendor_key
),
pairs AS (
  SELECT a.id AS a, b.id AS b, count(*) AS companies_both
  FROM numbered a JOIN numbered b ON b.company_id = a.company_id AND a.id < b.id
  GROUP BY a.id, b.id
)
SELECT pa.product AS product_a, pa.vendor AS vendor_a, pb.product AS product_b, pb.vendor AS vendor_b,
  p.companies_both, pa.companies AS companies_a, pb.companies AS companies_b, o.companies AS companies_observed,
  round(p.companies_both * o.companies::numeric / (pa.companies * pb.companies), 4) AS lift
FROM pairs p
CROSS JOIN (SELECT count(*) AS companies FROM latest_observation) o
JOIN products pa ON pa.id = p.a
JOIN products pb ON pb.id = p.b`
  },
}

/**
 * The products in use at one observation (`alias`'s company_id and observed_at), looked up by the
 * log's key: LATERAL and OFFSET 0, so that the planner neither hashes the whole log for a few
 * observations nor underestimates the rows (which it does a hundredfold for the join).
 */
const productsAt = (log: string, alias: string): string =>
  `SELECT u.product, u.vendor, u.category FROM ${log} u
    WHERE u.company_id = ${alias}.company_id AND u.observed_at = ${alias}.observed_at OFFSET 0`

// An observation lists each product once (Observations.ts), so its rows are counted as companies.

/** The three months momentum compares: the latest observed, and 3 and 6 months before it. */
const periods = (t: ReturnType<typeof tables>): string => `${monthLast(t)},
periods AS (
  SELECT period, (now_month - (lag_months * interval '1 month'))::date AS month, lag_months
  FROM (SELECT max(month) AS now_month FROM month_last) latest_month
  CROSS JOIN (VALUES ('now', 0), ('3m', 3), ('6m', 6)) AS p (period, lag_months)
),
observed AS (
  SELECT p.period, count(l.company_id) AS companies
  FROM periods p LEFT JOIN month_last l ON l.month = p.month GROUP BY p.period
),
used AS (
  SELECT p.period, u.product, ${vendorKey("u")} AS vendor_key, count(*) AS companies,
    min(u.category) AS category, min(u.vendor) AS vendor
  FROM periods p JOIN month_last l ON l.month = p.month
  CROSS JOIN LATERAL (${productsAt(t.technologyObservations, "l")}) u
  GROUP BY p.period, u.product, ${vendorKey("u")}
)`

const momentum: View = {
  name: "product_momentum",
  doc: "per product: its share among the companies observed in the latest month observed, against 3 and 6 months before, and the net adoptions since, with the companies behind each figure (each company at its last observation of the month)",
  columns: {
    product: "the product (taxonomy_products.product)",
    vendor: "the product's vendor",
    category:
      "the product's technology category, as the companies' latest observations say it (the first by name should they differ)",
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
    const share = (period: string) =>
      `round(coalesce(u_${period}.companies, 0)::numeric / nullif(o_${period}.companies, 0), 4)`
    const using = (period: string) => `LEFT JOIN used u_${period} ON u_${period}.period = '${period}'
  AND u_${period}.product = k.product AND u_${period}.vendor_key = k.vendor_key`
    const counted = (period: string) => `LEFT JOIN counted c_${period} ON c_${period}.period = '${period}'
  AND c_${period}.product = k.product AND c_${period}.vendor_key = k.vendor_key`
    const observedJoin = (period: string) => `JOIN observed o_${period} ON o_${period}.period = '${period}'`
    // Net adoptions telescope: over a company's consecutive observations after a month, adoptions
    // less drops of a product are "in use at its latest" less "in use at its last observation up
    // to that month" (its first when it has none; a first observation adopts nothing). So each
    // is a count over one observation per company, not a walk through the log.
    return `WITH ${periods(t)},
baseline AS (
  SELECT p.period, o.company_id,
    coalesce(max(o.observed_at) FILTER (WHERE ${monthOf("o.observed_at")} <= p.month), min(o.observed_at)) AS observed_at
  FROM periods p CROSS JOIN ${t.companyObservations} o
  WHERE p.period <> 'now'
  GROUP BY p.period, o.company_id
  UNION ALL
  SELECT 'latest', company_id, max(observed_at) FROM ${t.companyObservations} GROUP BY company_id
),
counted AS (
  SELECT b.period, u.product, ${vendorKey("u")} AS vendor_key, count(*) AS companies,
    min(u.category) AS category, min(u.vendor) AS vendor
  FROM baseline b
  CROSS JOIN LATERAL (${productsAt(t.technologyObservations, "b")}) u
  GROUP BY b.period, u.product, ${vendorKey("u")}
),
keys AS (
  SELECT product, vendor_key FROM used UNION SELECT product, vendor_key FROM counted
)
SELECT k.product, coalesce(c_latest.vendor, c_3m.vendor, c_6m.vendor, u_now.vendor, u_3m.vendor, u_6m.vendor) AS vendor,
  coalesce(c_latest.category, c_3m.category, c_6m.category, u_now.category, u_3m.category, u_6m.category) AS category,
  ${share("now")} AS share_now, ${share("3m")} AS share_3m_before, ${share("6m")} AS share_6m_before,
  coalesce(u_now.companies, 0) AS companies_using_now, coalesce(u_3m.companies, 0) AS companies_using_3m,
  coalesce(u_6m.companies, 0) AS companies_using_6m,
  o_now.companies AS companies_observed_now, o_3m.companies AS companies_observed_3m,
  o_6m.companies AS companies_observed_6m,
  coalesce(c_latest.companies, 0) - coalesce(c_3m.companies, 0) AS net_adoptions_3m,
  coalesce(c_latest.companies, 0) - coalesce(c_6m.companies, 0) AS net_adoptions_6m
FROM keys k
${observedJoin("now")} ${observedJoin("3m")} ${observedJoin("6m")}
${using("now")}
${using("3m")}
${using("6m")}
${counted("latest")}
${counted("3m")}
${counted("6m")}
WHERE coalesce(u_now.companies, u_3m.companies, u_6m.companies, 0) > 0
  OR coalesce(c_latest.companies, 0) <> coalesce(c_3m.companies, 0)
  OR coalesce(c_latest.companies, 0) <> coalesce(c_6m.companies, 0)`
  },
}

const shareTrend: View = {
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
    return `WITH ${monthLast(t)},
months AS (SELECT month, count(*) AS companies_observed FROM month_last GROUP BY month),
products AS (SELECT DISTINCT product, vendor FROM ${t.technologyObservations}),
roled_products AS (
  SELECT x.product, x.vendor, m.role FROM products x
  JOIN ${market} m ON m.product = x.product AND (m.vendor IS NULL OR m.vendor = x.vendor)
  UNION
  SELECT x.product, x.vendor, m.role FROM products x JOIN ${market} m ON m.product IS NULL AND m.vendor = x.vendor
),
using_role AS (
  SELECT DISTINCT l.month, l.company_id, r.role
  FROM month_last l
  JOIN ${t.technologyObservations} u ON u.company_id = l.company_id AND u.observed_at = l.observed_at
  JOIN roled_products r ON r.product = u.product AND coalesce(r.vendor, '') = ${vendorKey("u")}
)
SELECT mo.month, r.role, mo.companies_observed, count(u.company_id) AS companies_using,
  round(count(u.company_id)::numeric / nullif(mo.companies_observed, 0), 4) AS share
FROM months mo
CROSS JOIN (SELECT DISTINCT role FROM ${market}) r
LEFT JOIN using_role u ON u.month = mo.month AND u.role = r.role
GROUP BY mo.month, r.role, mo.companies_observed`
  },
}

export const marketTrendViews: ReadonlyArray<View> = [affinity, momentum, shareTrend]
