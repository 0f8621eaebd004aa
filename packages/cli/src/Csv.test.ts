import { describe, expect, it } from "vitest"
import { format } from "./Csv.ts"

describe("Csv.format (RFC 4180)", () => {
  it("quotes what needs quoting, ends lines with CRLF, and keeps NULL apart from ''", () => {
    const text = format(
      ["id", "name", "note"],
      [
        [1, 'a "quoted", name', null],
        [2, "two\nlines", ""],
        [3n, "plain", { tags: ["x"] }],
      ],
    )
    expect(text).toBe(
      [
        "id,name,note",
        '1,"a ""quoted"", name",',
        '2,"two\nlines",""',
        '3,plain,"{""tags"":[""x""]}"',
        "",
      ].join("\r\n"),
    )
  })

  it("writes dates in ISO 8601 and nothing for a statement without columns", () => {
    expect(format(["at"], [[new Date("2026-01-02T03:04:05.000Z")]])).toBe(
      "at\r\n2026-01-02T03:04:05.000Z\r\n",
    )
    expect(format([], [])).toBe("")
  })

  it("keeps columns that share a name, each with its own value", () => {
    expect(format(["a", "a"], [[1, 2]])).toBe("a,a\r\n1,2\r\n")
  })
})
