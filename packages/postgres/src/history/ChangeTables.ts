/**
 * What changed between two observations of a company or a contact, kept as rows: technology
 * adoptions and drops (`technology_changes`) and job changes (`job_changes`). A refresh pays for
 * a new observation; the merge overwrites the old one, so the difference is taken first, in the
 * same transaction, from the staged batch against the rows it is about to replace (Merge.ts), when
 * the batch's observation is not the older.
 * The first observation of a company or contact is not a change (there is nothing to compare
 * with), and loading the same data again finds no difference. Only what both observations carry
 * is compared: a field left out of either (`exclude_fields`, a deselected field: absent from its
 * `_raw`) is not a change, so a change of config never reads as a change at the provider.
 */

import { ident, qualified } from "../database/Sql.ts"
import type { ColumnShape, TableShape } from "../schema/Table.ts"
import { named } from "../schema/Tables.ts"
import { carriedTechnologies } from "./Observations.ts"

const changeId: ColumnShape = {
  name: "change_id",
  type: "bigint",
  identity: true,
  notNull: true,
  doc: "the order the changes were found in",
}

const observedColumns: ReadonlyArray<ColumnShape> = [
  {
    name: "observed_at",
    type: "timestamptz",
    notNull: true,
    doc: "when the observation that shows the change was made (the record's fetched_at; the load's time when it has none)",
  },
  {
    name: "last_seen_at",
    type: "timestamptz",
    doc: "when the observation before it was made (fetched_at of the row it replaced, else that row's _synced_at): the change happened in between",
  },
  {
    name: "loaded_at",
    type: "timestamptz",
    notNull: true,
    default: "now()",
    doc: "when the loader wrote it (the load transaction's time)",
  },
  {
    name: "run_id",
    type: "bigint",
    doc: "the run that saw it (_sync_runs.id); null for a load no run recorded",
  },
]

export const technologyChangesTable: TableShape = {
  name: "technology_changes",
  doc: "technologies a company started (adopted) or stopped (dropped) using between two observations of it",
  primaryKey: [changeId.name],
  columns: [
    changeId,
    { name: "company_id", type: "bigint", notNull: true, doc: "the company (companies.company_id)" },
    { name: "company_name", type: "text", doc: "the company's name as the newer observation says it" },
    { name: "category", type: "text", doc: "the product's technology category" },
    { name: "subcategory", type: "text", doc: "the product's technology subcategory" },
    { name: "product", type: "text", notNull: true, doc: "the product (taxonomy_products.product)" },
    { name: "vendor", type: "text", doc: "the product's vendor" },
    {
      name: "change",
      type: "text",
      notNull: true,
      doc: "adopted (in use now, not before) or dropped (in use before, not now); in use means in_use is not false",
    },
    {
      name: "first_observed_at",
      type: "timestamptz",
      doc: "adoptions: when it was first observed in use (observed_at); null for drops",
    },
    ...observedColumns,
  ],
}

const jobColumns = (side: "from" | "to", when: string): ReadonlyArray<ColumnShape> => [
  { name: `${side}_company_id`, type: "bigint", doc: `the company ${when} (companies.company_id)` },
  { name: `${side}_company_name`, type: "text", doc: `the company's name ${when}` },
  { name: `${side}_job_title`, type: "text", doc: `the job title ${when}` },
  { name: `${side}_job_level`, type: "text", doc: `the job level code ${when} (job_levels.code)` },
  {
    name: `${side}_job_department`,
    type: "text",
    doc: `the job department code ${when} (job_departments.code)`,
  },
]

export const jobChangesTable: TableShape = {
  name: "job_changes",
  doc: "contacts whose company, job title, level or department differ between two observations of them",
  primaryKey: [changeId.name],
  columns: [
    changeId,
    { name: "match_id", type: "text", notNull: true, doc: "the contact (contacts.match_id)" },
    { name: "display_name", type: "text", doc: "the contact's name as the newer observation says it" },
    ...jobColumns("from", "before"),
    ...jobColumns("to", "after"),
    {
      name: "changed",
      type: "text[]",
      notNull: true,
      doc: "what differs: any of company, title, level, department",
    },
    ...observedColumns,
  ],
}

export const tables: ReadonlyArray<TableShape> = [technologyChangesTable, jobChangesTable]

/** The staging tables a batch's merge reads (Merge.ts names them). */
export interface Staged {
  readonly parent: string
  readonly children: ReadonlyMap<string, string>
}

const runLiteral = (runId: number | undefined): string => {
  if (runId === undefined) return "NULL::bigint"
  if (!Number.isSafeInteger(runId)) throw new RangeError(`run id ${runId} is not an integer`)
  return `${runId}::bigint`
}

const columnList = (table: TableShape, skip: ReadonlyArray<string>): string =>
  table.columns
    .filter((column) => !skip.includes(column.name))
    .map((column) => ident(column.name))
    .join(", ")

