import * as Either from "effect/Either"
import { describe, expect, it } from "vitest"
import * as JsonFile from "./JsonFile.ts"

describe("JsonFile.parse", () => {
  it("reads JSON", () => {
    expect(JsonFile.parse('{"a": [1, 2.5, "x"]}', "the config file c.json")).toEqual(
      Either.right({ a: [1, 2.5, "x"] }),
    )
  })

  it("says a file is not JSON, and at which line and column", () => {
    const result = JsonFile.parse('{\n  "api_key": "k",\n  credit_budget: 100\n}', "the config file c.json")
    expect(Either.isLeft(result) && result.left).toMatch(
      /^the config file c\.json is not valid JSON at line 3, column 3: /,
    )
  })

  it("refuses a whole number JSON cannot read exactly, with its path, instead of reading another", () => {
    // 9007199254740993 would be read as 9007199254740992.
    const result = JsonFile.parse('{"credit_budget": 9007199254740993}', "the config file c.json")
    expect(Either.isLeft(result) && result.left).toBe(
      "the config file c.json: credit_budget is a whole number too large to be read exactly (the largest is 9007199254740991); use a smaller one",
    )
    const nested = JsonFile.parse('{"a": [{"b": 1e20}]}', "the state file s.json")
    expect(Either.isLeft(nested) && nested.left).toMatch(/a\[0\]\.b is a whole number too large/)
    expect(JsonFile.parse('{"max": 9007199254740991, "f": 1.5}', "x")).toEqual(
      Either.right({ max: 9007199254740991, f: 1.5 }),
    )
  })
})
