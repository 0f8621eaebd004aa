/**
 * Products against each other and over time, from the observation log (Observations.ts): which
 * products go together (affinity, with the lift over chance), how each product's share moves
 * (momentum: the latest month against 3 and 6 months before), and our share against rivals' and
 * complements' per month (the market table, Market.ts). Shares are among the companies observed,
 * each at its last observation of the month, so a growing watch list does not read as growth.
 */
import { monthLast, monthOf, tables } from "./Intelligence.ts"
import { marketTableName, mayMatch } from "./Market.ts"
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
    // Products numbered once (in byte order), so the pairs are joined and counted on integers; an
    // observation lists each product once (Observations.ts), so its rows need no DISTINCT.
    return `WITH ${inUseNow(t)},
used AS (SELECT u.company_id, u.product, ${vendorKey("u")} AS vendor_key FROM in_use_now u),
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

/**
 * CTEs `periods` (the three months momentum compares: the latest observed, and 3 and 6 months
 * before it) and `baseline`: per period and company, the observation its figures are taken at
 * (for now, its latest; before, its last up to the period's month, else its first), and whether
 * that observation is in the period's month (then it is the company's last of that month). One
 * pass over the companies' observations gives all three.
 */
const baselines = (t: ReturnType<typeof tables>): string => {
  const upTo = (period: string) =>
    `coalesce(max(o.observed_at) FILTER (WHERE ${monthOf("o.observed_at")} <= (SELECT month FROM periods WHERE period = '${period}')), min(o.observed_at))`
  return `periods AS (
  SELECT period, (latest_month.month - (lag_months * interval '1 month'))::date AS month
  FROM (SELECT ${monthOf("max(observed_at)")} AS month FROM ${t.companyObservations}) latest_month
  CROSS JOIN (VALUES ('now', 0), ('3m', 3), ('6m', 6)) AS p (period, lag_months)
),
baseline AS (
  SELECT x.period, b.company_id, x.observed_at, ${monthOf("x.observed_at")} = p.month AS in_month
  FROM (
    SELECT o.company_id, max(o.observed_at) AS now_at, ${upTo("3m")} AS at_3m, ${upTo("6m")} AS at_6m
    FROM ${t.companyObservations} o GROUP BY o.company_id
  ) b
  CROSS JOIN LATERAL (VALUES ('now', b.now_at), ('3m', b.at_3m), ('6m', b.at_6m)) AS x (period, observed_at)
  JOIN periods p ON p.period = x.period
)`
}

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
    const of = (aggregate: string, period: string) => `${aggregate} FILTER (WHERE c.period = '${period}')`
    const using = (period: string) => `coalesce(${of("sum(c.using_in_month)", period)}, 0)::bigint`
    const held = (period: string) => `coalesce(${of("sum(c.companies)", period)}, 0)::bigint`
    const observed = (period: string) => `o.companies_${period}`
    const share = (period: string) => `round(${using(period)}::numeric / nullif(${observed(period)}, 0), 4)`
    const first = (column: string) =>
      `coalesce(${["now", "3m", "6m"].map((period) => of(`min(c.${column})`, period)).join(", ")})`
    // Net adoptions telescope: over a company's consecutive observations after a month, adoptions
    // less drops of a product are "in use at its latest" less "in use at its last observation up
    // to that month" (its first when it has none; a first observation adopts nothing). So each
    // figure is a count over one observation per company and period, not a walk through the log;
    // and a company's last observation of a period's month is its baseline for that period, so
    // the shares come from the same lookups.
    return `WITH ${baselines(t)},
observed AS (
  SELECT count(*) FILTER (WHERE period = 'now' AND in_month) AS companies_now,
    count(*) FILTER (WHERE period = '3m' AND in_month) AS companies_3m,
    count(*) FILTER (WHERE period = '6m' AND in_month) AS companies_6m
  FROM baseline
),
counted AS (
  SELECT b.period, u.product, ${vendorKey("u")} AS vendor_key, count(*) AS companies,
    count(*) FILTER (WHERE b.in_month) AS using_in_month, min(u.category) AS category, min(u.vendor) AS vendor
  FROM baseline b
  CROSS JOIN LATERAL (${productsAt(t.technologyObservations, "b")}) u
  GROUP BY b.period, u.product, ${vendorKey("u")}
)
SELECT c.product, ${first("vendor")} AS vendor, ${first("category")} AS category,
  ${share("now")} AS share_now, ${share("3m")} AS share_3m_before, ${share("6m")} AS share_6m_before,
  ${using("now")} AS companies_using_now, ${using("3m")} AS companies_using_3m, ${using("6m")} AS companies_using_6m,
  ${observed("now")} AS companies_observed_now, ${observed("3m")} AS companies_observed_3m,
  ${observed("6m")} AS companies_observed_6m,
  ${held("now")} - ${held("3m")} AS net_adoptions_3m, ${held("now")} - ${held("6m")} AS net_adoptions_6m
FROM counted c CROSS JOIN observed o
GROUP BY c.product, c.vendor_key, o.companies_now, o.companies_3m, o.companies_6m
HAVING sum(c.using_in_month) > 0 OR ${held("now")} <> ${held("3m")} OR ${held("now")} <> ${held("6m")}`
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
    // The log's rows of the market's products first (a scan with a cheap test of the names), then
    // their roles by two equality joins that hash, then the months' last observations: a join of
    // every observation's products with the market costs seconds over millions of rows.
    return `WITH ${monthLast(t)},
months AS (SELECT month, count(*) AS companies_observed FROM month_last GROUP BY month),
market_rows AS (
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
  SELECT l.month, r.role, count(*) AS companies_using
  FROM month_last l JOIN roled r ON r.company_id = l.company_id AND r.observed_at = l.observed_at
  GROUP BY l.month, r.role
)
SELECT mo.month, r.role, mo.companies_observed, coalesce(u.companies_using, 0) AS companies_using,
  round(coalesce(u.companies_using, 0)::numeric / nullif(mo.companies_observed, 0), 4) AS share
FROM months mo
CROSS JOIN (SELECT DISTINCT role FROM ${market}) r
LEFT JOIN using_role u ON u.month = mo.month AND u.role = r.role`
  },
}

export const marketTrendViews: ReadonlyArray<View> = [affinity, momentum, shareTrend]