/**
 * Adoptions and drops of the batch's companies that were loaded before: their products in use
 * as staged against those in use in company_technologies now (before the merge replaces them).
 */
/**
 * Only an observation as new as the row it meets, or newer, is compared with it: one loaded out of
 * order (an older file replayed) is not news, and would read as every change undone.
 */
const newer = `coalesce(s.fetched_at, now()) >= coalesce(p.fetched_at, p."_synced_at")`

export const technologySql = (schema: string, staged: Staged, runId: number | undefined): string => {
  const companies = qualified(schema, named.companies.name)
  const technologies = qualified(schema, named.companyTechnologies.name)
  const stagedTechnologies = staged.children.get(named.companyTechnologies.name)
  if (stagedTechnologies === undefined) throw new Error("companies are staged without their technologies")
  const sameProduct =
    "x.company_id = y.company_id AND x.product = y.product AND x.vendor IS NOT DISTINCT FROM y.vendor"
  return `INSERT INTO ${qualified(schema, technologyChangesTable.name)} (${columnList(technologyChangesTable, ["change_id", "loaded_at"])})
WITH seen AS (
  SELECT p.company_id, coalesce(p.fetched_at, p."_synced_at") AS last_seen_at, s.company_name,
    coalesce(s.fetched_at, now()) AS observed_at
  FROM ${companies} p JOIN ${staged.parent} s ON s.company_id = p.company_id
  WHERE p.company_id = ANY(ARRAY(SELECT company_id FROM ${staged.parent}))
    AND ${carriedTechnologies("p")} AND ${carriedTechnologies("s")} AND ${newer}
),
before AS (
  SELECT DISTINCT company_id, category, subcategory, product, vendor FROM ${technologies}
  WHERE company_id = ANY(ARRAY(SELECT company_id FROM seen)) AND in_use IS NOT FALSE AND product IS NOT NULL
),
after AS (
  SELECT DISTINCT company_id, category, subcategory, product, vendor FROM ${stagedTechnologies}
  WHERE company_id IN (SELECT company_id FROM seen) AND in_use IS NOT FALSE AND product IS NOT NULL
),
found AS (
  SELECT x.*, 'adopted' AS change FROM after x WHERE NOT EXISTS (SELECT 1 FROM before y WHERE ${sameProduct})
  UNION ALL
  SELECT x.*, 'dropped' AS change FROM before x WHERE NOT EXISTS (SELECT 1 FROM after y WHERE ${sameProduct})
)
SELECT f.company_id, seen.company_name, f.category, f.subcategory, f.product, f.vendor, f.change,
  CASE WHEN f.change = 'adopted' THEN seen.observed_at END, seen.observed_at, seen.last_seen_at, ${runLiteral(runId)}
FROM found f JOIN seen ON seen.company_id = f.company_id
ORDER BY f.company_id, f.change, f.product, f.vendor`
}

/** Each job field: its label, its column, and whether an observation (`row`) carried it. */
const jobFields: ReadonlyArray<readonly [string, string, (row: string) => string]> = [
  // The company's id comes from company_id or the nested company block (Tables.ts).
  [
    "company",
    "company_id",
    (row) => `coalesce(${row}."_raw" ? 'company_id' OR (${row}."_raw" -> 'company') ? 'id', false)`,
  ],
  ["title", "job_title", (row) => `coalesce(${row}."_raw" ? 'job_title', false)`],
  ["level", "job_level", (row) => `coalesce(${row}."_raw" ? 'job_level', false)`],
  ["department", "job_department", (row) => `coalesce(${row}."_raw" ? 'job_department', false)`],
]

/** Job changes of the batch's contacts that were loaded before, against their rows now. */
export const jobSql = (schema: string, staged: Staged, runId: number | undefined): string => {
  const contacts = qualified(schema, named.contacts.name)
  // A field differs only where both observations carry it.
  const differs = ([, column, carried]: (typeof jobFields)[number]) =>
    `(p.${column} IS DISTINCT FROM s.${column} AND ${carried("p")} AND ${carried("s")})`
  const changed = jobFields.map((field) => `CASE WHEN ${differs(field)} THEN '${field[0]}' END`)
  return `INSERT INTO ${qualified(schema, jobChangesTable.name)} (${columnList(jobChangesTable, ["change_id", "loaded_at"])})
SELECT s.match_id, s.display_name,
  p.company_id, p.company_name, p.job_title, p.job_level, p.job_department,
  s.company_id, s.company_name, s.job_title, s.job_level, s.job_department,
  array_remove(ARRAY[${changed.join(", ")}], NULL),
  coalesce(s.fetched_at, now()), coalesce(p.fetched_at, p."_synced_at"), ${runLiteral(runId)}
FROM ${contacts} p JOIN ${staged.parent} s ON s.match_id = p.match_id
WHERE p.match_id = ANY(ARRAY(SELECT match_id FROM ${staged.parent})) AND ${newer}
  AND (${jobFields.map(differs).join(" OR ")})
ORDER BY s.match_id`
}
