/**
 * The charts of the "Your market" sections (MarketData.ts), drawn like every chart of the report
 * (shared/Chart.ts): the share of ours, the rivals' and the complements per month on an axis from
 * 0, and the products most often beside ours, each bar with its companies and lift.
 */
import { type Chart, shorten, textStyle, width } from "../shared/Chart.ts"
import { missing } from "../shared/ContactLabels.ts"
import { productLabel } from "../shared/Format.ts"
import { shareLines } from "../shared/ShareLines.ts"
import type * as MarketData from "./MarketData.ts"

/** The roles in the order they are drawn and listed, with the names the page gives them. */
export const roles: ReadonlyArray<readonly [string, string]> = [
  ["ours", "ours"],
  ["rival", "rivals'"],
  ["complement", "complements"],
]

export const roleName = (role: string): string => roles.find(([key]) => key === role)?.[1] ?? role

/** The months of the shares, oldest first. */
export const months = (shares: ReadonlyArray<MarketData.SharePoint>): ReadonlyArray<string> =>
  [...new Set(shares.map((point) => point.month))].sort()

/** Per role declared, the share of the companies observed each month using one of its products. */
export const share = (shares: ReadonlyArray<MarketData.SharePoint>): Chart => {
  const all = months(shares)
  const present = roles.filter(([role]) => shares.some((point) => point.role === role))
  const others = [...new Set(shares.map((point) => point.role))].filter(
    (role) => !roles.some(([known]) => known === role),
  )
  return shareLines(
    all,
    [...present, ...others.map((role) => [role, role] as const)].map(([role, name]) => ({
      name,
      values: all.map((month) => {
        const point = shares.find((candidate) => candidate.month === month && candidate.role === role)
        return point === undefined ? null : Number((point.share * 100).toFixed(1))
      }),
    })),
    1,
  )
}

const liftText = (lift: number | null): string =>
  lift === null ? "lift unknown" : `lift ×${lift.toFixed(2)}`

/** Each pair "ours + beside it", its companies using both, labelled with the count and the lift. */
export const affinity = (rows: ReadonlyArray<MarketData.Affinity>): Chart => ({
  width,
  height: 60 + 26 * rows.length,
  option: {
    textStyle,
    grid: { left: 10, right: 130, top: 10, bottom: 30, containLabel: true },
    xAxis: {
      type: "value",
      name: "companies using both",
      nameLocation: "middle",
      nameGap: 24,
      minInterval: 1,
    },
    yAxis: {
      type: "category",
      inverse: true,
      data: rows.map(
        (row) =>
          `${shorten(row.ourProduct ?? row.ourVendor ?? missing, 24)} + ${shorten(productLabel(row.product, row.vendor), 36)}`,
      ),
    },
    series: [
      {
        type: "bar",
        barMaxWidth: 20,
        data: rows.map((row) => ({
          value: row.companiesBoth,
          label: { show: true, position: "right", formatter: `${row.companiesBoth} (${liftText(row.lift)})` },
        })),
      },
    ],
  },
})
