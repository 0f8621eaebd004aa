/**
 * The lists the demo prints after its syncs, each the first rows of a query over the views, and
 * the heading saying "top N of M" when the query has more rows than are shown: a list cut to its
 * first rows never reads as all there is.
 */
import * as Effect from "effect/Effect"
import * as Query from "./Query.ts"

export interface List {
  /** What the list shows (the view it reads in parentheses). */
  readonly title: string
  /** The query, without ORDER BY or LIMIT: its rows are what there is to list. */
  readonly query: string
  readonly orderBy: string
  readonly limit: number
}

/** The title, and "top N of M" when the list shows fewer rows than the query has. */
export const heading = (list: List, total: number): string =>
  total > list.limit ? `${list.title}: top ${list.limit} of ${total}` : list.title

/** The list's heading and its rows as a table (the `sql` command's format). */
export const render = (schema: string, list: List): ReturnType<typeof Query.sql> =>
  Effect.gen(function* () {
    const counted = yield* Query.sql(schema, `SELECT count(*) AS n FROM (${list.query}) listed`, {
      format: "json",
    })
    const total = Number((JSON.parse(counted) as ReadonlyArray<{ readonly n: unknown }>)[0]?.n ?? 0)
    const rows = yield* Query.sql(schema, `${list.query} ORDER BY ${list.orderBy} LIMIT ${list.limit}`)
    return `${heading(list, total)}\n${rows}`
  })

export const topTechnologies: List = {
  title: "Top technologies by adoption (companies using them, share of companies synced)",
  query: "SELECT product, vendor, category, companies, share FROM technology_adoption_by_product",
  orderBy: "companies DESC, product",
  limit: 10,
}

export const recentAdoptions: List = {
  title: "Technologies adopted in the last 30 days (recent_technology_adoptions)",
  query:
    "SELECT product, category, count(*) AS adoptions, string_agg(company_name, ', ' ORDER BY company_name) AS companies FROM recent_technology_adoptions GROUP BY product, category",
  orderBy: "adoptions DESC, product",
  limit: 5,
}

export const displacements: List = {
  title: "Products replaced by a rival of their subcategory (technology_displacements)",
  query:
    "SELECT company_name, subcategory, dropped_product AS dropped, adopted_product AS adopted, to_char(adopted_at, 'YYYY-MM-DD') AS seen_on FROM technology_displacements",
  orderBy: "company_name, dropped",
  limit: 5,
}

export const championMoves: List = {
  title: "Contacts who left a company and the products in use there (champion_moves)",
  query:
    "SELECT display_name, left_company_name AS left_company, joined_company_name AS joined_company, count(*) AS products_there, CASE WHEN bool_and(joined_company_uses IS NULL) THEN 'not observed' ELSE (count(*) FILTER (WHERE joined_company_uses))::text END AS also_at_new_company FROM champion_moves GROUP BY match_id, display_name, left_company_name, joined_company_name",
  orderBy: "products_there DESC, display_name",
  limit: 5,
}

export const opportunities: List = {
  title:
    "Accounts to act on (displacement_opportunities; the demo's market: ours Asana, rivals Jira and Monday.com, complements Slack and Zoom)",
  query:
    "SELECT reason, company_name, company_domain, product, to_char(happened_at, 'YYYY-MM-DD') AS happened_on, coalesce(contact_name, '') AS contact FROM displacement_opportunities",
  orderBy: "happened_at DESC, company_name, product",
  limit: 10,
}

/** Every list, in the order the demo prints them. */
export const all: ReadonlyArray<List> = [
  topTechnologies,
  recentAdoptions,
  displacements,
  championMoves,
  opportunities,
]
