import { describe, expect, it } from "@effect/vitest"
import fc from "fast-check"
import { KeyTable } from "./KeyTable.ts"

describe("KeyTable", () => {
  it("numbers keys as a Map would, through growth, for any strings (empty, non-ASCII, long)", () => {
    fc.assert(
      fc.property(
        fc.array(fc.oneof(fc.string(), fc.string({ unit: "grapheme" }), fc.string({ minLength: 300 }))),
        (keys) => {
          const table = new KeyTable()
          const model = new Map<string, number>()
          for (const key of keys) {
            const expected = model.get(key) ?? model.size
            expect(table.add(key)).toBe(expected)
            model.set(key, expected)
          }
          expect(table.size).toBe(model.size)
          for (const [key, index] of model) {
            expect(table.indexOf(key)).toBe(index)
            expect(table.keyAt(index)).toBe(key)
          }
          expect(table.indexOf("\u0000never added\u0000")).toBe(model.has("\u0000never added\u0000") ? 0 : -1)
        },
      ),
    )
  })

  it("holds 200,000 ids of 12 characters in at most 40 bytes each, room to grow included", () => {
    const table = new KeyTable()
    for (let i = 0; i < 200_000; i++)
      table.add(`m-${String((i * 2_654_435_761) % 2 ** 32).padStart(10, "0")}`)
    expect(table.size).toBe(200_000)
    expect(table.byteLength / table.size).toBeLessThanOrEqual(40)
    expect(table.indexOf(`m-${String((199_999 * 2_654_435_761) % 2 ** 32).padStart(10, "0")}`)).toBe(199_999)
    expect(table.indexOf("m-x")).toBe(-1)
  })
})
