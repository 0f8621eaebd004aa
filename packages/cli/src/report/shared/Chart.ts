/**
 * The report's charts, drawn by Apache ECharts' server-side SVG renderer (no DOM, no canvas, no
 * browser): each subject's charts (overview/OverviewCharts.ts, changes/ChangesCharts.ts, ...) turn
 * its numbers into an ECharts option, and `render` into an SVG string; this is what they share.
 * ECharts escapes every text it draws, so database strings are safe in the SVG.
 */

import type { EChartsOption } from "echarts"
import * as echarts from "echarts"

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

/** A bar's value on it, none for a zero (an empty bar would carry a stray "0"). */
export const valueLabel = {
  show: true,
  formatter: (value: { readonly value: unknown }) => (Number(value.value) === 0 ? "" : String(value.value)),
}

/** A section's SVG: none when it has nothing to chart (the page then says so), else the chart drawn. */
export const chartOf = (empty: boolean, chart: () => Chart): string | undefined =>
  empty ? undefined : render(chart())
