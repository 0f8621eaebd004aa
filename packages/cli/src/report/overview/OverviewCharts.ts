/**
 * The charts of the overview sections (OverviewData.ts), drawn like every chart of the report
 * (shared/Chart.ts): adoption ranked by category and by product, by company size band, contacts
 * by department and level, and the credits of each run.
 */
import { type Chart, shorten, textStyle, width } from "../shared/Chart.ts"
import { named, percent, productLabel } from "../shared/Format.ts"
import type * as OverviewData from "./OverviewData.ts"

/** Horizontal bars, largest on top, each labelled with its count and share of all companies. */
const rankedBars = (
  labels: ReadonlyArray<string>,
  rows: ReadonlyArray<{ readonly companies: number; readonly share: number }>,
): Chart => ({
  width,
  height: 60 + 26 * rows.length,
  option: {
    textStyle,
    grid: { left: 10, right: 90, top: 10, bottom: 30, containLabel: true },
    xAxis: { type: "value", name: "companies", nameLocation: "middle", nameGap: 24, minInterval: 1 },
    yAxis: {
      type: "category",
      inverse: true,
      data: labels.map((label) => shorten(label)),
    },
    series: [
      {
        type: "bar",
        data: rows.map((row) => ({
          value: row.companies,
          label: { show: true, position: "right", formatter: `${row.companies} (${percent(row.share)})` },
        })),
        barMaxWidth: 20,
      },
    ],
  },
})

export const categories = (rows: ReadonlyArray<OverviewData.CategoryAdoption>): Chart =>
  rankedBars(
    rows.map((row) => named(row.category)),
    rows,
  )

export const products = (rows: ReadonlyArray<OverviewData.ProductAdoption>): Chart =>
  rankedBars(
    rows.map((row) => productLabel(row.product, row.vendor)),
    rows,
  )

/** For each size band, the share of its companies using each top category (grouped bars). */
export const sizeBands = (data: OverviewData.SizeBandAdoption): Chart => ({
  width,
  height: 420,
  option: {
    textStyle,
    legend: { top: 0, itemGap: 18 },
    grid: { left: 10, right: 20, top: 60, bottom: 40, containLabel: true },
    xAxis: {
      type: "category",
      data: data.bands.map((band) => `${band.band} (${band.bandCompanies})`),
      name: "employees (companies in the band)",
      nameLocation: "middle",
      nameGap: 28,
    },
    yAxis: { type: "value", max: 100, axisLabel: { formatter: "{value}%" } },
    series: data.categories.map((category) => ({
      type: "bar",
      name: category,
      // Each bar says how many companies it is: 100% of a band of two is two companies.
      label: { show: true, position: "top", fontSize: 10 },
      data: data.bands.map((band) => {
        const using = band.using[category] ?? 0
        return {
          value: band.bandCompanies === 0 ? 0 : Number(((using / band.bandCompanies) * 100).toFixed(1)),
          label: { formatter: String(using) },
        }
      }),
    })),
  },
})

/** Departments down, levels across, each cell's colour and number its contacts. */
export const departmentLevels = (rows: ReadonlyArray<OverviewData.DepartmentLevel>): Chart => {
  const departments = [...new Set(rows.map((row) => named(row.departmentLabel)))].sort()
  const levels = [...new Set(rows.map((row) => named(row.levelLabel)))].sort()
  const max = Math.max(1, ...rows.map((row) => row.contacts))
  return {
    width,
    height: 120 + 30 * departments.length,
    option: {
      textStyle,
      grid: { left: 10, right: 20, top: 10, bottom: 70, containLabel: true },
      xAxis: { type: "category", data: levels, name: "job level", nameLocation: "middle", nameGap: 28 },
      yAxis: { type: "category", data: departments },
      visualMap: {
        min: 0,
        max,
        calculable: false,
        text: [String(max), "0"],
        orient: "horizontal",
        left: "center",
        bottom: 0,
        inRange: { color: ["#eff6ff", "#1d4ed8"] },
      },
      series: [
        {
          type: "heatmap",
          label: { show: true },
          // Every cell, a department and level without contacts as 0: a blank cell reads as missing data.
          data: departments.flatMap((department, y) =>
            levels.map((level, x) => [
              x,
              y,
              rows
                .filter((row) => named(row.departmentLabel) === department && named(row.levelLabel) === level)
                .reduce((sum, row) => sum + row.contacts, 0),
            ]),
          ),
        },
      ],
    },
  }
}

const runLabel = (run: OverviewData.RunCredits): string =>
  `#${run.id}\n${run.startedAt.toISOString().slice(0, 16).replace("T", " ")}`

/** Credits per run, oldest first, stacked by stream; a stream that spent nothing (free) is left out. */
export const runs = (rows: ReadonlyArray<OverviewData.RunCredits>): Chart => {
  const streams = [...new Set(rows.flatMap((run) => Object.keys(run.streams)))]
    .filter((stream) => rows.some((run) => (run.streams[stream] ?? 0) > 0))
    .sort()
  return {
    width,
    height: 380,
    option: {
      textStyle,
      legend: { top: 0, itemGap: 18 },
      grid: { left: 10, right: 20, top: 40, bottom: 10, containLabel: true },
      xAxis: { type: "category", data: rows.map(runLabel), axisLabel: { hideOverlap: true } },
      yAxis: { type: "value", name: "credits", minInterval: 1 },
      series: streams.map((stream) => ({
        type: "bar",
        name: stream,
        stack: "credits",
        barMaxWidth: 60,
        data: rows.map((run) => run.streams[stream] ?? 0),
      })),
    },
  }
}
