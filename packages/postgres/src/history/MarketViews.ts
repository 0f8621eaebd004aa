/**
 * The views a go-to-market team asks next, over the observation log (Observations.ts) and the
 * market table (Market.ts): each company's profile at its latest observation, the top products
 * per category, the accounts on a rival and not on us, the opportunities (a rival dropped, a
 * complement adopted, a champion of ours gone to a rival's account), product affinity, momentum
 * and our share against rivals' per month. The market is joined when a view is read, so an UPDATE
 * of `market` changes them at once. Like Intelligence.ts, they know only what was bought.
 */

import { qualified } from "../database/Sql.ts"
import { displacementWindowDays, sameProduct, tables } from "./Intelligence.ts"
import { hasRole, marketTableName } from "./Market.ts"
import type { View } from "./View.ts"

type Tables = ReturnType<typeof tables> & { readonly market: string }

const tablesOf = (schema: string): Tables => ({
  ...tables(schema),
  market: qualified(schema, marketTableName),
})

/** The window of displacement_opportunities: the same 90 days as technology_displacements. */
const recentWindow = `now() - interval '${displacementWindowDays} days'`

/**
 * CTEs `latest_observation` (each company's latest) and `in_use_now` (the products it shows, as
 * the loader keeps them: technology_in_use, LogDerived.ts).
 */
const inUseNow = (t: {
  readonly companyObservations: string
  readonly inUse: string
}): string => `latest_observation AS (
  SELECT company_id, max(observed_at) AS observed_at FROM ${t.companyObservations} GROUP BY company_id
),
in_use_now AS (SELECT company_id, category, subcategory, product, vendor FROM ${t.inUse})`

/**
 * The rows of `relation` (with product and vendor, plus `columns`) with the role of each market
 * entry they match, each once. Two equality joins rather than one OR, so both can hash.
 */
const withRoles = (t: Tables, relation: string, columns: ReadonlyArray<string>): string => {
  const picked = [...columns, "product", "vendor"].map((column) => `x.${column}`).join(", ")
  return `SELECT ${picked}, m.role FROM ${relation} x
  JOIN ${t.market} m ON m.product = x.product AND (m.vendor IS NULL OR m.vendor = x.vendor)
  UNION
  SELECT ${picked}, m.role FROM ${relation} x JOIN ${t.market} m ON m.product IS NULL AND m.vendor = x.vendor`
}

const firmographics = {
  company_domain: "the company's first web domain (companies.company_domains[1])",
  company_size_range: "the company's employee count band as the provider labels it (companies.size_range)",
}

const profile: View = {
  name: "account_technology_profile",
  doc: "one row per company held: its firmographics, the products in use at its latest observation, and whether (and how many of) them are ours, rivals' or complements' (the market table)",
  columns: {
    company_id: "the company (companies.company_id)",
    company_name: "the company's name",
    company_domain: firmographics.company_domain,
    company_domains: "all of the company's web domains",
    company_size_range: firmographics.company_size_range,
    company_size: "the company's employee count (companies.size)",
    revenue_range: "the company's revenue band as the provider labels it",
    naics_codes: "the company's NAICS industry codes",
    sic_codes: "the company's SIC industry codes",
    observed_at: "the company's latest observation (bought with its technologies); null when never observed",
    products: "the products in use at that observation, by name in order; null when never observed",
    uses_ours: "whether one of them is ours (market role ours); null when never observed",
    uses_rival: "whether one of them is a rival's; null when never observed",
    uses_complement: "whether one of them is a complement; null when never observed",
    ours_count: "how many of them are ours; null when never observed",
    rivals_count: "how many of them are rivals'; null when never observed",
    complements_count: "how many of them are complements; null when never observed",
  },
  sql: (schema) => {
    const t = tablesOf(schema)
    const seen = (expression: string) => `CASE WHEN l.observed_at IS NOT NULL THEN ${expression} END`
    return `WITH ${inUseNow(t)},
roled AS (${withRoles(t, "in_use_now", ["company_id"])}),
products AS (
  SELECT company_id, array_agg(DISTINCT product ORDER BY product) AS products FROM in_use_now GROUP BY company_id
),
role_counts AS (
  SELECT company_id, count(*) FILTER (WHERE role = 'ours') AS ours, count(*) FILTER (WHERE role = 'rival') AS rivals,
    count(*) FILTER (WHERE role = 'complement') AS complements
  FROM roled GROUP BY company_id
)
SELECT c.company_id, c.company_name, c.company_domains[1] AS company_domain, c.company_domains,
  c.size_range AS company_size_range, c.size AS company_size, c.revenue_range, c.naics_codes, c.sic_codes,
  l.observed_at, ${seen("coalesce(p.products, '{}')")} AS products,
  ${seen("coalesce(r.ours, 0) > 0")} AS uses_ours, ${seen("coalesce(r.rivals, 0) > 0")} AS uses_rival,
  ${seen("coalesce(r.complements, 0) > 0")} AS uses_complement,
  ${seen("coalesce(r.ours, 0)")} AS ours_count, ${seen("coalesce(r.rivals, 0)")} AS rivals_count,
  ${seen("coalesce(r.complements, 0)")} AS complements_count
FROM ${t.companies} c
LEFT JOIN latest_observation l ON l.company_id = c.company_id
LEFT JOIN products p ON p.company_id = c.company_id
LEFT JOIN role_counts r ON r.company_id = c.company_id`
  },
}

