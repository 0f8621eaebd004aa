/**
 * Views for the common questions, recreated by every Ddl.ensure (so a new version can change
 * them). "Uses" means a company_technologies row whose in_use is not false.
 */
import { qualified } from "./Sql.ts"
import { named } from "./Tables.ts"

const companies = named.companies.name
const technologies = named.companyTechnologies.name
const contacts = named.contacts.name

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
    doc: "contacts (and their companies) per job department and job level",
    sql: (
      schema,
    ) => `SELECT job_department, job_level, count(*) AS contacts, count(DISTINCT company_id) AS companies
FROM ${qualified(schema, contacts)}
GROUP BY job_department, job_level`,
  },
]
