/**
 * The report's charts, drawn by Apache ECharts' server-side SVG renderer (no DOM, no canvas, no
 * browser): each function turns the report's numbers into an ECharts option, and `render` into
 * an SVG string. ECharts escapes every text it draws, so database strings are safe in the SVG.
 */

import type { EChartsOption } from "echarts"
import * as echarts from "echarts"
import type * as ChangeData from "./ChangeData.ts"
import type * as Data from "./Data.ts"
import { missing } from "./Labels.ts"

export interface Chart {
  readonly width: number
  readonly height: number
  readonly option: EChartsOption
}

/** The chart as an SVG string (no animation: the file is a still picture). */
export const render = (chart: Chart): string => {
  const instance = echarts.init(null, null, {
    renderer: "svg",
    ssr: true,
    width: chart.width,
    height: chart.height,
  })
  try {
    instance.setOption({ animation: false, ...chart.option })
    // ECharts writes hover styles in a CDATA section; the page has no script and the hover only
    // recolours a bar, so they go: the file is then plain HTML that every parser reads.
    return instance.renderToSVGString().replace(/<style[^>]*>\s*<!\[CDATA\[[\s\S]*?\]\]>\s*<\/style>/g, "")
  } finally {
    instance.dispose()
  }
}

export const width = 1000
// ECharts lays text out (bar labels, legend gaps) by Arial-like widths when it has no canvas to
// measure with, so the charts ask for Arial or a font of the same metrics.
export const textStyle = { fontFamily: "Arial, Helvetica, 'Liberation Sans', sans-serif" }
const percent = (share: number): string => `${(share * 100).toFixed(1)}%`
const named = (value: string | null): string => value ?? missing

/**
 * A label of at most `max` characters (about 280 pixels of the charts' 12-pixel Arial), cut at a
 * word's end with "…" (inside a word only when it is one long word), closing a parenthesis it
 * opened: "PostgreSQL (PostgreSQL Global Development…)". The whole label is in the section's table.
 */
export const shorten = (label: string, max = 44): string => {
  if (label.length <= max) return label
  const room = label.slice(0, max - 2)
  const boundary = room.lastIndexOf(" ")
  const cut = (boundary > 0 ? room.slice(0, boundary) : room).replace(/[\s(,;:-]+$/, "")
  const opened = (cut.match(/\(/g) ?? []).length - (cut.match(/\)/g) ?? []).length
  return `${cut}…${")".repeat(Math.max(0, opened))}`
}

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

export const categories = (rows: ReadonlyArray<Data.CategoryAdoption>): Chart =>
  rankedBars(
    rows.map((row) => named(row.category)),
    rows,
  )

export const products = (rows: ReadonlyArray<Data.ProductAdoption>): Chart =>
  rankedBars(
    rows.map((row) => (row.vendor === null ? named(row.product) : `${named(row.product)} (${row.vendor})`)),
    rows,
  )

/** For each size band, the share of its companies using each top category (grouped bars). */
export const sizeBands = (data: Data.SizeBandAdoption): Chart => ({
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
export const departmentLevels = (rows: ReadonlyArray<Data.DepartmentLevel>): Chart => {
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

const runLabel = (run: Data.RunCredits): string =>
  `#${run.id}\n${run.startedAt.toISOString().slice(0, 16).replace("T", " ")}`

/** Credits per run, oldest first, stacked by stream; a stream that spent nothing (free) is left out. */
export const runs = (rows: ReadonlyArray<Data.RunCredits>): Chart => {
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

const changeRunLabel = (runId: number | null): string => (runId === null ? "no run" : `#${runId}`)

/** A bar's value on it, none for a zero (an empty bar would carry a stray "0"). */
export const valueLabel = {
  show: true,
  formatter: (value: { readonly value: unknown }) => (Number(value.value) === 0 ? "" : String(value.value)),
}

const technologyBar = (name: string, values: Array<number>) => ({
  type: "bar" as const,
  name,
  stack: "technologies",
  barMaxWidth: 60,
  label: valueLabel,
  data: values,
})

/**
 * Per run that found changes, two plots side by side, each with its own axis and title:
 * technologies adopted and dropped (stacked, drops below zero) at the left, job changes at the
 * right. Counts of different kinds never share a plot, so a bar's height is compared only with
 * counts of its kind (on one plot with two axes, 8 adoptions stood as tall as 37 job changes);
 * every bar is labelled with its number.
 */
export const changes = (rows: ReadonlyArray<ChangeData.RunChanges>): Chart => {
  // Symmetric about zero, so drops go down as far as adoptions go up.
  const technologies = Math.max(1, ...rows.flatMap((row) => [row.adopted, row.dropped]))
  const runs = rows.map((row) => changeRunLabel(row.runId))
  const plotTitle = (text: string, left: string) => ({
    text,
    left,
    top: 30,
    textAlign: "center" as const,
    textStyle: { ...textStyle, fontSize: 13, fontWeight: "normal" as const },
  })
  return {
    width,
    height: 400,
    option: {
      textStyle,
      legend: { top: 0, itemGap: 18 },
      title: [plotTitle("technologies adopted and dropped", "27%"), plotTitle("job changes", "77%")],
      grid: [
        { left: 20, width: "44%", top: 70, bottom: 10, containLabel: true },
        { right: 20, width: "44%", top: 70, bottom: 10, containLabel: true },
      ],
      xAxis: [
        { type: "category", gridIndex: 0, data: runs },
        { type: "category", gridIndex: 1, data: runs },
      ],
      yAxis: [
        { type: "value", gridIndex: 0, minInterval: 1, min: -technologies, max: technologies },
        { type: "value", gridIndex: 1, minInterval: 1, min: 0 },
      ],
      series: [
        technologyBar(
          "technologies adopted",
          rows.map((row) => row.adopted),
        ),
        technologyBar(
          "technologies dropped",
          rows.map((row) => -row.dropped),
        ),
        {
          type: "bar",
          name: "job changes",
          xAxisIndex: 1,
          yAxisIndex: 1,
          barMaxWidth: 60,
          label: valueLabel,
          data: rows.map((row) => row.jobChanges),
        },
      ],
    },
  }
}
