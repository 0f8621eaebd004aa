import * as Either from "effect/Either"
import { describe, expect, it } from "vitest"
import * as JsonFile from "./JsonFile.ts"
import * as JsonSyntax from "./JsonSyntax.ts"

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

  // Each malformed file, and what a user is told: the line and column of the character to fix, as
  // an editor counts them.
  const malformed: ReadonlyArray<readonly [string, string, string]> = [
    [
      "a trailing comma on line 2, before } on line 3",
      '{\n  "api_key": "k",\n}',
      "at line 2, column 17: a trailing comma: JSON allows none before }; remove it",
    ],
    [
      "a trailing comma in a list",
      '{\n  "domains": ["a.com", "b.com",\n  ]\n}',
      "at line 2, column 31: a trailing comma: JSON allows none before ]; remove it",
    ],
    [
      "a string whose closing quote is missing",
      '{\n  "api_key": "k,\n  "credit_budget": 10\n}',
      'at line 2, column 14: the string that starts here is not closed on its line (a closing " is missing)',
    ],
    [
      "a property name whose closing quote is missing",
      '{\n  "api_key: "k"\n}',
      `at line 2, column 11: a closing " is missing before this ':' (the name reads "api_key: ")`,
    ],
    [
      "a brace never closed",
      '{\n  "api_key": "k",\n  "credit_budget": 10\n',
      "at line 3, column 22: the file ends before the { at line 1, column 1 is closed (expected })",
    ],
    [
      "a list closed by }",
      '{\n  "domains": ["a.com"\n}',
      "at line 3, column 1: the [ at line 2, column 14 is closed by }, not ]",
    ],
    [
      "a comma missing at the end of line 2",
      '{\n  "a": 1\n  "b": 2\n}',
      'at line 3, column 3: unexpected \'"\': expected , or } after the value of "a"',
    ],
    [
      "a property name without quotes",
      '{\n  "api_key": "k",\n  credit_budget: 100\n}',
      "at line 3, column 3: unexpected credit_budget: expected a property name in double quotes",
    ],
    [
      "single quotes",
      "{\n  'a': 1\n}",
      `at line 2, column 3: "'": JSON strings and names take double quotes (")`,
    ],
    ["a comment", '{\n  // the key\n  "a": 1\n}', "at line 2, column 3: a comment: JSON allows none"],
    [
      "a second value after the first",
      "{}\n}",
      "at line 2, column 1: unexpected '}': expected the end of the file after the JSON value (a file holds one value)",
    ],
    [
      "an empty file",
      "  \n",
      "at line 1, column 1: the file is empty: expected a value: a string in double quotes",
    ],
    [
      "columns in characters: a name with é and an emoji before the comma",
      '{\n  "café ☕": 1,\n}',
      "at line 2, column 14: a trailing comma",
    ],
    ["Windows line ends", '{\r\n  "a": 1,\r\n}', "at line 2, column 9: a trailing comma"],
    [
      "a tab inside a string",
      '{"a": "x\ty"}',
      "at line 1, column 9: a control character (U+0009) inside a string",
    ],
  ]
  for (const [name, text, says] of malformed)
    it(`says where a file is not JSON and why: ${name}`, () => {
      const result = JsonFile.parse(text, "the config file c.json")
      expect(Either.isLeft(result) && result.left).toContain(
        `the config file c.json is not valid JSON ${says}`,
      )
    })

  it("reads a file that starts with a byte order mark, as Windows editors write it", () => {
    expect(JsonFile.parse('\uFEFF{"a": 1}', "the config file c.json")).toEqual(Either.right({ a: 1 }))
    const bad = JsonFile.parse('\uFEFF{\n  "a": 1,\n}', "the config file c.json")
    expect(Either.isLeft(bad) && bad.left).toContain("at line 2, column 9: a trailing comma")
  })

  it("finds no problem in JSON: the scanner agrees with JSON.parse", () => {
    for (const text of [
      '{"a": [1, -2.5e+3, "x\\u00e9\\n", true, false, null, {}, []]}',
      " 0 ",
      '"s"',
      "[[[]]]",
    ]) {
      expect(JSON.parse(text)).toBeDefined()
      expect(JsonSyntax.firstProblem(text)).toBeUndefined()
    }
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
