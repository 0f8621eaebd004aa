/**
 * Every observation of a company's technologies, kept as rows: `company_observations` (one per
 * purchase of a company that carried its technologies) and `technology_observations` (the
 * products in use at each). The keyed tables hold only the latest observation and the change
 * tables only differences; the install base ("since when has it used this", "how often was it
 * seen"), its trend per month and champion moves (the products at a company when a contact left
 * it) need each observation. Written by the merge in the batch's transaction (Merge.ts), from the
 * staged batch. An observation is a company and its `fetched_at`: loading the same records again
 * adds nothing (ON CONFLICT DO NOTHING, and the products only with a new observation), and records
 * loaded out of order take their place by time (the views order observations by observed_at).
 */
import { ident, qualified } from "../database/Sql.ts"
import type { ColumnShape, TableShape } from "../schema/Table.ts"
import { named } from "../schema/Tables.ts"

const observedAt: ColumnShape = {
  name: "observed_at",
  type: "timestamptz",
  notNull: true,
  doc: "when the company was observed: the purchase's fetched_at (the load's time when it has none)",
}

const runId: ColumnShape = {
  name: "run_id",
  type: "bigint",
  doc: "the run that bought the observation (_sync_runs.id); null for a load no run recorded",
}

export const companyObservationsTable: TableShape = {
  name: "company_observations",
  doc: "one row per observation of a company's technologies: each purchase of it that carried them",
  primaryKey: ["company_id", "observed_at"],
  columns: [
    { name: "company_id", type: "bigint", notNull: true, doc: "the company (companies.company_id)" },
    observedAt,
    { name: "company_name", type: "text", doc: "the company's name as that observation says it" },
    {
      name: "products_in_use",
      type: "integer",
      notNull: true,
      doc: "how many products that observation shows in use",
    },
    runId,
    {
      name: "loaded_at",
      type: "timestamptz",
      notNull: true,
      default: "now()",
      doc: "when the loader wrote it (the load transaction's time)",
    },
  ],
}

export const technologyObservationsTable: TableShape = {
  name: "technology_observations",
  doc: "the products in use at each observation of a company (company_observations): one row per observation and product",
  // Led by the observation: the views find an observation's products through this index.
  primaryKey: ["company_id", "observed_at", "observation_id"],
  columns: [
    {
      name: "observation_id",
      type: "bigint",
      identity: true,
      notNull: true,
      doc: "the order the rows were written in",
    },
    { name: "company_id", type: "bigint", notNull: true, doc: "the company (companies.company_id)" },
    observedAt,
    { name: "category", type: "text", doc: "the product's technology category as that observation says it" },
    {
      name: "subcategory",
      type: "text",
      doc: "the product's technology subcategory as that observation says it",
    },
    { name: "product", type: "text", notNull: true, doc: "the product in use (taxonomy_products.product)" },
    { name: "vendor", type: "text", doc: "the product's vendor" },
  ],
}

export const tables: ReadonlyArray<TableShape> = [companyObservationsTable, technologyObservationsTable]

/** Whether an observation (`row`, a companies row or a staged one) carried its technologies. */
export const carriedTechnologies = (row: string): string => `coalesce(${row}."_raw" ? 'technologies', false)`

const runLiteral = (id: number | undefined): string => {
  if (id === undefined) return "NULL::bigint"
  if (!Number.isSafeInteger(id)) throw new RangeError(`run id ${id} is not an integer`)
  return `${id}::bigint`
}

/**
 * The statement that records the observations in `companies` (a companies table or its staged
 * batch, keyed by company_id) with the products `technologies` (its technologies, same shape)
 * lists in use, each product once (a product listed under two categories is one product in use);
 * `undated` is the time of a row without fetched_at. A company observation already recorded (same
 * company, same time) is skipped, products included, so a reload or a rerun of this statement
 * changes nothing. A record without fetched_at (its `_salesintel_fetched_at` excluded) cannot be
 * told from a new purchase: each load of it is an observation at the load's time.
 */
export const recordSql = (
  schema: string,
  companies: string,
  technologies: string,
  run: number | undefined,
  undated = "now()",
): string => {
  const inUse = "t.in_use IS NOT FALSE AND t.product IS NOT NULL"
  const list = (table: TableShape) =>
    table.columns
      .filter((column) => column.name !== "observation_id" && column.name !== "loaded_at")
      .map((column) => ident(column.name))
      .join(", ")
  return `WITH counted AS (
  SELECT t.company_id, count(DISTINCT (t.product, t.vendor))::integer AS products
  FROM ${technologies} t WHERE ${inUse} GROUP BY t.company_id
),
observed AS (
  INSERT INTO ${qualified(schema, companyObservationsTable.name)} (${list(companyObservationsTable)})
  SELECT c.company_id, coalesce(c.fetched_at, ${undated}), c.company_name, coalesce(n.products, 0), ${runLiteral(run)}
  FROM ${companies} c LEFT JOIN counted n ON n.company_id = c.company_id
  WHERE ${carriedTechnologies("c")}
  ON CONFLICT (company_id, observed_at) DO NOTHING
  RETURNING company_id, observed_at
)
INSERT INTO ${qualified(schema, technologyObservationsTable.name)} (${list(technologyObservationsTable)})
SELECT DISTINCT ON (o.company_id, o.observed_at, t.product, t.vendor)
  o.company_id, o.observed_at, t.category, t.subcategory, t.product, t.vendor
FROM observed o JOIN ${technologies} t ON t.company_id = o.company_id
WHERE ${inUse}
ORDER BY o.company_id, o.observed_at, t.product, t.vendor, t.category, t.subcategory`
}

/** The statement that records a staged batch of companies' observations (with their technologies). */
export const recordStagedSql = (
  schema: string,
  staged: { readonly parent: string; readonly children: ReadonlyMap<string, string> },
  run: number | undefined,
): string => {
  const technologies = staged.children.get(named.companyTechnologies.name)
  if (technologies === undefined) throw new Error("companies are staged without their technologies")
  return recordSql(schema, staged.parent, technologies, run)
}

/** The companies held when observations began to be kept: one observation each, as their rows say. */
export const seedSql = (schema: string): string =>
  recordSql(
    schema,
    qualified(schema, named.companies.name),
    qualified(schema, named.companyTechnologies.name),
    undefined,
    `c."_synced_at"`,
  )
