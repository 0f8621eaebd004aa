import { describe, expect, it } from "vitest"
import { Estimate } from "./Read.ts"

describe("Read.Estimate", () => {
  it("sums the latest estimate of each key, never below what it emitted", () => {
    const estimate = new Estimate()
    estimate.set("search a", 100)
    estimate.set("search b", 50)
    expect(estimate.rows(10)).toBe(150)
    expect(estimate.rows(200)).toBe(200)
    // Search a ended having read 70: its estimate is revised, b's stands.
    estimate.set("search a", 70)
    expect(estimate.rows(10)).toBe(120)
  })

  it("has bytes once records are sized, from their average UTF-8 size", () => {
    const estimate = new Estimate(2)
    estimate.set("", 10)
    expect(estimate.bytes(0)).toBeUndefined()
    expect(estimate.sample({ a: "é" })).toBe(false) // {"a":"é"}: 10 bytes
    expect(estimate.sample({ a: "xx" })).toBe(true) // {"a":"xx"}: 10 bytes; the sample is complete
    expect(estimate.sample({ a: "much longer than the rest" })).toBe(false) // past the sample
    expect(estimate.bytes(3)).toBe(100)
  })

  it("says a completed sample only when there is an estimate to restate", () => {
    const estimate = new Estimate(1)
    expect(estimate.sample({})).toBe(false)
    expect(estimate.bytes(5)).toBe(10)
  })
})
