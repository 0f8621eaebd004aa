/**
 * Lines of shares per month on an axis from 0, every point labelled (the install base of the most
 * used products, ours against the rivals'), drawn like every chart of the report (Chart.ts) with
 * the labels placed by LineLabels.ts.
 */
import { type Chart, textStyle, width } from "./Chart.ts"
import { labelOffsets, placeOf, shareScale } from "./LineLabels.ts"

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
