/**
 * The numbers of the report's overview sections, read from a synced schema: technology adoption
 * by category, by product and by company size band, contacts by department and level, and the
 * credits of each run. Read only: it never creates or changes anything (ReportData.ts checks the
 * tables are there first). "Uses" means what the views mean: a company_technologies row whose
 * in_use is not false.
 */
import { Database, History, Runs, Schema, Sql } from "@salesintel/postgres"
import * as Effect from "effect/Effect"
import { contactLabels, lookupTables } from "../shared/ContactLabels.ts"
import { text } from "../shared/Queried.ts"
import * as SizeBands from "../shared/SizeBands.ts"

export interface CategoryAdoption {
  readonly category: string | null
  /** Companies using at least one product of the category. */
  readonly companies: number
  /** Their share of every company synced (0..1). */
  readonly share: number
}

export interface ProductAdoption {
  readonly product: string | null
  readonly vendor: string | null
  readonly category: string | null
  readonly companies: number
  readonly share: number
}

export interface BandAdoption {
  readonly band: string
  /** Companies in the band. */
  readonly bandCompanies: number
  /** Companies of the band using each of the top categories, by category. */
  readonly using: Readonly<Record<string, number>>
}

export interface SizeBandAdoption {
  /** The categories compared: the most adopted overall. */
  readonly categories: ReadonlyArray<string>
  /** The bands that have companies, in size order. */
  readonly bands: ReadonlyArray<BandAdoption>
}

export interface DepartmentLevel {
  readonly department: string | null
  readonly level: string | null
  readonly departmentLabel: string | null
  readonly levelLabel: string | null
  readonly contacts: number
}

export interface RunCredits {
  readonly id: number
  readonly startedAt: Date
  readonly status: string
  /** Credits per stream, as the run's row recorded them. */
  readonly streams: Readonly<Record<string, number>>
  readonly credits: number
}

export interface Overview {
  readonly companies: number
  readonly contacts: number
  readonly categories: ReadonlyArray<CategoryAdoption>
  readonly products: ReadonlyArray<ProductAdoption>
  readonly sizeBands: SizeBandAdoption
  readonly departmentLevels: ReadonlyArray<DepartmentLevel>
  readonly runs: ReadonlyArray<RunCredits>
}

export interface Limits {
  /** Products shown (the most adopted). */
  readonly products: number
  /** Categories compared across size bands (the most adopted). */
  readonly bandCategories: number
  /** Runs shown (the latest). */
  readonly runs: number
}

const companiesTable = Schema.Tables.named.companies.name
const contactsTable = Schema.Tables.named.contacts.name
const technologiesTable = Schema.Tables.named.companyTechnologies.name
const runsTable = Schema.Bookkeeping.runsTable.name

/** The tables (and the view) the overview reads: a sync creates them all. */
export const requiredTables: ReadonlyArray<string> = [
  History.Views.adoptionByCategory.name,
  runsTable,
  contactsTable,
  companiesTable,
  technologiesTable,
  ...lookupTables,
]

export const categories = (schema: string) =>
  Effect.flatMap(Database.Database, (db) =>
    db.query(
      `SELECT category, companies::int AS companies, share::float8 AS share
       FROM ${Sql.qualified(schema, History.Views.adoptionByCategory.name)}
       ORDER BY companies DESC, category NULLS LAST`,
    ),
  ).pipe(
    Effect.map((rows) =>
      rows.map(
        (row): CategoryAdoption => ({
          category: text(row.category),
          companies: Number(row.companies),
          share: Number(row.share ?? 0),
        }),
      ),
    ),
  )

export const products = (schema: string, limit: number) =>
  Effect.flatMap(Database.Database, (db) =>
    db.query(
      `SELECT t.product, t.vendor, min(t.category) AS category, count(DISTINCT t.company_id)::int AS companies,
         (count(DISTINCT t.company_id)::float8 / nullif((SELECT count(*) FROM ${Sql.qualified(schema, companiesTable)}), 0)) AS share
       FROM ${Sql.qualified(schema, technologiesTable)} t
       WHERE t.in_use IS NOT FALSE
       GROUP BY t.product, t.vendor
       ORDER BY companies DESC, t.product NULLS LAST, t.vendor NULLS LAST
       LIMIT $1`,
      [limit],
    ),
  ).pipe(
    Effect.map((rows) =>
      rows.map(
        (row): ProductAdoption => ({
          product: text(row.product),
          vendor: text(row.vendor),
          category: text(row.category),
          companies: Number(row.companies),
          share: Number(row.share ?? 0),
        }),
      ),
    ),
  )

