import { describe, expect, it } from "vitest"
import { describeOverlaps, overlaps, textBoxes } from "../testing/TextBoxes.ts"
import * as ChangesCharts from "./changes/ChangesCharts.ts"
import * as IntelligenceCharts from "./intelligence/IntelligenceCharts.ts"
import * as MarketData from "./market/MarketData.ts"
import * as OverviewCharts from "./overview/OverviewCharts.ts"
import type { ReportData } from "./ReportData.ts"
import * as Sections from "./ReportSections.ts"
import * as Charts from "./shared/Chart.ts"
import { escapeText } from "./shared/Html.ts"
import * as Page from "./shared/ReportPage.ts"
import * as ShareLines from "./shared/ShareLines.ts"

const empty: ReportData = {
  companies: 0,
  contacts: 0,
  categories: [],
  products: [],
  sizeBands: { categories: [], bands: [] },
  departmentLevels: [],
  runs: [],
  changes: { products: [], runs: [], jobs: [] },
  intelligence: { months: [], trends: [], displacements: [], champions: [] },
  market: MarketData.undeclared(false),
}

const some: ReportData = {
  companies: 3,
  contacts: 4,
  categories: [
    { category: "CRM <b>", companies: 2, share: 2 / 3 },
    { category: null, companies: 1, share: 1 / 3 },
  ],
  products: [{ product: "Widget & Co", vendor: null, category: "CRM <b>", companies: 2, share: 2 / 3 }],
  sizeBands: {
    categories: ["CRM <b>"],
    bands: [
      { band: "1-49", bandCompanies: 2, using: { "CRM <b>": 1 } },
      { band: "unknown", bandCompanies: 1, using: { "CRM <b>": 1 } },
    ],
  },
  departmentLevels: [
    { department: "it_is", level: "vp", departmentLabel: "it_is", levelLabel: "vp", contacts: 3 },
    { department: null, level: null, departmentLabel: null, levelLabel: null, contacts: 1 },
  ],
  runs: [
    {
      id: 7,
      startedAt: new Date("2026-01-02T03:04:05Z"),
      status: "succeeded",
      streams: { contacts: 5 },
      credits: 5,
    },
  ],
  changes: {
    products: [
      {
        product: "Widget & Co",
        vendor: "<i>V</i>",
        category: "CRM <b>",
        adopted: 3,
        dropped: 1,
        byRun: [
          [7, 2, 1],
          [null, 1, 0],
        ],
      },
    ],
    runs: [
      { runId: 7, adopted: 2, dropped: 1, jobChanges: 4 },
      { runId: null, adopted: 1, dropped: 0, jobChanges: 0 },
    ],
    jobs: [
      {
        departmentLabel: "IT",
        levelLabel: "VP",
        changes: 4,
        companyMoves: 2,
        titleChanges: 1,
        levelChanges: 1,
      },
    ],
  },
  intelligence: {
    months: ["2026-08-01", "2026-09-01"],
    trends: [
      {
        product: "Widget & Co",
        vendor: "<i>V</i>",
        category: "CRM <b>",
        inUse: 2,
        points: [
          {
            month: "2026-08-01",
            companiesObserved: 3,
            companiesUsing: 1,
            share: 1 / 3,
            adoptions: 0,
            drops: 0,
          },
          {
            month: "2026-09-01",
            companiesObserved: 3,
            companiesUsing: 2,
            share: 2 / 3,
            adoptions: 2,
            drops: 1,
          },
        ],
      },
    ],
    displacements: [
      {
        category: "CRM <b>",
        subcategory: "Sales <CRM>",
        droppedProduct: "Old & Co",
        droppedVendor: null,
        adoptedProduct: "Widget & Co",
        adoptedVendor: "<i>V</i>",
        companies: 2,
      },
    ],
    champions: [
      {
        product: "Widget & Co",
        vendor: "<i>V</i>",
        category: "CRM <b>",
        moves: 4,
        joinedUsing: 1,
        joinedNotUsing: 3,
        joinedUnobserved: 0,
      },
    ],
  },
  market: {
    _tag: "Declared",
    shares: [
      { month: "2026-08-01", role: "ours", companiesObserved: 3, companiesUsing: 1, share: 1 / 3 },
      { month: "2026-08-01", role: "rival", companiesObserved: 3, companiesUsing: 2, share: 2 / 3 },
    ],
    opportunities: {
      total: 1,
      rows: [
        {
          reason: "dropped a rival",
          companyName: "Acme <Ltd>",
          companyDomain: "acme.example",
          companySizeRange: "50-199",
          product: "Old & Co",
          vendor: null,
          role: "rival",
          happenedOn: "2026-09-01",
          evidence: "Old & Co seen 2026-08-01, gone 2026-09-01",
          contactName: null,
        },
      ],
    },
    affinity: {
      total: 1,
      rows: [
        {
          ourProduct: "Widget & Co",
          ourVendor: "<i>V</i>",
          product: "Old & Co",
          vendor: null,
          companiesBoth: 2,
          companiesOurs: 2,
          companiesOther: 2,
          companiesObserved: 3,
          lift: 1.5,
        },
      ],
    },
  },
}

