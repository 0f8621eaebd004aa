/**
 * The report's "Your market" sections: ours against the rivals' over time, the accounts to act
 * on, and what is used beside ours. Without a declared market, one section says how to declare
 * it. A list cut to the report's limit says "top N of M", never stops silently.
 */
import { History } from "@salesintel/postgres"
import { chartOf } from "../shared/Chart.ts"
import { missing } from "../shared/ContactLabels.ts"
import { named, percent, productLabel } from "../shared/Format.ts"
import type { Section } from "../shared/ReportPage.ts"
import * as MarketCharts from "./MarketCharts.ts"
import * as MarketData from "./MarketData.ts"

/** "" when every row is shown, else " (top 20 of 37)". */
export const cut = (listed: MarketData.Listed<unknown>): string =>
  listed.rows.length < listed.total ? ` (top ${listed.rows.length} of ${listed.total})` : ""

/** What to do for a market to be shown: one line, in place of a chart. */
export const declareHint = (loaded: boolean): string =>
  loaded
    ? "No market declared: list your products, your rivals' and their complements in the config, market: {ours, rivals, complements} (products or vendors as the taxonomy names them), and sync; or fill the market table in SQL."
    : "No market in this schema (a loader before the market views wrote it): declare market: {ours, rivals, complements} in the config (products or vendors as the taxonomy names them) and sync."

export const undeclared = (loaded: boolean): Section => ({
  id: "market",
  title: "Your market",
  description:
    "Your products against your rivals' over time, the accounts to act on and what is used beside yours, once you say which products are yours.",
  svg: undefined,
  empty: declareHint(loaded),
  data: { columns: [], rows: [] },
})

export const share = (shares: ReadonlyArray<MarketData.SharePoint>): Section => ({
  id: "market-share",
  title: "Your market: our share and the rivals' month by month",
  description: `Each month, the share of the companies observed whose observation showed at least one of our products, one of a rival's, one of a complement (${MarketData.shareView}), over the companies observed that month, counted at each company's last observation of the month. Only the companies bought are observed.`,
  svg: chartOf(shares.length === 0, () => MarketCharts.share(shares)),
  data: {
    columns: ["month", "products", "companies observed", "using them", "share"],
    rows: shares.map((point) => [
      point.month.slice(0, 7),
      MarketCharts.roleName(point.role),
      point.companiesObserved,
      point.companiesUsing,
      percent(point.share),
    ]),
  },
})

export const opportunities = (listed: MarketData.Listed<MarketData.Opportunity>): Section => ({
  id: "market-opportunities",
  title: `Your market: accounts to act on${cut(listed)}`,
  description: `Accounts that dropped a rival's product or adopted a complement in the last ${History.Intelligence.displacementWindowDays} days, and accounts a champion of ours joined that use a rival (${MarketData.opportunitiesView}), the latest first, each with the evidence.`,
  svg: undefined,
  tableOpen: true,
  data: {
    columns: ["reason", "company", "domain", "size", "product", "when", "contact", "evidence"],
    oneLine: ["domain", "size", "when"],
    rows: listed.rows.map((row) => [
      row.reason,
      named(row.companyName),
      named(row.companyDomain),
      named(row.companySizeRange),
      productLabel(row.product, row.vendor),
      named(row.happenedOn),
      row.contactName ?? "",
      named(row.evidence),
    ]),
  },
})

export const affinity = (listed: MarketData.Listed<MarketData.Affinity>): Section => ({
  id: "market-affinity",
  title: `Your market: what is used beside ours${cut(listed)}`,
  description: `The products most often used at the companies that use one of ours (${MarketData.affinityView}, among the companies observed): companies using both, and the lift, how many times more often than chance the two go together (above 1: more often).`,
  svg: chartOf(listed.rows.length === 0, () => MarketCharts.affinity(listed.rows)),
  data: {
    columns: ["ours", "beside it", "companies using both", "using ours", "using it", "observed", "lift"],
    rows: listed.rows.map((row) => [
      productLabel(row.ourProduct, row.ourVendor),
      productLabel(row.product, row.vendor),
      row.companiesBoth,
      row.companiesOurs,
      row.companiesOther,
      row.companiesObserved,
      row.lift === null ? missing : Number(row.lift.toFixed(2)),
    ]),
  },
})

/** The market's sections in the page's order: one saying how to declare it when there is none. */
export const all = (data: MarketData.MarketReport): ReadonlyArray<Section> =>
  data._tag === "Undeclared"
    ? [undeclared(data.loaded)]
    : [share(data.shares), opportunities(data.opportunities), affinity(data.affinity)]
