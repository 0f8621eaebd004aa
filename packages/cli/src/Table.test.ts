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

  it("keeps every row on one line and shortens long values", () => {
    const text = format(["v"], [{ v: `a\nb\t${"x".repeat(100)}` }, { v: { nested: true } }])
    const lines = text.split("\n")
    expect(lines).toHaveLength(6)
    expect(lines[2]).toMatch(/^a b x+…$/)
    expect(lines[2]?.length).toBe(60)
    expect(lines[3]).toBe('{"nested":true}')
  })

  it("reports a statement without columns by its row count", () => {
    expect(format([], [])).toBe("(0 rows)\n")
  })
})
