/**
 * Products against each other and over time, from the observation log (Observations.ts): which
 * products go together (affinity, with the lift over chance), how each product's share moves
 * (momentum: the latest month against 3 and 6 months before), and our share against rivals' and
 * complements' per month (the market table, Market.ts). Shares are among the companies observed,
 * each at its last observation of the month, so a growing watch list does not read as growth.
 */
import { latest, logChanges, monthLast, monthOf, tables } from "./Intelligence.ts"
import { marketTableName } from "./Market.ts"
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
    const order = (alias: string) => `(${alias}.product COLLATE "C", ${alias}.vendor_key COLLATE "C")`
    return `WITH latest_observation AS (
  SELECT DISTINCT ON (company_id) company_id, observed_at
  FROM ${t.companyObservations} ORDER BY company_id, observed_at DESC
),
used AS (
  SELECT DISTINCT u.company_id, u.product, u.vendor, ${vendorKey("u")} AS vendor_key
  FROM latest_observation l
  JOIN ${t.technologyObservations} u ON u.company_id = l.company_id AND u.observed_at = l.observed_at
),
counts AS (SELECT product, vendor_key, count(*) AS companies FROM used GROUP BY product, vendor_key),
pairs AS (
  SELECT a.product AS product_a, a.vendor AS vendor_a, a.vendor_key AS key_a, b.product AS product_b,
    b.vendor AS vendor_b, b.vendor_key AS key_b, count(*) AS companies_both
  FROM used a JOIN used b ON b.company_id = a.company_id AND ${order("a")} < ${order("b")}
  GROUP BY a.product, a.vendor, a.vendor_key, b.product, b.vendor, b.vendor_key
)
SELECT p.product_a, p.vendor_a, p.product_b, p.vendor_b, p.companies_both, ca.companies AS companies_a,
  cb.companies AS companies_b, o.companies AS companies_observed,
  round(p.companies_both * o.companies::numeric / (ca.companies * cb.companies), 4) AS lift
FROM pairs p
CROSS JOIN (SELECT count(*) AS companies FROM latest_observation) o
JOIN counts ca ON ca.product = p.product_a AND ca.vendor_key = p.key_a
JOIN counts cb ON cb.product = p.product_b AND cb.vendor_key = p.key_b`
  },
}

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
  SELECT p.period, u.product, ${vendorKey("u")} AS vendor_key, count(DISTINCT u.company_id) AS companies
  FROM periods p JOIN month_last l ON l.month = p.month
  JOIN ${t.technologyObservations} u ON u.company_id = l.company_id AND u.observed_at = l.observed_at
  GROUP BY p.period, u.product, ${vendorKey("u")}
)`

const momentum: View = {
  name: "product_momentum",
  doc: "per product: its share among the companies observed in the latest month observed, against 3 and 6 months before, and the net adoptions since, with the companies behind each figure (each company at its last observation of the month)",
  columns: {
    product: "the product (taxonomy_products.product)",
    vendor: "the product's vendor",
    category: "the product's technology category (as its latest observation says it)",
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
    const observedJoin = (period: string) => `JOIN observed o_${period} ON o_${period}.period = '${period}'`
    return `WITH ${logChanges(t)},
${periods(t)},
net AS (
  SELECT c.product, ${vendorKey("c")} AS vendor_key,
    sum(CASE WHEN c.change = 'adopted' THEN 1 ELSE -1 END) FILTER (WHERE ${monthOf("c.observed_at")} > p3.month) AS net_3m,
    sum(CASE WHEN c.change = 'adopted' THEN 1 ELSE -1 END) AS net_6m
  FROM log_changes c
  JOIN periods p6 ON p6.period = '6m' JOIN periods p3 ON p3.period = '3m'
  WHERE ${monthOf("c.observed_at")} > p6.month
  GROUP BY c.product, ${vendorKey("c")}
),
products AS (
  SELECT product, ${vendorKey("u")} AS vendor_key, (array_agg(vendor))[1] AS vendor,
    ${latest("u.category", "u.observed_at")} AS category
  FROM ${t.technologyObservations} u GROUP BY product, ${vendorKey("u")}
),
keys AS (
  SELECT k.* FROM products k
  WHERE EXISTS (SELECT 1 FROM used u WHERE u.product = k.product AND u.vendor_key = k.vendor_key)
    OR EXISTS (SELECT 1 FROM net n WHERE n.product = k.product AND n.vendor_key = k.vendor_key)
)
SELECT k.product, k.vendor, k.category, ${share("now")} AS share_now, ${share("3m")} AS share_3m_before,
  ${share("6m")} AS share_6m_before,
  coalesce(u_now.companies, 0) AS companies_using_now, coalesce(u_3m.companies, 0) AS companies_using_3m,
  coalesce(u_6m.companies, 0) AS companies_using_6m,
  o_now.companies AS companies_observed_now, o_3m.companies AS companies_observed_3m,
  o_6m.companies AS companies_observed_6m,
  coalesce(n.net_3m, 0) AS net_adoptions_3m, coalesce(n.net_6m, 0) AS net_adoptions_6m
FROM keys k
${observedJoin("now")} ${observedJoin("3m")} ${observedJoin("6m")}
${using("now")}
${using("3m")}
${using("6m")}
LEFT JOIN net n ON n.product = k.product AND n.vendor_key = k.vendor_key`
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