const page = (data: ReportData) =>
  Page.render({ title: "t", subtitle: [], figures: [], sections: Sections.all(data) })

describe("Sections", () => {
  it("with no data, every section says so and draws no chart", () => {
    const sections = Sections.all(empty)
    expect(sections.map((section) => section.svg)).toEqual(Array.from({ length: 11 }, () => undefined))
    const html = page(empty)
    expect(html.match(/class="nodata">no data</g)?.length).toBe(10)
    // The market section says how to declare a market instead.
    expect(html).toContain('class="nodata">No market in this schema')
    expect(html).not.toContain("<svg")
  })

  it("with data, every section has an SVG chart and its numbers, database strings escaped", () => {
    const sections = Sections.all(some)
    // Every section but the list of accounts to act on, whose table is its content.
    for (const section of sections)
      if (section.id !== "market-opportunities") expect(section.svg, section.id).toMatch(/^<svg[\s>]/)
    expect(sections.map((section) => section.data.rows.length)).toEqual([
      2, 1, 2, 2, 1, 1, 1, 2, 1, 1, 2, 1, 1,
    ])
    expect(sections[7]?.data.rows).toEqual([
      ["Widget & Co", "<i>V</i>", "Aug 2026", 3, 1, "33.3%", 0, 0, "0"],
      ["Widget & Co", "<i>V</i>", "Sep 2026", 3, 2, "66.7%", 2, 1, "+1"],
    ])
    expect(sections[8]?.data.rows).toEqual([
      ["Sales <CRM>", "Old & Co", "(none)", "Widget & Co", "<i>V</i>", 2],
    ])
    expect(sections[9]?.data.rows).toEqual([["Widget & Co", "<i>V</i>", "CRM <b>", 4, 1, 3, 0]])
    expect(sections[5]?.data.rows).toEqual([
      ["Widget & Co", "<i>V</i>", "CRM <b>", 3, 1, "#7: +2 −1, no run: +1 −0"],
    ])
    expect(sections[6]?.data.rows).toEqual([["IT", "VP", 4, 2, 1, 1]])
    expect(sections[2]?.data.rows).toEqual([
      ["1-49", 2, "1 (50.0%)"],
      ["unknown", 1, "1 (100.0%)"],
    ])
    expect(sections[4]?.data.rows).toEqual([["#7", "2026-01-02 03:04:05", "succeeded", 5, "contacts: 5"]])
    const html = page(some)
    expect(html).not.toContain("CRM <b>")
    expect(html).toContain("CRM &lt;b&gt;")
    expect(html).not.toContain("Widget & Co")
    expect(html).not.toContain("<i>V</i>")
    expect(html).toContain("(none)")
    expect(html).not.toContain("Sales <CRM>")
    expect(html).not.toContain("Old & Co")
  })

  it("labels the install base's points with their share, the replacements and the champion parts with their counts", () => {
    const trend = Charts.render(
      IntelligenceCharts.installBase(some.intelligence.months, some.intelligence.trends),
    )
    expect(trend).toMatch(/>33\.3%<\/text>/)
    expect(trend).toMatch(/>66\.7%<\/text>/)
    expect(trend).toContain("Aug 2026")
    const replaced = Charts.render(IntelligenceCharts.displacements(some.intelligence.displacements))
    expect(replaced).toContain("Old &amp; Co → Widget &amp; Co")
    expect(replaced).toMatch(/>2<\/text>/)
    const champions = Charts.render(IntelligenceCharts.champions(some.intelligence.champions))
    expect(champions).toMatch(/>3<\/text>/)
    expect(champions).toMatch(/>1<\/text>/)
    // A month whose observations did not show the product is a gap, not a zero.
    const gap = IntelligenceCharts.installBase(
      ["2026-07-01", ...some.intelligence.months],
      some.intelligence.trends,
    )
    const [line] = gap.option.series as ReadonlyArray<{
      readonly data: ReadonlyArray<{ readonly value: number } | null>
    }>
    expect(line?.data.map((point) => point?.value ?? null)).toEqual([null, 33.3, 66.7])
  })

  it("titles every chart for screen readers and HTML checkers, and leaves out ECharts' CDATA hover styles", () => {
    const html = page(some)
    const svgs = html.match(/<svg\b[^>]*>[\s\S]*?<\/svg>/g) ?? []
    const charted = Sections.all(some).filter((section) => section.svg !== undefined)
    expect(svgs).toHaveLength(12)
    for (const [index, svg] of svgs.entries()) {
      const title = /^<svg\b[^>]*\brole="img"[^>]*><title>([^<]+)<\/title>/.exec(svg)?.[1]
      expect(title, `chart ${index}`).toBe(escapeText(charted[index]!.title))
    }
    expect(html).not.toContain("CDATA")
  })

  it("prints every table open: a closed <details> prints nothing", () => {
    const html = page(some)
    // Every chart's numbers; the accounts to act on are a list shown open, on screen and in print.
    expect(html.match(/<details>/g)).toHaveLength(12)
    expect(html.match(/<div class="print-numbers"><table>/g)).toHaveLength(12)
    expect(html.match(/<div class="list"><table>/g)).toHaveLength(1)
    const print = html.slice(html.indexOf("@media print {"))
    expect(print.indexOf("details { display: none; }")).toBeGreaterThan(0)
    expect(print.indexOf(".print-numbers { display: block; }")).toBeGreaterThan(0)
  })

  it("draws technologies and job changes on plots of their own, one axis each, every bar with its number", () => {
    const chart = ChangesCharts.changes([
      { runId: 1, adopted: 5, dropped: 4, jobChanges: 37 },
      { runId: 2, adopted: 0, dropped: 1, jobChanges: 2 },
    ])
    type Axis = { readonly gridIndex?: number }
    const option = chart.option as {
      readonly grid: ReadonlyArray<unknown>
      readonly yAxis: ReadonlyArray<Axis>
      readonly series: ReadonlyArray<{ readonly name: string; readonly yAxisIndex?: number }>
    }
    // Two plots, one value axis on each: no plot carries counts of two kinds.
    expect(option.grid).toHaveLength(2)
    expect(option.yAxis.map((axis) => axis.gridIndex ?? 0)).toEqual([0, 1])
    const plotOf = (serie: { readonly yAxisIndex?: number }) =>
      option.yAxis[serie.yAxisIndex ?? 0]?.gridIndex ?? 0
    expect(option.series.map((serie) => [serie.name, plotOf(serie)])).toEqual([
      ["technologies adopted", 0],
      ["technologies dropped", 0],
      ["job changes", 1],
    ])
    const svg = Charts.render(chart)
    for (const value of ["5", "-4", "37", "-1", "2"])
      expect(svg, value).toMatch(new RegExp(`>${value}</text>`))
    // The technologies at the left half of the picture, the job changes at the right.
    const boxes = textBoxes(svg)
    const at = (text: string) => boxes.find((box) => box.text === text)?.left ?? Number.NaN
    expect(at("5")).toBeLessThan(Charts.width / 2)
    expect(at("37")).toBeGreaterThan(Charts.width / 2)
    expect(describeOverlaps(overlaps(boxes))).toEqual([])
    // A zero bar carries no stray label (the two axes' zeros are the only 0s).
    expect(svg.match(/>0<\/text>/g)).toHaveLength(2)
  })

  it("starts the install base's axis at 0 and spreads the labels of close shares so none overlaps another", () => {
    // The demo's six top products: shares one or two points apart.
    const shares = [65, 63, 55, 54, 47, 45]
    const trends = shares.map((share, index) => ({
      product: `Product ${index}`,
      vendor: "Vendor",
      category: null,
      inUse: share,
      points: ["2026-10-01", "2026-11-01"].map((month) => ({
        month,
        companiesObserved: 100,
        companiesUsing: share + (month === "2026-11-01" && index === 2 ? 1 : 0),
        share: (share + (month === "2026-11-01" && index === 2 ? 1 : 0)) / 100,
        adoptions: 0,
        drops: 0,
      })),
    }))
    const chart = IntelligenceCharts.installBase(["2026-10-01", "2026-11-01"], trends)
    expect((chart.option.yAxis as { readonly min?: number }).min).toBe(0)
    const svg = Charts.render(chart)
    const boxes = textBoxes(svg)
    expect(boxes.map((box) => box.text)).toContain("0%")
    // Every point keeps its label: none hidden to make room.
    const labels = boxes.filter((box) => /^\d+\.\d%$/.test(box.text))
    expect(labels).toHaveLength(12)
    expect(describeOverlaps(overlaps(boxes))).toEqual([])
  })

  it("keeps labels apart when many shares are equal, and inside the plot", () => {
    const lines = Array.from({ length: 8 }, (_, index) => ({ name: `line ${index}`, values: [50, 50, 2] }))
    const chart = ShareLines.shareLines(["2026-09-01", "2026-10-01", "2026-11-01"], lines, 2)
    const boxes = textBoxes(Charts.render(chart))
    expect(boxes.filter((box) => box.text === "50.0%" || box.text === "2.0%")).toHaveLength(24)
    expect(describeOverlaps(overlaps(boxes))).toEqual([])
    // None is pushed below the x axis's labels or off the picture.
    for (const box of boxes) expect(box.bottom, box.text).toBeLessThanOrEqual(chart.height)
  })

  it("shows a department and level without contacts as 0 in the heat map, not as a blank", () => {
    const chart = OverviewCharts.departmentLevels([
      { department: "it_is", level: "vp", departmentLabel: "IT", levelLabel: "VP", contacts: 3 },
      { department: "sale", level: "dir", departmentLabel: "Sales", levelLabel: "Director", contacts: 2 },
    ])
    const [heat] = chart.option.series as ReadonlyArray<{
      readonly data: ReadonlyArray<ReadonlyArray<number>>
    }>
    // Levels across (Director, VP), departments down (IT, Sales): four cells, two of them 0.
    expect(heat?.data).toEqual([
      [0, 0, 0],
      [1, 0, 3],
      [0, 1, 2],
      [1, 1, 0],
    ])
    expect(Charts.render(chart).match(/>0<\/text>/g)?.length).toBeGreaterThanOrEqual(2)
  })

  it("says 1 row and the only run, not 1 rows and the latest 1 runs", () => {
    const html = page(some)
    expect(html).toContain("The numbers (1 row)")
    expect(html).toContain("The numbers (2 rows)")
    expect(html).not.toMatch(/\b1 rows\b|latest 1 runs/)
    expect(html).toContain("the only run")
    const two = { ...some, runs: [...some.runs, { ...some.runs[0], id: 8 } as (typeof some.runs)[number]] }
    expect(page(two)).toContain("the latest 2 runs")
  })

  it("leaves free streams out of the credits chart's legend", () => {
    const chart = OverviewCharts.runs([
      { ...(some.runs[0] as ReportData["runs"][number]), streams: { contacts: 5, taxonomy_products: 0 } },
    ])
    const series = chart.option.series as ReadonlyArray<{ readonly name: string }>
    expect(series.map((serie) => serie.name)).toEqual(["contacts"])
  })

  it("shows each size band bar's companies, so a small band's 100% is seen to be a few", () => {
    const chart = OverviewCharts.sizeBands(some.sizeBands)
    const [serie] = chart.option.series as ReadonlyArray<{
      readonly data: ReadonlyArray<{ readonly value: number; readonly label: { readonly formatter: string } }>
    }>
    expect(serie?.data.map((bar) => [bar.value, bar.label.formatter])).toEqual([
      [50, "1"],
      [100, "1"],
    ])
    expect(Charts.render(chart)).toMatch(/>1<\/text>/)
  })
})

describe("Charts.shorten", () => {
  it("cuts a long label at a word's end, closing the parenthesis it opened", () => {
    const label = "PostgreSQL (PostgreSQL Global Development Group)"
    const short = Charts.shorten(label)
    expect(short).toBe("PostgreSQL (PostgreSQL Global Development…)")
    expect(short.length).toBeLessThanOrEqual(44)
    expect(Charts.shorten("short (ok)")).toBe("short (ok)")
    for (const cut of [Charts.shorten("alpha beta gamma delta epsilon zeta eta theta", 20)])
      expect(cut).toBe("alpha beta gamma…")
  })
})
