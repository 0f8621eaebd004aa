/**
 * The hand-written decoders agree with the core's schemas: on every value they accept they give
 * the schema's result, and what they leave (`miss`) is left to the schema. Also the `_raw` text
 * reuse only keeps text that is exactly the record's data and safe for jsonb.
 */

import { CompanyTechnologies, Contact, Taxonomy } from "@salesintel/core"
import { Either, Schema } from "effect"
import fc from "fast-check"
import { describe, expect, it } from "vitest"
import * as FastDecode from "./FastDecode.ts"
import { parseLine } from "./Messages.ts"
import { isCleanObject, JsonText, textOf } from "./RawJson.ts"
import { company, contact } from "./testing/Records.ts"

const agrees = <A, I>(schema: Schema.Schema<A, I>, fast: FastDecode.Fast<A>, input: unknown) => {
  const fastResult = fast(input)
  const schemaResult = Schema.decodeUnknownEither(schema)(input)
  if (fastResult === FastDecode.miss) return "miss"
  expect(Either.isRight(schemaResult)).toBe(true)
  if (Either.isRight(schemaResult)) expect(fastResult).toEqual(schemaResult.right)
  return "fast"
}

describe("FastDecode", () => {
  it("decodes canonical records exactly as the schemas do", () => {
    for (let id = 0; id < 20; id++)
      expect(agrees(Contact.Contact, FastDecode.contact, contact(id))).toBe("fast")
    expect(agrees(CompanyTechnologies.CompanyTechnologies, FastDecode.companyTechnologies, company(7))).toBe(
      "fast",
    )
    expect(agrees(Taxonomy.Category, FastDecode.category, { category: "A", subcategories: ["x"] })).toBe(
      "fast",
    )
    expect(agrees(Taxonomy.Product, FastDecode.product, { product: "P", vendor: null })).toBe("fast")
  })

  it("never accepts what the schema rejects, and leaves unusual spellings to the schema", () => {
    const odd: ReadonlyArray<Record<string, unknown>> = [
      { company_id: "x" },
      { company_id: 1.5 },
      { company_id: " 12" },
      { match_id: "" },
      { match_id: 1 },
      { dates: { created_date: "2024-01-02T03:04:05Z" } },
      { dates: { created_date: "1e3" } },
      { company: { revenue: "NaN" } },
      { phone_numbers: [{ value: 5 }] },
      { addresses: [{ location_id: "12", is_hq: "yes" }] },
      { addresses: [{ location_id: "12" }] },
      { social_profiles: "linkedin" },
      { position_location_id: null, company_domains: null, company: null },
    ]
    for (const overrides of odd) agrees(Contact.Contact, FastDecode.contact, contact(1, overrides))
    expect(agrees(Contact.Contact, FastDecode.contact, [])).toBe("miss")
    expect(agrees(Contact.Contact, FastDecode.contact, contact(1, { company_id: "x" }))).toBe("miss")
  })
})

describe("RawJson", () => {
  const dataOf = (line: string): object => {
    const parsed = parseLine(line, 1)
    if (Either.isLeft(parsed) || parsed.right?.type !== "RECORD") throw new Error("not a record")
    return parsed.right.record.data
  }
  const line = (data: string, emittedAt = "1") =>
    `{"type":"RECORD","record":{"stream":"contacts","data":${data},"emitted_at":${emittedAt}}}`

  it("keeps the line's text of the data when it is one clean object", () => {
    const text = '{"match_id":"m-1","a":[1,{"b":"}\\"{"}],"c":"\\u00e9"}'
    expect(textOf(dataOf(line(text)))).toEqual(new JsonText(text))
  })

  it("leaves NUL and surrogate escapes, duplicate keys and other layouts to JSON.stringify", () => {
    expect(textOf(dataOf(line('{"match_id":"m-\\u0000"}')))).toBeUndefined()
    expect(textOf(dataOf(line('{"match_id":"m-\\ud800"}')))).toBeUndefined()
    expect(textOf(dataOf(line('{"match_id":"m-\\uDE00"}')))).toBeUndefined()
    expect(textOf(dataOf(line('{"a":1},"emitted_at":1,"data":{"b":2}')))).toBeUndefined()
    expect(textOf(dataOf(line('{"match_id":"m-1"}', "1.0")))).toBeUndefined()
    expect(
      textOf(
        dataOf('{"record":{"stream":"contacts","data":{"match_id":"m"},"emitted_at":1},"type":"RECORD"}'),
      ),
    ).toBeUndefined()
  })

  // The first, character-by-character version: the reference the faster scan must agree with.
  const reference = (text: string): boolean => {
    if (text.charCodeAt(0) !== 123) return false
    let depth = 0
    let inString = false
    for (let index = 0; index < text.length; index++) {
      const code = text.charCodeAt(index)
      if (inString) {
        if (code === 34) inString = false
        else if (code === 92) {
          index++
          if (text.charCodeAt(index) === 117) {
            const hex = text.slice(index + 1, index + 5).toLowerCase()
            if (hex === "0000" || (hex.charCodeAt(0) === 100 && hex.charCodeAt(1) >= 56)) return false
            index += 4
          }
        }
      } else if (code === 34) inString = true
      else if (code === 123 || code === 91) depth++
      else if (code === 125 || code === 93) {
        depth--
        if (depth === 0) return index === text.length - 1
      }
    }
    return false
  }

  it("agrees with the character-by-character scan on any JSON, escapes and odd layouts included", () => {
    const nasty = fc.constantFrom(
      '"',
      "\\",
      "\\u",
      "\u0000",
      "\ud800",
      "\udfff",
      "\ud83d\ude00",
      "{",
      "}",
      "[",
      "]",
      '\\"',
    )
    const text = fc.array(fc.oneof(fc.string(), nasty), { maxLength: 6 }).map((parts) => parts.join(""))
    const value = fc.letrec((tie) => ({
      value: fc.oneof(
        { depthSize: "small" },
        text,
        fc.integer(),
        fc.constant(null),
        fc.array(tie("value"), { maxLength: 3 }),
        fc.dictionary(text, tie("value"), { maxKeys: 3 }),
      ),
    })).value
    fc.assert(
      fc.property(
        fc.dictionary(text, value, { maxKeys: 4 }),
        fc.constantFrom("", ',"x":1', ',"emitted_at":1,"data":{}'),
        (data, tail) => {
          const json = JSON.stringify(data) + tail
          expect(isCleanObject(json)).toBe(reference(json))
        },
      ),
      { numRuns: 2000 },
    )
  })
})
