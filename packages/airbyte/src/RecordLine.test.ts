/**
 * The RECORD line: the reader keeps the data's text only when it is exactly the record's data as
 * the writer lays it out, and safe for jsonb; the faster scan agrees with a plain one.
 */
import * as Either from "effect/Either"
import fc from "fast-check"
import { describe, expect, it } from "vitest"
import * as Message from "./Message.ts"
import { parseLine } from "./Ndjson.ts"
import * as RecordLine from "./RecordLine.ts"
import { isCleanObject } from "./RecordLine.ts"

describe("RecordLine", () => {
  /** The data's text kept from a line, if any. */
  const textOf = (line: string): string | undefined => {
    const parsed = parseLine(line, 1)
    if (Either.isLeft(parsed) || parsed.right?.type !== "RECORD") throw new Error("not a record")
    return parsed.right.dataText
  }
  const line = (data: string, emittedAt = "1") =>
    `{"type":"RECORD","record":{"stream":"contacts","data":${data},"emitted_at":${emittedAt}}}`

  it("keeps the line's text of the data when it is one clean object", () => {
    const text = '{"match_id":"m-1","a":[1,{"b":"}\\"{"}],"c":"\\u00e9"}'
    expect(textOf(line(text))).toBe(text)
  })

  it("reads back the data's text of every line it writes, unless the text needs cleaning", () => {
    fc.assert(
      fc.property(fc.string(), fc.dictionary(fc.string(), fc.jsonValue({ maxDepth: 2 })), (stream, data) => {
        const line = RecordLine.write(Message.record(stream, data, 1_700_000_000_000))
        const text = JSON.stringify(data)
        expect(textOf(line)).toBe(isCleanObject(text) ? text : undefined)
      }),
    )
  })

  it("leaves NUL and surrogate escapes, duplicate keys and other layouts to JSON.stringify", () => {
    expect(textOf(line('{"match_id":"m-\\u0000"}'))).toBeUndefined()
    expect(textOf(line('{"match_id":"m-\\ud800"}'))).toBeUndefined()
    expect(textOf(line('{"match_id":"m-\\uDE00"}'))).toBeUndefined()
    expect(textOf(line('{"a":1},"emitted_at":1,"data":{"b":2}'))).toBeUndefined()
    expect(textOf(line('{"match_id":"m-1"}', "1.0"))).toBeUndefined()
    expect(
      textOf('{"record":{"stream":"contacts","data":{"match_id":"m"},"emitted_at":1},"type":"RECORD"}'),
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
