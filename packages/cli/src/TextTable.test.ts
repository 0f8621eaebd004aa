import { describe, expect, it } from "vitest"
import { format, objects } from "./TextTable.ts"

describe("Table.format", () => {
  it("aligns columns, right-aligns numbers and shows NULL", () => {
    const text = format(
      ["product", "companies", "share"],
      [
        ["Google Analytics", 812, "0.81"],
        ["HubSpot", 95, null],
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
    const rows = [[`a\nb\t${"x".repeat(100)}`], [{ nested: true }]]
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
    const lines = format(["v"], [[null], [""]]).split("\n")
    expect(lines[2]).toBe("NULL")
    expect(lines[3]).toBe("")
  })

  it("reports a statement without columns by its row count, in the singular for one", () => {
    expect(format([], [])).toBe("(0 rows)\n")
    expect(format([], [[]])).toBe("(1 row)\n")
  })

  it("shows every column of a result, even two of one name", () => {
    expect(
      format(["count", "count"], [[3, 2]])
        .split("\n")
        .slice(0, 3),
    ).toEqual(["count | count", "------+------", "    3 |     2"])
  })

  it("names a repeated column name_2 in the objects JSON shows", () => {
    expect(objects(["a", "a", "b", "a"], [[1, 2, 3, 4]])).toEqual([{ a: 1, a_2: 2, b: 3, a_3: 4 }])
  })
})
