/**
 * The numbers of the report's "what changed" sections, from the change tables the loader fills
 * on every refresh (technology_changes, job_changes): adoptions and drops per product and per
 * run, and job changes per department and level. A schema that a loader without those tables
 * synced (older than schema version 4) has no changes to show, not an error.
 */
import { Database, History, Schema, Sql } from "@salesintel/postgres"
import * as Effect from "effect/Effect"
import { hasRelations, text } from "../shared/Queried.ts"

export interface ProductChanges {
  readonly product: string | null
  readonly vendor: string | null
  readonly category: string | null
  readonly adopted: number
  readonly dropped: number
  /** Per run that saw changes of the product, oldest first: [run id, adopted, dropped]. */
  readonly byRun: ReadonlyArray<readonly [number | null, number, number]>
}

export interface RunChanges {
  readonly runId: number | null
  readonly adopted: number
  readonly dropped: number
  readonly jobChanges: number
}

export interface JobChanges {
  readonly departmentLabel: string | null
  readonly levelLabel: string | null
  readonly changes: number
  readonly companyMoves: number
  readonly titleChanges: number
  readonly levelChanges: number
}

export interface ChangeReport {
  readonly products: ReadonlyArray<ProductChanges>
  readonly runs: ReadonlyArray<RunChanges>
  readonly jobs: ReadonlyArray<JobChanges>
}

export const empty: ChangeReport = { products: [], runs: [], jobs: [] }

const runOf = (value: unknown): number | null =>
  value === null || value === undefined ? null : Number(value)

const technologyChanges = (schema: string) =>
  Sql.qualified(schema, History.ChangeTables.technologyChangesTable.name)
const jobChanges = (schema: string) => Sql.qualified(schema, History.ChangeTables.jobChangesTable.name)

/** Adoptions and drops per product and run; the `limit` products with the most changes. */
export const products = (schema: string, limit: number) =>
  Effect.flatMap(Database.Database, (db) =>
    db.query(
      `WITH per_run AS (
         SELECT product, vendor, min(category) AS category, run_id,
           count(*) FILTER (WHERE change = 'adopted')::int AS adopted,
           count(*) FILTER (WHERE change = 'dropped')::int AS dropped
         FROM ${technologyChanges(schema)} GROUP BY product, vendor, run_id
       ), per_product AS (
         SELECT product, vendor, min(category) AS category, sum(adopted)::int AS adopted, sum(dropped)::int AS dropped,
           json_agg(json_build_array(run_id, adopted, dropped) ORDER BY run_id NULLS FIRST) AS by_run
         FROM per_run GROUP BY product, vendor
       )
       SELECT * FROM per_product
       ORDER BY adopted + dropped DESC, product NULLS LAST, vendor NULLS LAST LIMIT $1`,
      [limit],
    ),
  ).pipe(
    Effect.map((rows) =>
      rows.map(
        (row): ProductChanges => ({
          product: text(row.product),
          vendor: text(row.vendor),
          category: text(row.category),
          adopted: Number(row.adopted),
          dropped: Number(row.dropped),
          byRun: (row.by_run as ReadonlyArray<[unknown, unknown, unknown]>).map(
            ([run, adopted, dropped]) => [runOf(run), Number(adopted), Number(dropped)] as const,
          ),
        }),
      ),
    ),
  )

/** Per run that found changes, oldest first: adoptions, drops and job changes. */
export const runs = (schema: string) =>
  Effect.flatMap(Database.Database, (db) =>
    db.query(
      `SELECT run_id, sum(adopted)::int AS adopted, sum(dropped)::int AS dropped, sum(jobs)::int AS jobs FROM (
         SELECT run_id, count(*) FILTER (WHERE change = 'adopted') AS adopted,
           count(*) FILTER (WHERE change = 'dropped') AS dropped, 0 AS jobs
         FROM ${technologyChanges(schema)} GROUP BY run_id
         UNION ALL
         SELECT run_id, 0, 0, count(*) FROM ${jobChanges(schema)} GROUP BY run_id
       ) c GROUP BY run_id ORDER BY run_id NULLS FIRST`,
    ),
  ).pipe(
    Effect.map((rows) =>
      rows.map(
        (row): RunChanges => ({
          runId: runOf(row.run_id),
          adopted: Number(row.adopted),
          dropped: Number(row.dropped),
          jobChanges: Number(row.jobs),
        }),
      ),
    ),
  )

/** Job changes per department and level moved to (labels from the lookup tables), and what changed. */
export const jobs = (schema: string) =>
  Effect.flatMap(Database.Database, (db) =>
    db.query(
      `SELECT coalesce(d.label, j.to_job_department) AS department_label, coalesce(l.label, j.to_job_level) AS level_label,
         count(*)::int AS changes,
         count(*) FILTER (WHERE 'company' = ANY(j.changed))::int AS company_moves,
         count(*) FILTER (WHERE 'title' = ANY(j.changed))::int AS title_changes,
         count(*) FILTER (WHERE 'level' = ANY(j.changed))::int AS level_changes
       FROM ${jobChanges(schema)} j
       LEFT JOIN ${Sql.qualified(schema, Schema.Labels.jobDepartments.table.name)} d ON d.code = j.to_job_department
       LEFT JOIN ${Sql.qualified(schema, Schema.Labels.jobLevels.table.name)} l ON l.code = j.to_job_level
       GROUP BY 1, 2 ORDER BY changes DESC, 1 NULLS LAST, 2 NULLS LAST`,
    ),
  ).pipe(
    Effect.map((rows) =>
      rows.map(
        (row): JobChanges => ({
          departmentLabel: text(row.department_label),
          levelLabel: text(row.level_label),
          changes: Number(row.changes),
          companyMoves: Number(row.company_moves),
          titleChanges: Number(row.title_changes),
          levelChanges: Number(row.level_changes),
        }),
      ),
    ),
  )

/** The change tables: a loader of schema version 4 or later has created them. */
const changeTables = History.ChangeTables.tables.map((table) => table.name)

export const read = (schema: string, productLimit: number) =>
  Effect.gen(function* () {
    if (!(yield* hasRelations(schema, changeTables))) return empty
    return {
      products: yield* products(schema, productLimit),
      runs: yield* runs(schema),
      jobs: yield* jobs(schema),
    } satisfies ChangeReport
  })
