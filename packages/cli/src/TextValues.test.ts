import { describe, expect, it } from "vitest"
import * as TextValues from "./TextValues.ts"

describe("TextValues.jsonValue", () => {
  it("keeps numbers, booleans and json as JSON, and every other value as the server's text", () => {
    expect(TextValues.jsonValue("2", 23)).toBe(2)
    expect(TextValues.jsonValue("-1.5", 701)).toBe(-1.5)
    expect(TextValues.jsonValue("NaN", 701)).toBe("NaN")
    expect(TextValues.jsonValue("9007199254740993", 20)).toBe("9007199254740993")
    expect(TextValues.jsonValue("1.50", 1700)).toBe("1.50")
    expect(TextValues.jsonValue("t", 16)).toBe(true)
    expect(TextValues.jsonValue("f", 16)).toBe(false)
    expect(TextValues.jsonValue('{"x": [1]}', 3802)).toEqual({ x: [1] })
    expect(TextValues.jsonValue("2026-11-26", 1082)).toBe("2026-11-26")
    expect(TextValues.jsonValue("{a,b}", 1009)).toBe("{a,b}")
    expect(TextValues.jsonValue(null, 23)).toBeNull()
  })

  it("makes counts JSON numbers while exact, and keeps the text past 2^53", () => {
    // count(*) is int8; sum() of int8 is numeric.
    expect(TextValues.jsonValue("3472", 20)).toBe(3472)
    expect(TextValues.jsonValue("-5", 20)).toBe(-5)
    expect(TextValues.jsonValue("9007199254740991", 20)).toBe(9_007_199_254_740_991)
    expect(TextValues.jsonValue("-9007199254740991", 20)).toBe(-9_007_199_254_740_991)
    expect(TextValues.jsonValue("9007199254740992", 20)).toBe("9007199254740992")
    expect(TextValues.jsonValue("3472", 1700)).toBe(3472)
    expect(TextValues.jsonValue("123456789012345678901234567890", 1700)).toBe(
      "123456789012345678901234567890",
    )
    // A fraction keeps its scale as text: 1.50 is not 1.5.
    expect(TextValues.jsonValue("3.0", 1700)).toBe("3.0")
    expect(TextValues.jsonValue("NaN", 1700)).toBe("NaN")
  })

  it("right-aligns the number types only", () => {
    expect([20, 21, 23, 26, 700, 701, 1700].every(TextValues.isNumber)).toBe(true)
    expect([16, 25, 1082, 1186].some(TextValues.isNumber)).toBe(false)
  })
})
