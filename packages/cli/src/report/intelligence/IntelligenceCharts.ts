/**
 * The charts of the install base, displacement and champion sections (IntelligenceData.ts), drawn
 * like every chart of the report (shared/Chart.ts): every bar and point carries its number.
 */
import { type Chart, shorten, textStyle, valueLabel, width } from "../shared/Chart.ts"
import { named, productLabel } from "../shared/Format.ts"
import { shareLines } from "../shared/ShareLines.ts"
import type * as IntelligenceData from "./IntelligenceData.ts"

const percentOf = (share: number): number => Number((share * 100).toFixed(1))

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
