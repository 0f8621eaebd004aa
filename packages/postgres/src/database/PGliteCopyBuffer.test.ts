import { describe, expect, it } from "vitest"
import { PGliteCopyBuffer } from "./PGliteCopyBuffer.ts"

const bytes = (...values: ReadonlyArray<number>) => new Uint8Array(values)

describe("PGliteCopyBuffer", () => {
  it("holds exactly the bytes given, a view's own bytes only", () => {
    const pool = new PGliteCopyBuffer()
    const larger = bytes(9, 1, 2, 3, 9)
    const buffer = pool.fill(larger.subarray(1, 4))
    expect(buffer.byteLength).toBe(3)
    expect([...new Uint8Array(buffer)]).toEqual([1, 2, 3])
  })

  it("carries the next COPY in the buffer that came back, resized to it", () => {
    const pool = new PGliteCopyBuffer()
    const first = pool.fill(bytes(1, 2, 3, 4))
    pool.returned(first)
    const second = pool.fill(bytes(5, 6))
    expect(second).toBe(first)
    expect([...new Uint8Array(second)]).toEqual([5, 6])
    // Away (not returned): the next one gets a buffer of its own.
    expect(pool.fill(bytes(7))).not.toBe(second)
  })

  it("makes a larger buffer when the bytes outgrow the one that came back", () => {
    const pool = new PGliteCopyBuffer()
    const small = pool.fill(bytes(1))
    pool.returned(small)
    const big = new Uint8Array(PGliteCopyBuffer.reserve + 1).fill(7)
    const buffer = pool.fill(big)
    expect(buffer).not.toBe(small)
    expect(buffer.byteLength).toBe(big.length)
  })
})
