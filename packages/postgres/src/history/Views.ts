/**
 * Views for the common questions, recreated by every Ddl.ensure (so a new version can change
 * them). "Uses" means a company_technologies row whose in_use is not false.
 */

import { qualified } from "../database/Sql.ts"
import { jobDepartments, jobLevels } from "../schema/Labels.ts"
import { named } from "../schema/Tables.ts"
import { jobChangesTable, technologyChangesTable } from "./ChangeTables.ts"
import { intelligenceViews } from "./Intelligence.ts"
import { marketTrendViews } from "./MarketTrends.ts"
import { marketViews } from "./MarketViews.ts"
import type { View } from "./View.ts"

export type { View }

const companies = named.companies.name
const technologies = named.companyTechnologies.name
const contacts = named.contacts.name
const sites = named.companySites.name
const levels = jobLevels.table.name
const departments = jobDepartments.table.name
const technologyChanges = technologyChangesTable.name
const jobChanges = jobChangesTable.name

/** What "recent" means in the change views: observed in the last 30 days. */
const recent = "observed_at >= now() - interval '30 days'"

const changeCounts = (columns: ReadonlyArray<string>, doc: string, name: string): View => ({
  name,
  doc,
  sql: (schema) => `SELECT ${columns.join(", ")},
  count(*) FILTER (WHERE change = 'adopted') AS adoptions,
  count(*) FILTER (WHERE change = 'adopted' AND ${recent}) AS adoptions_30d,
  count(*) FILTER (WHERE change = 'dropped') AS drops,
  count(*) FILTER (WHERE change = 'dropped' AND ${recent}) AS drops_30d,
  count(DISTINCT company_id) FILTER (WHERE change = 'adopted') AS companies_adopting,
  count(DISTINCT company_id) FILTER (WHERE change = 'dropped') AS companies_dropping,
  max(observed_at) AS last_observed_at
FROM ${qualified(schema, technologyChanges)}
GROUP BY ${columns.join(", ")}`,
})

/** `recent_technology_adoptions` or `recent_technology_drops`: one shape, the change apart. */
const recentChanges = (change: "adopted" | "dropped"): View => {
  const what = change === "adopted" ? "adoptions" : "drops"
  return {
    name: `recent_technology_${what}`,
    doc: `${what} observed in the last 30 days, with the company's size and domains (newest first when ordered by observed_at)`,
    columns: {
      observed_at: `the observation that showed the ${change === "adopted" ? "adoption" : "drop"}`,
      company_id: "the company (companies.company_id)",
      company_name: "the company's name as that observation says it",
      company_size: "the company's employee count (companies.size)",
      company_size_range:
        "the company's employee count band as the provider labels it (companies.size_range)",
      company_domains: "the company's web domains",
      category: "the product's technology category",
      subcategory: "the product's technology subcategory",
      product: "the product (taxonomy_products.product)",
      vendor: "the product's vendor",
      first_observed_at: "adoptions: when it was first observed in use (observed_at); null for drops",
      last_seen_at: "the company's observation before: the change happened in between",
      run_id: "the run that bought the observation (_sync_runs.id)",
    },
    sql: (schema) => `SELECT t.observed_at, t.company_id, t.company_name, co.size AS company_size,
  co.size_range AS company_size_range, co.company_domains,
  t.category, t.subcategory, t.product, t.vendor, t.first_observed_at, t.last_seen_at, t.run_id
FROM ${qualified(schema, technologyChanges)} t
LEFT JOIN ${qualified(schema, companies)} co ON co.company_id = t.company_id
WHERE t.change = '${change}' AND t.${recent}`,
  }
}

