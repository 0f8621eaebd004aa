import { describe, expect, it } from "vitest"
import { format } from "./Table.ts"

describe("Table.format", () => {
  it("aligns columns, right-aligns numbers and shows NULL", () => {
    const text = format(
      ["product", "companies", "share"],
      [
        { product: "Google Analytics", companies: 812, share: "0.81" },
        { product: "HubSpot", companies: 95, share: null },
      ],
    )
    expect(text).toBe(
      [
        "product          | companies | share",
        "-----------------+-----------+------",
        "Google Analytics |       812 |  0.81",
        "HubSpot          |        95 |  NULL",
        "(2 rows)",
        "",
      ].join("\n"),
    )
  })

  it("keeps every row on one line and cuts long values only to the width asked for", () => {
    const rows = [{ v: `a\nb\t${"x".repeat(100)}` }, { v: { nested: true } }]
    const whole = format(["v"], rows).split("\n")
    expect(whole).toHaveLength(6)
    expect(whole[2]).toBe(`a b ${"x".repeat(100)}`)
    expect(whole[3]).toBe('{"nested":true}')
    const cut = format(["v"], rows, { maxWidth: 20 }).split("\n")
    expect(cut[2]).toMatch(/^a b x+…$/)
    expect(cut[2]?.length).toBe(20)
    expect(cut[3]).toBe('{"nested":true}')
  })

  it("shows NULL and the empty string differently", () => {
    const lines = format(["v"], [{ v: null }, { v: "" }]).split("\n")
    expect(lines[2]).toBe("NULL")
    expect(lines[3]).toBe("")
  })

  it("reports a statement without columns by its row count", () => {
    expect(format([], [])).toBe("(0 rows)\n")
  })
})
