/**
 * Views for the common questions, recreated by every Ddl.ensure (so a new version can change
 * them). "Uses" means a company_technologies row whose in_use is not false.
 */
import { jobDepartments, jobLevels } from "./Labels.ts"
import { qualified } from "./Sql.ts"
import { named } from "./Tables.ts"

const companies = named.companies.name
const technologies = named.companyTechnologies.name
const contacts = named.contacts.name
const sites = named.companySites.name
const levels = jobLevels.table.name
const departments = jobDepartments.table.name

export interface View {
  readonly name: string
  readonly doc: string
  readonly sql: (schema: string) => string
}

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

export const views: ReadonlyArray<View> = [
  adoption(
    "technology_adoption_by_category",
    ["category"],
    "companies using at least one product of each category, and their share of all companies",
  ),
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
    doc: "one row per contact and product their company uses: filter on product (and vendor)",
    sql: (schema) => `SELECT DISTINCT t.product, t.vendor, t.category, t.subcategory,
  c.match_id, c.display_name, c.job_title, c.job_level, c.job_department, c.email, c.company_id, c.company_name
FROM ${qualified(schema, technologies)} t
JOIN ${qualified(schema, contacts)} c ON c.company_id = t.company_id
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
