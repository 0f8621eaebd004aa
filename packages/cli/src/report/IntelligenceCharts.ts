/**
 * The charts of the install base, displacement and champion sections (IntelligenceData.ts), drawn
 * like the others (Charts.ts): every bar and point carries its number.
 */
import type { Chart } from "./Charts.ts"
import { shorten, textStyle, valueLabel, width } from "./Charts.ts"
import type * as IntelligenceData from "./IntelligenceData.ts"
import { missing } from "./Labels.ts"
import { labelOffsets, placeOf, shareScale } from "./LineLabels.ts"

const named = (value: string | null): string => value ?? missing
const productLabel = (product: string | null, vendor: string | null): string =>
  vendor === null ? named(product) : `${named(product)} (${vendor})`
const percentOf = (share: number): number => Number((share * 100).toFixed(1))

/** The month as "Aug 2026" (the data's months are UTC calendar months). */
export const monthLabel = (month: string): string =>
  new Date(`${month}T00:00:00Z`).toLocaleString("en-US", { month: "short", year: "numeric", timeZone: "UTC" })

export interface ShareLine {
  readonly name: string
  /** Percent per month (null: the month's observations did not show it, a gap). */
  readonly values: ReadonlyArray<number | null>
}

const labelSize = 10

const percentLabel = (point: { readonly value: unknown }): string => `${Number(point.value).toFixed(1)}%`

/**
 * Lines of shares per month on an axis from 0 (a line's height is its share, never its distance
 * from an axis cut to the data), every point labelled with its value, the labels of close points
 * spread apart (LineLabels.ts). The plot's box is fixed, not fitted to the labels, so the labels
 * can be placed: `legendRows` is the room above it for the legend.
 */
export const shareLines = (
  months: ReadonlyArray<string>,
  lines: ReadonlyArray<ShareLine>,
  legendRows: number,
): Chart => {
  const height = 400 + 30 * legendRows
  const plot = { top: 20 + 30 * legendRows, bottom: 40 }
  const scale = shareScale(Math.max(0, ...lines.flatMap((line) => line.values.map((value) => value ?? 0))))
  const offsets = labelOffsets(
    { top: plot.top, height: height - plot.top - plot.bottom, max: scale.max },
    lines.map((line) => line.values),
    labelSize,
  )
  return {
    width,
    height,
    option: {
      textStyle,
      // Every line in the legend (wrapped, never scrolled away), above the plot.
      legend: { top: 0, left: "center", itemGap: 18, width: "90%" },
      // Room at both sides for the first and last months' labels.
      grid: { left: 60, right: 60, top: plot.top, bottom: plot.bottom },
      xAxis: { type: "category", data: months.map(monthLabel), boundaryGap: true },
      yAxis: { type: "value", min: 0, ...scale, axisLabel: { formatter: "{value}%" } },
      series: lines.map((line, index) => ({
        type: "line",
        name: line.name,
        symbolSize: 8,
        // One decimal on every label, so 43% and 42.2% read as the same kind of figure.
        label: { show: true, position: "top", fontSize: labelSize, formatter: percentLabel },
        data: line.values.map((value, month) =>
          value === null
            ? null
            : {
                value,
                label: {
                  position: placeOf(month, months.length),
                  offset: [0, offsets[index]?.[month] ?? 0],
                },
              },
        ),
      })),
    },
  }
}

/** Per top product, its share of the companies observed each month (a line each, values shown). */
export const installBase = (
  months: ReadonlyArray<string>,
  trends: ReadonlyArray<IntelligenceData.ProductTrend>,
): Chart =>
  shareLines(
    months,
    trends.map((trend) => ({
      name: shorten(productLabel(trend.product, trend.vendor), 32),
      // A month whose observations did not show the product is a gap, not a zero.
      values: months.map((month) => {
        const point = trend.points.find((candidate) => candidate.month === month)
        return point === undefined ? null : percentOf(point.share)
      }),
    })),
    Math.ceil(trends.length / 4),
  )

/** Each replacement, "dropped → adopted", and the companies that made it. */
export const displacements = (rows: ReadonlyArray<IntelligenceData.Displacement>): Chart => ({
  width,
  height: 60 + 28 * rows.length,
  option: {
    textStyle,
    grid: { left: 10, right: 60, top: 10, bottom: 30, containLabel: true },
    xAxis: { type: "value", name: "companies", nameLocation: "middle", nameGap: 24, minInterval: 1 },
    yAxis: {
      type: "category",
      inverse: true,
      data: rows.map(
        (row) => `${shorten(named(row.droppedProduct), 30)} → ${shorten(named(row.adoptedProduct), 30)}`,
      ),
    },
    series: [
      {
        type: "bar",
        barMaxWidth: 20,
        label: { show: true, position: "right" },
        data: rows.map((row) => row.companies),
      },
    ],
  },
})

/** Per product at the companies contacts left: where they went, stacked, each part numbered. */
export const champions = (rows: ReadonlyArray<IntelligenceData.ChampionProduct>): Chart => {
  const part = (name: string, pick: (row: IntelligenceData.ChampionProduct) => number) => ({
    type: "bar" as const,
    name,
    stack: "moves",
    barMaxWidth: 20,
    // A zero part draws nothing; its label would sit on the next part's.
    label: valueLabel,
    data: rows.map(pick),
  })
  return {
    width,
    height: 90 + 28 * rows.length,
    option: {
      textStyle,
      legend: { top: 0, itemGap: 18 },
      grid: { left: 10, right: 30, top: 40, bottom: 30, containLabel: true },
      xAxis: {
        type: "value",
        name: "moves away",
        nameLocation: "middle",
        nameGap: 24,
        minInterval: 1,
      },
      yAxis: {
        type: "category",
        inverse: true,
        data: rows.map((row) => shorten(productLabel(row.product, row.vendor))),
      },
      series: [
        part("joined a company using it", (row) => row.joinedUsing),
        part("joined one not using it", (row) => row.joinedNotUsing),
        part("joined one never observed", (row) => row.joinedUnobserved),
      ],
    },
  }
}
