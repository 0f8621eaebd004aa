import { describe, expect, it } from "vitest"
import { type Counts, Reporter, render } from "./Progress.ts"

const counts = (records: number, elapsedMillis: number): Counts => ({
  records,
  recordsByStream: new Map([
    ["contacts", records - 5],
    ["companies", 5],
  ]),
  pages: 31,
  checkpoints: 3,
  creditsSpent: records,
  creditBudget: 5_000,
  elapsedMillis,
})

describe("Progress", () => {
  it("renders records per stream, pages, checkpoints, credits of the budget, rate and time", () => {
    expect(render(counts(1_505, 2_000))).toBe(
      "1,505 records (contacts 1,500, companies 5) · 31 pages · 3 checkpoints · 1,505 of 5,000 credits · 753 records/s · 0:02",
    )
  })

  it("rewrites one live line on a terminal, at most every 100 ms", () => {
    const written: Array<string> = []
    const reporter = new Reporter({ isTTY: true, write: (text) => written.push(text) })
    reporter.update(counts(10, 10), 0)
    reporter.update(counts(20, 50), 50)
    reporter.update(counts(30, 150), 150)
    reporter.finish(counts(40, 200))
    expect(written).toHaveLength(3)
    expect(written.every((line) => line.startsWith("\r\x1b[K"))).toBe(true)
    expect(written.at(-1)?.endsWith("\n")).toBe(true)
  })

  it("prints plain lines every few seconds elsewhere", () => {
    const written: Array<string> = []
    const reporter = new Reporter({ isTTY: false, write: (text) => written.push(text) }, 5_000)
    for (let now = 0; now <= 12_000; now += 1_000) reporter.update(counts(now, now), now)
    reporter.finish(counts(13_000, 13_000))
    expect(written).toHaveLength(4)
    expect(written.some((line) => line.includes("\r"))).toBe(false)
  })
})