const topProducts: View = {
  name: "top_products_by_category",
  doc: "per technology category, its products by the companies whose latest observation shows them in use, ranked",
  columns: {
    category: "the technology category (as the companies' latest observations say it)",
    product: "the product (taxonomy_products.product)",
    vendor: "the product's vendor",
    companies_using: "companies whose latest observation shows the product in use",
    rank_in_category: "1 for the most used product of the category; ties share a rank (rank())",
  },
  sql: (schema) => {
    const t = tablesOf(schema)
    return `WITH ${inUseNow(t)},
used AS (
  SELECT category, product, vendor, count(DISTINCT company_id) AS companies_using
  FROM in_use_now GROUP BY category, product, vendor
)
SELECT category, product, vendor, companies_using,
  rank() OVER (PARTITION BY category ORDER BY companies_using DESC) AS rank_in_category
FROM used`
  },
}

const rivalAccounts: View = {
  name: "rival_accounts",
  doc: "accounts whose latest observation shows a rival's product in use and none of ours, with since when",
  columns: {
    company_id: "the company (companies.company_id)",
    company_name: "the company's name (companies.company_name)",
    company_domain: firmographics.company_domain,
    company_size_range: firmographics.company_size_range,
    rival_products: "the rivals' products in use at its latest observation, by name in order",
    using_rival_since:
      "the first observation of the unbroken run of observations, up to the latest, that showed one of them in use: since when it has been on a rival, as far as the observations tell",
  },
  sql: (schema) => {
    const t = tablesOf(schema)
    // A rival's product in use now has been since its last adoption (the observation after the
    // last that did not show it: technology_log_changes), else since its first sighting (then every
    // observation showed it). Both looked up by the company's key, for the accounts that count.
    const same = (row: string) => `${row}.company_id = r.company_id AND ${sameProduct(row, "r")}`
    return `WITH ${inUseNow(t)},
roled AS (${withRoles(t, "in_use_now", ["company_id"])}),
targets AS (
  SELECT r.company_id, r.product, r.vendor FROM roled r
  WHERE r.role = 'rival' AND NOT EXISTS (SELECT 1 FROM roled o WHERE o.company_id = r.company_id AND o.role = 'ours')
),
held AS (
  SELECT r.company_id, r.product, coalesce(
    (SELECT max(c.observed_at) FROM ${t.logChanges} c WHERE ${same("c")} AND c.change = 'adopted'),
    (SELECT s.first_seen_at FROM ${t.sightings} s WHERE ${same("s")})) AS since
  FROM targets r
)
SELECT h.company_id, c.company_name, c.company_domains[1] AS company_domain, c.size_range AS company_size_range,
  array_agg(DISTINCT h.product ORDER BY h.product) AS rival_products, min(h.since) AS using_rival_since
FROM held h
LEFT JOIN ${t.companies} c ON c.company_id = h.company_id
GROUP BY h.company_id, c.company_name, c.company_domains, c.size_range`
  },
}

/** A product and its vendor in words, for the evidence sentences. */
const productText = (alias: string): string =>
  `${alias}.product || coalesce(' (' || ${alias}.vendor || ')', '')`

/** A timestamptz as its UTC day, for the evidence sentences. */
const day = (column: string): string => `to_char(${column} AT TIME ZONE 'UTC', 'YYYY-MM-DD')`

/**
 * CTE `market_changes`: rivals' products dropped and complements adopted, between a company's
 * consecutive observations, the later one in the window: the log's changes the loader keeps
 * (technology_log_changes, LogDerived.ts), the window's and the market's only.
 */
const marketChanges = (t: Tables): string => `market_changes AS (
  SELECT x.company_id, x.company_name, x.product, x.vendor, x.change, x.observed_at, x.previous_at
  FROM ${t.logChanges} x
  WHERE x.observed_at >= ${recentWindow} AND CASE x.change
    WHEN 'adopted' THEN ${hasRole(t.market, "complement", "x")}
    ELSE ${hasRole(t.market, "rival", "x")} END
)`

/** The rows of market_changes of one kind, as opportunities with their evidence. */
const changedWithRole = (change: "adopted" | "dropped", role: string, reason: string): string => {
  const verb = change === "adopted" ? "started using" : "stopped using"
  const before = change === "adopted" ? "not in use" : "in use"
  const after = change === "adopted" ? "in use" : "not"
  return `SELECT '${reason}' AS reason, x.company_id, x.company_name, x.product, x.vendor, '${role}' AS role,
    x.observed_at AS happened_at,
    x.company_name || ' ${verb} ' || ${productText("x")} || ': ${before} at its observation of ' || ${day("x.previous_at")}
      || ', ${after} at that of ' || ${day("x.observed_at")} AS evidence,
    NULL::text AS contact_id, NULL::text AS contact_name
  FROM market_changes x WHERE x.change = '${change}'`
}