export const sizeBands = (schema: string, topCategories: ReadonlyArray<string>) =>
  Effect.gen(function* () {
    const db = yield* Database.Database
    const banded = `SELECT company_id, ${SizeBands.bandSql("size")} AS band FROM ${Sql.qualified(schema, companiesTable)}`
    const sizes = yield* db.query(`SELECT band, count(*)::int AS companies FROM (${banded}) b GROUP BY band`)
    const using = yield* db.query(
      `SELECT b.band, t.category, count(DISTINCT t.company_id)::int AS companies
       FROM (${banded}) b
       JOIN ${Sql.qualified(schema, technologiesTable)} t ON t.company_id = b.company_id
       WHERE t.in_use IS NOT FALSE AND t.category = ANY($1::text[])
       GROUP BY b.band, t.category`,
      [topCategories],
    )
    const bandCompanies = new Map(sizes.map((row) => [String(row.band), Number(row.companies)]))
    const bands = SizeBands.labels
      .filter((band) => (bandCompanies.get(band) ?? 0) > 0)
      .map(
        (band): BandAdoption => ({
          band,
          bandCompanies: bandCompanies.get(band) ?? 0,
          using: Object.fromEntries(
            topCategories.map((category) => [
              category,
              Number(using.find((row) => row.band === band && row.category === category)?.companies ?? 0),
            ]),
          ),
        }),
      )
    return { categories: topCategories, bands } satisfies SizeBandAdoption
  })

export const departmentLevels = (schema: string) =>
  Effect.flatMap(Database.Database, (db) => {
    const labels = contactLabels(schema)
    return db.query(
      `SELECT c.job_department AS department, c.job_level AS level,
         ${labels.department} AS department_label, ${labels.level} AS level_label, count(*)::int AS contacts
       FROM ${Sql.qualified(schema, contactsTable)} c ${labels.joins}
       GROUP BY 1, 2, 3, 4
       ORDER BY contacts DESC, 1 NULLS LAST, 2 NULLS LAST`,
    )
  }).pipe(
    Effect.map((rows) =>
      rows.map(
        (row): DepartmentLevel => ({
          department: text(row.department),
          level: text(row.level),
          departmentLabel: text(row.department_label),
          levelLabel: text(row.level_label),
          contacts: Number(row.contacts),
        }),
      ),
    ),
  )

/** The latest runs' credits, oldest first. */
export const runs = (schema: string, limit: number) =>
  Effect.map(Runs.list(schema, limit), (list) =>
    list
      .map((run): RunCredits => {
        const streams = Object.fromEntries(
          Object.entries(run.streams ?? {}).map(([stream, figures]) => [stream, figures.credits ?? 0]),
        )
        return {
          id: run.id,
          startedAt: run.startedAt,
          status: run.status,
          streams,
          // The run's own count: a killed run's mark, past what it committed (Runs.Run.credits).
          credits: run.credits ?? Object.values(streams).reduce((sum, credits) => sum + credits, 0),
        }
      })
      .reverse(),
  )

const count = (schema: string, table: string) =>
  Effect.flatMap(Database.Database, (db) =>
    db.query(`SELECT count(*)::int AS n FROM ${Sql.qualified(schema, table)}`),
  ).pipe(Effect.map(([row]) => Number(row?.n ?? 0)))

/** The overview's numbers (the schema's tables checked by the caller, ReportData.requireSynced). */
export const read = (schema: string, limits: Limits) =>
  Effect.gen(function* () {
    const categoryRows = yield* categories(schema)
    const top = categoryRows
      .flatMap((row) => (row.category === null ? [] : [row.category]))
      .slice(0, limits.bandCategories)
    return {
      companies: yield* count(schema, companiesTable),
      contacts: yield* count(schema, contactsTable),
      categories: categoryRows,
      products: yield* products(schema, limits.products),
      sizeBands: yield* sizeBands(schema, top),
      departmentLevels: yield* departmentLevels(schema),
      runs: yield* runs(schema, limits.runs),
    } satisfies Overview
  })
