/**
 * The report's "what changed" sections: the technologies adopted and dropped per run and per
 * product, and the job changes by department and level, from what the refreshes found
 * (ChangesData.ts).
 */

import * as OverviewCharts from "../overview/OverviewCharts.ts"
import { chartOf } from "../shared/Chart.ts"
import { named } from "../shared/Format.ts"
import type { Section } from "../shared/ReportPage.ts"
import * as ChangesCharts from "./ChangesCharts.ts"
import type * as ChangesData from "./ChangesData.ts"

export const technologyChanges = (data: ChangesData.ChangeReport): Section => ({
  id: "technology-changes",
  title: "What changed: technologies adopted and dropped",
  description:
    "What refreshes found when a company was bought again: products it started using (adopted) or stopped using (dropped) since the observation before, per run (the chart) and per product, the most changed first (the table: each run as +adopted −dropped). A company's first observation is not a change.",
  svg: chartOf(data.runs.length === 0, () => ChangesCharts.changes(data.runs)),
  data: {
    columns: ["product", "vendor", "category", "adopted", "dropped", "by run"],
    rows: data.products.map((row) => [
      named(row.product),
      named(row.vendor),
      named(row.category),
      row.adopted,
      row.dropped,
      row.byRun
        .map(([runId, adopted, dropped]) => `${ChangesCharts.changeRunLabel(runId)}: +${adopted} −${dropped}`)
        .join(", "),
    ]),
  },
})

export const jobChanges = (rows: ReadonlyArray<ChangesData.JobChanges>): Section => ({
  id: "job-changes",
  title: "What changed: job changes",
  description:
    "Contacts bought again whose company, title, level or department differ from the observation before, by the department and level they moved to, and what changed (one change may count under several kinds).",
  svg: chartOf(rows.length === 0, () =>
    OverviewCharts.departmentLevels(
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

/** The two sections, in the page's order. */
export const all = (data: ChangesData.ChangeReport): ReadonlyArray<Section> => [
  technologyChanges(data),
  jobChanges(data.jobs),
]