const changeViews: ReadonlyArray<View> = [
  changeCounts(
    ["category", "subcategory", "product", "vendor"],
    "technology adoptions and drops per product: all found, and those observed in the last 30 days",
    "technology_changes_by_product",
  ),
  changeCounts(
    ["category"],
    "technology adoptions and drops per category: all found, and those observed in the last 30 days",
    "technology_changes_by_category",
  ),
  recentChanges("adopted"),
  recentChanges("dropped"),
  {
    name: "technology_drops",
    doc: "every drop found: the product a company stopped using, when it was last seen in use and when it was seen gone",
    sql: (
      schema,
    ) => `SELECT t.observed_at, t.last_seen_at, t.company_id, t.company_name, co.size AS company_size,
  co.size_range AS company_size_range, co.company_domains, t.category, t.subcategory, t.product, t.vendor, t.run_id
FROM ${qualified(schema, technologyChanges)} t
LEFT JOIN ${qualified(schema, companies)} co ON co.company_id = t.company_id
WHERE t.change = 'dropped'`,
  },
  {
    name: "job_changes_by_department_level",
    doc: "job changes per department and level the contacts moved to, with the codes' labels: all found, in the last 30 days, and what changed",
    sql: (schema) => `SELECT j.to_job_department AS job_department, j.to_job_level AS job_level,
  d.label AS job_department_label, l.label AS job_level_label,
  count(*) AS job_changes,
  count(*) FILTER (WHERE j.${recent}) AS job_changes_30d,
  count(*) FILTER (WHERE 'company' = ANY(j.changed)) AS company_moves,
  count(*) FILTER (WHERE 'title' = ANY(j.changed)) AS title_changes,
  count(*) FILTER (WHERE 'level' = ANY(j.changed)) AS level_changes,
  count(*) FILTER (WHERE 'department' = ANY(j.changed)) AS department_changes
FROM ${qualified(schema, jobChanges)} j
LEFT JOIN ${qualified(schema, departments)} d ON d.code = j.to_job_department
LEFT JOIN ${qualified(schema, levels)} l ON l.code = j.to_job_level
GROUP BY j.to_job_department, j.to_job_level, d.label, l.label`,
  },
]

const adoption = (name: string, columns: ReadonlyArray<string>, doc: string): View => ({
  name,
  doc,
  sql: (schema) => `SELECT ${columns.map((column) => `t.${column}`).join(", ")},
  count(DISTINCT t.company_id) AS companies,
  round(count(DISTINCT t.company_id)::numeric / nullif((SELECT count(*) FROM ${qualified(schema, companies)}), 0), 4) AS share
FROM ${qualified(schema, technologies)} t
WHERE t.in_use IS NOT FALSE
GROUP BY ${columns.map((column) => `t.${column}`).join(", ")}`,
})

/** Companies using each category, which the report charts. */
export const adoptionByCategory: View = adoption(
  "technology_adoption_by_category",
  ["category"],
  "companies using at least one product of each category, and their share of all companies",
)

export const views: ReadonlyArray<View> = [
  ...changeViews,
  ...intelligenceViews,
  ...marketViews,
  ...marketTrendViews,
  adoptionByCategory,
  adoption(
    "technology_adoption_by_subcategory",
    ["category", "subcategory"],
    "the same per category and subcategory",
  ),
  adoption(
    "technology_adoption_by_product",
    ["category", "subcategory", "product", "vendor"],
    "the same per product (and vendor)",
  ),
  {
    name: "contacts_at_companies_using_product",
    doc: "one row per contact and product their company uses, with the job level and department labels contacts_labeled carries: filter on product (and vendor)",
    sql: (schema) => `SELECT DISTINCT t.product, t.vendor, t.category, t.subcategory,
  c.match_id, c.display_name, c.job_title, c.job_level, c.job_department, c.email, c.company_id, c.company_name,
  l.label AS job_level_label, l.seniority AS job_level_seniority, d.label AS job_department_label
FROM ${qualified(schema, technologies)} t
JOIN ${qualified(schema, contacts)} c ON c.company_id = t.company_id
LEFT JOIN ${qualified(schema, levels)} l ON l.code = c.job_level
LEFT JOIN ${qualified(schema, departments)} d ON d.code = c.job_department
WHERE t.in_use IS NOT FALSE`,
  },
  {
    name: "contacts_by_department_level",
    doc: "contacts (and their companies) per job department and job level, with the codes' labels",
    sql: (
      schema,
    ) => `SELECT c.job_department, c.job_level, count(*) AS contacts, count(DISTINCT c.company_id) AS companies,
  d.label AS job_department_label, l.label AS job_level_label
FROM ${qualified(schema, contacts)} c
LEFT JOIN ${qualified(schema, departments)} d ON d.code = c.job_department
LEFT JOIN ${qualified(schema, levels)} l ON l.code = c.job_level
GROUP BY c.job_department, c.job_level, d.label, l.label`,
  },
  {
    name: "contacts_labeled",
    doc: "every contact with its job level and department labels and the street address of the site it works at (none for remote contacts)",
    sql: (schema) => `SELECT c.*,
  l.label AS job_level_label, l.seniority AS job_level_seniority, d.label AS job_department_label,
  s.is_hq AS site_is_hq, s.street_1 AS site_street_1, s.street_2 AS site_street_2, s.city AS site_city,
  s.state AS site_state, s.zip AS site_zip, s.country AS site_country
FROM ${qualified(schema, contacts)} c
LEFT JOIN ${qualified(schema, levels)} l ON l.code = c.job_level
LEFT JOIN ${qualified(schema, departments)} d ON d.code = c.job_department
LEFT JOIN ${qualified(schema, sites)} s ON s.location_id = c.position_location_id`,
  },
]
