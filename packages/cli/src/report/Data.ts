/**
 * The report's numbers, read from a synced schema: technology adoption by category, by product
 * and by company size band, contacts by department and level, and the credits of each run. Read
 * only: it never creates or changes anything (`requireSynced` checks the tables are there first).
 * "Uses" means what the views mean: a company_technologies row whose in_use is not false.
 */
import { Database, Runs, Sql, Tables } from "@salesintel/postgres"
import * as Data from "effect/Data"
import * as Effect from "effect/Effect"
import * as ChangeData from "./ChangeData.ts"
import * as IntelligenceData from "./IntelligenceData.ts"
import { contactLabels, lookupTables } from "./Labels.ts"
import * as MarketData from "./MarketData.ts"
import * as SizeBands from "./SizeBands.ts"

export class NotSynced extends Data.TaggedError("NotSynced")<{ readonly description: string }> {
  override get message(): string {
    return this.description
  }
}

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

export interface ReportData {
  readonly companies: number
  readonly contacts: number
  readonly categories: ReadonlyArray<CategoryAdoption>
  readonly products: ReadonlyArray<ProductAdoption>
  readonly sizeBands: SizeBandAdoption
  readonly departmentLevels: ReadonlyArray<DepartmentLevel>
  readonly runs: ReadonlyArray<RunCredits>
  /** What the refreshes found changed (ChangeData.ts). */
  readonly changes: ChangeData.ChangeReport
  /** What the observations mean: install base, displacements, champion moves (IntelligenceData.ts). */
  readonly intelligence: IntelligenceData.IntelligenceReport
  /** Ours against the rivals', the accounts to act on, what is used beside ours (MarketData.ts). */
  readonly market: MarketData.MarketReport
}

export interface Limits {
  /** Products shown (the most adopted). */
  readonly products: number
  /** Categories compared across size bands (the most adopted). */
  readonly bandCategories: number
  /** Runs shown (the latest). */
  readonly runs: number
  /** Products whose install base is charted month by month (the most in use). */
  readonly trendProducts: number
  /** Replacements and champion products listed (the most frequent). */
  readonly intelligenceRows: number
  /** Market opportunities listed (the latest). */
  readonly opportunities: number
  /** Products listed beside ours (the most used together). */
  readonly affinity: number
}

export const defaultLimits: Limits = {
  products: 20,
  bandCategories: 6,
  runs: 100,
  trendProducts: 6,
  intelligenceRows: 15,
  opportunities: 25,
  affinity: 15,
}

const companiesTable = Tables.mappings.companies.table.name
const contactsTable = Tables.mappings.contacts.table.name
const technologiesTable = "company_technologies"
const runsTable = "_sync_runs"

/** The tables (and the view) the report reads: a sync creates them all. */
export const requiredTables: ReadonlyArray<string> = [
  "technology_adoption_by_category",
  runsTable,
  contactsTable,
  companiesTable,
  technologiesTable,
  ...lookupTables,
]

const text = (value: unknown): string | null => (value === null || value === undefined ? null : String(value))

/** Fails with NotSynced when `schema` lacks a table the report reads (no sync has run into it). */
export const requireSynced = (schema: string, target: string) =>
  Effect.gen(function* () {
    const db = yield* Database.Database
    const rows = yield* db.query(
      "SELECT table_name::text AS name FROM information_schema.tables WHERE table_schema = $1 AND table_name = ANY($2::text[])",
      [schema, requiredTables],
    )
    const present = new Set(rows.map((row) => String(row.name)))
    const absent = requiredTables.filter((name) => !present.has(name))
    if (absent.length > 0)
      return yield* new NotSynced({
        description: `no synced data in schema "${schema}" of ${target}: ${absent.join(", ")} ${absent.length === 1 ? "is" : "are"} missing (run \`salesintel sync\` into it first, or pass the --schema it used)`,
      })
  })

export const categories = (schema: string) =>
  Effect.flatMap(Database.Database, (db) =>
    db.query(
      `SELECT category, companies::int AS companies, share::float8 AS share
       FROM ${Sql.qualified(schema, "technology_adoption_by_category")}
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

/** Everything the report shows, after checking the schema was synced into. */
export const read = (schema: string, target: string, limits: Limits = defaultLimits) =>
  Effect.gen(function* () {
    yield* requireSynced(schema, target)
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
      changes: yield* ChangeData.read(schema, limits.products),
      intelligence: yield* IntelligenceData.read(schema, {
        trendProducts: limits.trendProducts,
        rows: limits.intelligenceRows,
      }),
      market: yield* MarketData.read(schema, {
        opportunities: limits.opportunities,
        affinity: limits.affinity,
      }),
    } satisfies ReportData
  })
