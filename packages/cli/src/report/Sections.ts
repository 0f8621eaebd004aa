/**
 * The report's sections: for each question, its title, what it counts, its chart (none when
 * there is nothing to chart: the page then says "no data") and the numbers behind it.
 */
import type * as ChangeData from "./ChangeData.ts"
import * as Charts from "./Charts.ts"
import type * as Data from "./Data.ts"
import * as IntelligenceSections from "./IntelligenceSections.ts"
import { missing } from "./Labels.ts"
import * as MarketSections from "./MarketSections.ts"
import type { Section } from "./Page.ts"

const named = (value: string | null): string => value ?? missing
const percent = (share: number): string => `${(share * 100).toFixed(1)}%`

const chartOf = (empty: boolean, chart: () => Charts.Chart): string | undefined =>
  empty ? undefined : Charts.render(chart())

export const categories = (rows: ReadonlyArray<Data.CategoryAdoption>): Section => ({
  id: "categories",
  title: "Technology adoption by category",
  description:
    "Companies using at least one product of each category (a technology the provider does not mark as no longer in use), and their share of all companies synced.",
  svg: chartOf(rows.length === 0, () => Charts.categories(rows)),
  data: {
    columns: ["category", "companies", "share"],
    rows: rows.map((row) => [named(row.category), row.companies, percent(row.share)]),
  },
})

export const products = (rows: ReadonlyArray<Data.ProductAdoption>): Section => ({
  id: "products",
  title: `Technology adoption by product (top ${rows.length})`,
  description: "The most used products: companies using each, and their share of all companies synced.",
  svg: chartOf(rows.length === 0, () => Charts.products(rows)),
  data: {
    columns: ["product", "vendor", "category", "companies", "share"],
    rows: rows.map((row) => [
      named(row.product),
      named(row.vendor),
      named(row.category),
      row.companies,
      percent(row.share),
    ]),
  },
})

export const sizeBands = (data: Data.SizeBandAdoption): Section => ({
  id: "size-bands",
  title: "Adoption by company size",
  description:
    "For each size band (employees), the share of its companies using each of the most adopted categories; the number on each bar is its companies (a small band's 100% is a few companies). Companies without a size are in the unknown band.",
  svg: chartOf(data.bands.length === 0 || data.categories.length === 0, () => Charts.sizeBands(data)),
  data: {
    columns: ["size band", "companies", ...data.categories],
    rows: data.bands.map((band) => [
      band.band,
      band.bandCompanies,
      ...data.categories.map((category) => {
        const using = band.using[category] ?? 0
        return `${using} (${percent(band.bandCompanies === 0 ? 0 : using / band.bandCompanies)})`
      }),
    ]),
  },
})

export const departmentLevels = (rows: ReadonlyArray<Data.DepartmentLevel>): Section => ({
  id: "departments",
  title: "Contacts by department and level",
  description: "Where the synced contacts sit: contacts per job department (down) and job level (across).",
  svg: chartOf(rows.length === 0, () => Charts.departmentLevels(rows)),
  data: {
    columns: ["department", "level", "contacts"],
    rows: rows.map((row) => [named(row.departmentLabel), named(row.levelLabel), row.contacts]),
  },
})

export const runs = (rows: ReadonlyArray<Data.RunCredits>): Section => ({
  id: "credits",
  title: "Credits spent per run",
  description: `The credits each sync run spent, by stream, oldest first (${rows.length === 1 ? "the only run" : `the latest ${rows.length} runs`}); streams that cost nothing (the taxonomy is free) are not charted.`,
  svg: chartOf(rows.length === 0, () => Charts.runs(rows)),
  data: {
    columns: ["run", "started (UTC)", "status", "credits", "by stream"],
    rows: rows.map((run) => [
      `#${run.id}`,
      run.startedAt.toISOString().replace("T", " ").slice(0, 19),
      run.status,
      run.credits,
      Object.entries(run.streams)
        .map(([stream, credits]) => `${stream}: ${credits}`)
        .join(", "),
    ]),
  },
})

const runName = (runId: number | null): string => (runId === null ? "no run" : `#${runId}`)

export const technologyChanges = (data: ChangeData.ChangeReport): Section => ({
  id: "technology-changes",
  title: "What changed: technologies adopted and dropped",
  description:
    "What refreshes found when a company was bought again: products it started using (adopted) or stopped using (dropped) since the observation before, per run (the chart) and per product, the most changed first (the table: each run as +adopted −dropped). A company's first observation is not a change.",
  svg: chartOf(data.runs.length === 0, () => Charts.changes(data.runs)),
  data: {
    columns: ["product", "vendor", "category", "adopted", "dropped", "by run"],
    rows: data.products.map((row) => [
      named(row.product),
      named(row.vendor),
      named(row.category),
      row.adopted,
      row.dropped,
      row.byRun.map(([runId, adopted, dropped]) => `${runName(runId)}: +${adopted} −${dropped}`).join(", "),
    ]),
  },
})

export const jobChanges = (rows: ReadonlyArray<ChangeData.JobChanges>): Section => ({
  id: "job-changes",
  title: "What changed: job changes",
  description:
    "Contacts bought again whose company, title, level or department differ from the observation before, by the department and level they moved to, and what changed (one change may count under several kinds).",
  svg: chartOf(rows.length === 0, () =>
    Charts.departmentLevels(
      rows.map((row) => ({
        department: null,
        level: null,
        departmentLabel: row.departmentLabel,
        levelLabel: row.levelLabel,
        contacts: row.changes,
      })),
    ),
  ),
  data: {
    columns: ["department", "level", "job changes", "company", "title", "level changed"],
    rows: rows.map((row) => [
      named(row.departmentLabel),
      named(row.levelLabel),
      row.changes,
      row.companyMoves,
      row.titleChanges,
      row.levelChanges,
    ]),
  },
})

/** Every section, in the page's order. */
export const all = (data: Data.ReportData): ReadonlyArray<Section> => [
  categories(data.categories),
  products(data.products),
  sizeBands(data.sizeBands),
  departmentLevels(data.departmentLevels),
  runs(data.runs),
  technologyChanges(data.changes),
  jobChanges(data.changes.jobs),
  ...IntelligenceSections.all(data.intelligence),
  ...MarketSections.all(data.market),
]
