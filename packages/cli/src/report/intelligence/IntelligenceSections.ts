/**
 * The report's sections on what repeated observations mean: the install base of the most used
 * products per month, who replaced what (displacements), and the champion moves. Each says what
 * it cannot know: only what was bought is observed, as often as refresh_after_days buys it.
 */
import { History } from "@salesintel/postgres"
import { chartOf } from "../shared/Chart.ts"
import { named, percent } from "../shared/Format.ts"
import type { Section } from "../shared/ReportPage.ts"
import { monthLabel } from "../shared/ShareLines.ts"
import * as IntelligenceCharts from "./IntelligenceCharts.ts"
import type * as IntelligenceData from "./IntelligenceData.ts"

const signed = (value: number): string => (value > 0 ? `+${value}` : String(value))

const observedOnly =
  "Only the companies bought are observed, and a purchase is an observation: the months are as fine as refresh_after_days makes them."

export const installBase = (data: IntelligenceData.IntelligenceReport): Section => ({
  id: "install-base",
  title: `Install base and displacement: the ${data.trends.length === 1 ? "top product" : `top ${data.trends.length} products`} month by month`,
  description: `For the products most in use now, the share of the companies observed each month whose observation showed it in use (over the companies observed that month, so a growing watch list does not read as growth), with the adoptions and drops observed. ${observedOnly}`,
  svg: chartOf(data.trends.length === 0 || data.months.length === 0, () =>
    IntelligenceCharts.installBase(data.months, data.trends),
  ),
  data: {
    columns: [
      "product",
      "vendor",
      "month",
      "companies observed",
      "using it",
      "share",
      "adopted",
      "dropped",
      "net",
    ],
    rows: data.trends.flatMap((trend) =>
      trend.points.map((point) => [
        named(trend.product),
        named(trend.vendor),
        monthLabel(point.month),
        point.companiesObserved,
        point.companiesUsing,
        percent(point.share),
        point.adoptions,
        point.drops,
        signed(point.adoptions - point.drops),
      ]),
    ),
  },
})

export const displacements = (rows: ReadonlyArray<IntelligenceData.Displacement>): Section => ({
  id: "displacements",
  title: "Install base and displacement: who replaced what",
  description: `Companies that dropped a product and adopted another of the same subcategory, the two observed within ${History.Intelligence.displacementWindowDays} days of each other (${History.Intelligence.displacements.name}): each replacement and how many companies made it, the most first.`,
  svg: chartOf(rows.length === 0, () => IntelligenceCharts.displacements(rows)),
  data: {
    columns: ["subcategory", "from", "from vendor", "to", "to vendor", "companies"],
    rows: rows.map((row) => [
      named(row.subcategory),
      named(row.droppedProduct),
      named(row.droppedVendor),
      named(row.adoptedProduct),
      named(row.adoptedVendor),
      row.companies,
    ]),
  },
})

export const champions = (rows: ReadonlyArray<IntelligenceData.ChampionProduct>): Section => ({
  id: "champion-moves",
  title: "Champion moves",
  description: `Contacts who moved to another company, by the products in use at the company they left (its last observation before the move was seen), and whether the company they joined uses the same product (${History.Intelligence.championMoves.name}): each move counted once per product (a contact who moved twice, twice). ${observedOnly}`,
  svg: chartOf(rows.length === 0, () => IntelligenceCharts.champions(rows)),
  data: {
    columns: [
      "product",
      "vendor",
      "category",
      "moves away",
      "joined a user",
      "joined a non-user",
      "joined unobserved",
    ],
    rows: rows.map((row) => [
      named(row.product),
      named(row.vendor),
      named(row.category),
      row.moves,
      row.joinedUsing,
      row.joinedNotUsing,
      row.joinedUnobserved,
    ]),
  },
})

/** The three sections, in the page's order. */
export const all = (data: IntelligenceData.IntelligenceReport): ReadonlyArray<Section> => [
  installBase(data),
  displacements(data.displacements),
  champions(data.champions),
]