/**
 * CTEs for the champions: moves seen in the window, from a company whose last observation before
 * the move showed one of ours (`left_ours`, the products listed). The joined company's rivals'
 * products are looked up per move (`joinedRivals`).
 */
const champions = (t: Tables): string => `moves AS (
  SELECT * FROM ${t.jobChanges}
  WHERE 'company' = ANY(changed) AND from_company_id IS NOT NULL AND to_company_id IS NOT NULL
    AND to_company_id <> from_company_id AND observed_at >= ${recentWindow}
),
left_seen AS (
  SELECT m.change_id, m.from_company_id, max(o.observed_at) AS observed_at
  FROM moves m JOIN ${t.companyObservations} o ON o.company_id = m.from_company_id AND o.observed_at < m.observed_at
  GROUP BY m.change_id, m.from_company_id
),
left_ours AS (
  SELECT s.change_id, s.observed_at, string_agg(DISTINCT p.product, ', ' ORDER BY p.product) AS products
  FROM left_seen s
  JOIN ${t.technologyObservations} p ON p.company_id = s.from_company_id AND p.observed_at = s.observed_at
  WHERE ${hasRole(t.market, "ours", "p")}
  GROUP BY s.change_id, s.observed_at
)`

/**
 * The rivals' products at the latest observation of the company move `m` joined, looked up by the
 * log's key for the few moves that count, not for every company held.
 */
const joinedRivals = (t: Tables): string => `CROSS JOIN LATERAL (
    SELECT l.observed_at, l.company_name FROM ${t.companyObservations} l
    WHERE l.company_id = m.to_company_id ORDER BY l.observed_at DESC LIMIT 1
  ) l
  CROSS JOIN LATERAL (
    SELECT DISTINCT u.product, u.vendor FROM ${t.technologyObservations} u
    WHERE u.company_id = m.to_company_id AND u.observed_at = l.observed_at AND ${hasRole(t.market, "rival", "u")}
  ) j`

export const opportunities: View = {
  name: "displacement_opportunities",
  doc: `accounts to act on, each with the reason and its evidence, seen in the last ${displacementWindowDays} days: one that dropped a rival's product, one that adopted a complement, and one a champion of ours joined that uses a rival's (a contact who left a company using one of ours, one row per rival product there)`,
  columns: {
    reason: "'dropped a rival', 'adopted a complement' or 'champion joined a rival account'",
    company_id:
      "the account (companies.company_id): the one that dropped or adopted, or the one the champion joined",
    company_name: "its name",
    company_domain: firmographics.company_domain,
    company_size_range: firmographics.company_size_range,
    product:
      "the rival's product dropped, the complement adopted, or the rival's product in use where the champion went",
    vendor: "the product's vendor",
    role: "the product's role in the market: rival or complement",
    happened_at:
      "the observation that showed it: the drop or adoption, or the contact's observation that showed the move (it happened since the one before)",
    evidence: "what the observations show, in a sentence with the dates (UTC days) and products",
    contact_id: "for a champion, the contact (contacts.match_id); else null",
    contact_name: "for a champion, the contact's name; else null",
  },
  sql: (schema) => {
    const t = tablesOf(schema)
    return `WITH ${marketChanges(t)},
${champions(t)},
found AS (
  ${changedWithRole("dropped", "rival", "dropped a rival")}
  UNION ALL
  ${changedWithRole("adopted", "complement", "adopted a complement")}
  UNION ALL
  SELECT 'champion joined a rival account', m.to_company_id, coalesce(l.company_name, m.to_company_name), j.product,
    j.vendor, 'rival', m.observed_at,
    coalesce(m.display_name, m.match_id) || ' left ' || coalesce(m.from_company_name, m.from_company_id::text)
      || ', which used ' || o.products || ' (ours) at its observation of ' || ${day("o.observed_at")}
      || ', and was seen at ' || coalesce(m.to_company_name, m.to_company_id::text) || ' on ' || ${day("m.observed_at")}
      || ', which uses ' || ${productText("j")} || ' at its observation of ' || ${day("l.observed_at")},
    m.match_id, m.display_name
  FROM moves m
  JOIN left_ours o ON o.change_id = m.change_id
  ${joinedRivals(t)}
)
SELECT f.reason, f.company_id, f.company_name, c.company_domains[1] AS company_domain,
  c.size_range AS company_size_range, f.product, f.vendor, f.role, f.happened_at, f.evidence,
  f.contact_id, f.contact_name
FROM found f LEFT JOIN ${t.companies} c ON c.company_id = f.company_id`
  },
}

export const marketViews: ReadonlyArray<View> = [profile, topProducts, rivalAccounts, opportunities]
