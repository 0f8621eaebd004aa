import { describe, expect, it } from "vitest"
import { describeOverlaps, overlaps, textBoxes } from "../../testing/TextBoxes.ts"
import * as Charts from "../shared/Chart.ts"
import * as Page from "../shared/ReportPage.ts"
import * as MarketCharts from "./MarketCharts.ts"
import type * as MarketData from "./MarketData.ts"
import * as MarketSections from "./MarketSections.ts"

const month = (m: string, role: string, using: number, observed = 40): MarketData.SharePoint => ({
  month: m,
  role,
  companiesObserved: observed,
  companiesUsing: using,
  share: using / observed,
})

const shares: ReadonlyArray<MarketData.SharePoint> = [
  month("2026-09-01", "complement", 17),
  month("2026-09-01", "ours", 8),
  month("2026-09-01", "rival", 9),
  month("2026-10-01", "complement", 18),
  month("2026-10-01", "ours", 9),
  month("2026-10-01", "rival", 9),
  month("2026-11-01", "ours", 10, 50),
  month("2026-11-01", "rival", 9, 50),
]

const opportunity = (company: string, reason: string): MarketData.Opportunity => ({
  reason,
  companyName: company,
  companyDomain: `${company.toLowerCase().replace(/\W/g, "")}.example`,
  companySizeRange: "200-999",
  product: "Jira",
  vendor: "Atlassian",
  role: "rival",
  happenedOn: "2026-11-02",
  evidence: "Jira seen 2026-10-01, gone 2026-11-02",
  contactName: reason === "champion joined a rival account" ? "Ann <Lee>" : null,
})

const affinityRow = (product: string, both: number, lift: number | null): MarketData.Affinity => ({
  ourProduct: "Asana",
  ourVendor: "Asana",
  product,
  vendor: "Google",
  companiesBoth: both,
  companiesOurs: 12,
  companiesOther: 30,
  companiesObserved: 50,
  lift,
})

const page = (market: MarketData.MarketReport) =>
  Page.render({ title: "t", subtitle: [], figures: [], sections: MarketSections.all(market) })

describe("MarketSections", () => {
  it("without a market says in one line how to declare one, and draws nothing", () => {
    for (const loaded of [false, true]) {
      const sections = MarketSections.all({ _tag: "Undeclared", loaded })
      expect(sections).toHaveLength(1)
      expect(sections[0]?.svg).toBeUndefined()
      const html = page({ _tag: "Undeclared", loaded })
      const hint = /class="nodata">([^<]*)</.exec(html)?.[1] ?? ""
      expect(hint).toContain("market: {ours, rivals, complements}")
      expect(hint).not.toContain("\n")
      expect(html).not.toContain("no data")
      expect(html).not.toContain("<svg")
    }
    // A schema with the market's table but nothing in it can also be told to fill it in SQL.
    expect(MarketSections.declareHint(true)).toContain("market table in SQL")
  })

  it("draws one line per role, ours first, from 0, every month's share labelled and no label over another", () => {
    const chart = MarketCharts.share(shares)
    const series = chart.option.series as ReadonlyArray<{
      readonly name: string
      readonly data: ReadonlyArray<{ readonly value: number } | null>
    }>
    expect(series.map((serie) => serie.name)).toEqual(["ours", "rivals'", "complements"])
    expect(series.map((serie) => serie.data.map((point) => point?.value ?? null))).toEqual([
      [20, 22.5, 20],
      [22.5, 22.5, 18],
      [42.5, 45, null],
    ])
    expect((chart.option.yAxis as { readonly min?: number }).min).toBe(0)
    const boxes = textBoxes(Charts.render(chart))
    for (const label of ["20.0%", "22.5%", "18.0%", "42.5%", "45.0%", "0%", "Sep 2026", "Nov 2026"])
      expect(
        boxes.map((box) => box.text),
        label,
      ).toContain(label)
    expect(describeOverlaps(overlaps(boxes))).toEqual([])
  })

  it("lists the accounts to act on open, each with its evidence, and says top N of M when cut", () => {
    const rows = [
      opportunity("Acme <Ltd>", "dropped a rival"),
      opportunity("Beta & Co", "champion joined a rival account"),
    ]
    const all = MarketSections.opportunities({ rows, total: 2 })
    expect(all.title).toBe("Your market: accounts to act on")
    expect(all.tableOpen).toBe(true)
    expect(all.data.columns).toEqual([
      "reason",
      "company",
      "domain",
      "size",
      "product",
      "when",
      "contact",
      "evidence",
    ])
    expect(all.data.rows).toEqual([
      [
        "dropped a rival",
        "Acme <Ltd>",
        "acmeltd.example",
        "200-999",
        "Jira (Atlassian)",
        "2026-11-02",
        "",
        "Jira seen 2026-10-01, gone 2026-11-02",
      ],
      [
        "champion joined a rival account",
        "Beta & Co",
        "betaco.example",
        "200-999",
        "Jira (Atlassian)",
        "2026-11-02",
        "Ann <Lee>",
        "Jira seen 2026-10-01, gone 2026-11-02",
      ],
    ])
    const cut = MarketSections.opportunities({ rows, total: 7 })
    expect(cut.title).toBe("Your market: accounts to act on (top 2 of 7)")
    const html = page({
      _tag: "Declared",
      shares,
      opportunities: { rows, total: 7 },
      affinity: { rows: [], total: 0 },
    })
    // Shown, not folded, and every string from the database escaped.
    expect(html).toContain('<div class="list"><table>')
    expect(html).toContain("accounts to act on (top 2 of 7)")
    expect(html).toContain("Acme &lt;Ltd&gt;")
    expect(html).toContain("Ann &lt;Lee&gt;")
    expect(html).not.toContain("Acme <Ltd>")
  })

  it("shows the products beside ours with their companies and lift, and top N of M when cut", () => {
    const rows = [affinityRow("Google Workspace", 9, 1.25), affinityRow("Google Analytics", 7, null)]
    const section = MarketSections.affinity({ rows, total: 4 })
    expect(section.title).toBe("Your market: what is used beside ours (top 2 of 4)")
    expect(section.data.rows).toEqual([
      ["Asana (Asana)", "Google Workspace (Google)", 9, 12, 30, 50, 1.25],
      ["Asana (Asana)", "Google Analytics (Google)", 7, 12, 30, 50, "(none)"],
    ])
    const svg = section.svg ?? ""
    expect(svg).toContain("Asana + Google Workspace (Google)")
    expect(svg).toMatch(/>9 \(lift ×1\.25\)<\/text>/)
    expect(svg).toMatch(/>7 \(lift unknown\)<\/text>/)
    expect(describeOverlaps(overlaps(textBoxes(svg)))).toEqual([])
    expect(MarketSections.affinity({ rows, total: 2 }).title).toBe("Your market: what is used beside ours")
  })

  it("with a market but nothing observed yet, each of its sections says no data", () => {
    const html = page({
      _tag: "Declared",
      shares: [],
      opportunities: { rows: [], total: 0 },
      affinity: { rows: [], total: 0 },
    })
    expect(html.match(/class="nodata">no data</g)).toHaveLength(3)
    expect(html).not.toContain("<svg")
  })
})
