/**
 * The report's overview sections: technology adoption by category, by product and by company
 * size, contacts by department and level, and the credits each run spent. Each has its title,
 * what it counts, its chart (none when there is nothing to chart: the page then says "no data")
 * and the numbers behind it.
 */
import { chartOf } from "../shared/Chart.ts"
import { named, percent } from "../shared/Format.ts"
import type { Section } from "../shared/ReportPage.ts"
import * as OverviewCharts from "./OverviewCharts.ts"
import type * as OverviewData from "./OverviewData.ts"

export const categories = (rows: ReadonlyArray<OverviewData.CategoryAdoption>): Section => ({
  id: "categories",
  title: "Technology adoption by category",
  description:
    "Companies using at least one product of each category (a technology the provider does not mark as no longer in use), and their share of all companies synced.",
  svg: chartOf(rows.length === 0, () => OverviewCharts.categories(rows)),
  data: {
    columns: ["category", "companies", "share"],
    rows: rows.map((row) => [named(row.category), row.companies, percent(row.share)]),
  },
})

export const products = (rows: ReadonlyArray<OverviewData.ProductAdoption>): Section => ({
  id: "products",
  title: `Technology adoption by product (top ${rows.length})`,
  description: "The most used products: companies using each, and their share of all companies synced.",
  svg: chartOf(rows.length === 0, () => OverviewCharts.products(rows)),
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

export const sizeBands = (data: OverviewData.SizeBandAdoption): Section => ({
  id: "size-bands",
  title: "Adoption by company size",
  description:
    "For each size band (employees), the share of its companies using each of the most adopted categories; the number on each bar is its companies (a small band's 100% is a few companies). Companies without a size are in the unknown band.",
  svg: chartOf(data.bands.length === 0 || data.categories.length === 0, () => OverviewCharts.sizeBands(data)),
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

export const departmentLevels = (rows: ReadonlyArray<OverviewData.DepartmentLevel>): Section => ({
  id: "departments",
  title: "Contacts by department and level",
  description: "Where the synced contacts sit: contacts per job department (down) and job level (across).",
  svg: chartOf(rows.length === 0, () => OverviewCharts.departmentLevels(rows)),
  data: {
    columns: ["department", "level", "contacts"],
    rows: rows.map((row) => [named(row.departmentLabel), named(row.levelLabel), row.contacts]),
  },
})

export const runs = (rows: ReadonlyArray<OverviewData.RunCredits>): Section => ({
  id: "credits",
  title: "Credits spent per run",
  description: `The credits each sync run spent, by stream, oldest first (${rows.length === 1 ? "the only run" : `the latest ${rows.length} runs`}); streams that cost nothing (the taxonomy is free) are not charted.`,
  svg: chartOf(rows.length === 0, () => OverviewCharts.runs(rows)),
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

/** The overview's sections, in the page's order. */
export const all = (data: OverviewData.Overview): ReadonlyArray<Section> => [
  categories(data.categories),
  products(data.products),
  sizeBands(data.sizeBands),
  departmentLevels(data.departmentLevels),
  runs(data.runs),
]
