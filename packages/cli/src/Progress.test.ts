import { describe, expect, it } from "vitest"
import { type Counts, expectedRecords, millisLeft, Reporter, render } from "./Progress.ts"

const counts = (records: number, elapsedMillis: number, estimates?: Record<string, number>): Counts => ({
  records,
  recordsByStream: new Map([
    ["contacts", records - 5],
    ["companies", 5],
  ]),
  estimatedByStream: estimates === undefined ? undefined : new Map(Object.entries(estimates)),
  pages: 31,
  checkpoints: 3,
  creditsSpent: records,
  creditsCommitted: records,
  creditBudget: 5_000,
  elapsedMillis,
})

/**
 * What a terminal shows after the writes: \r moves the cursor to the row's start, ESC[K clears
 * from the cursor on, \n opens the next row, and a character past the last column wraps.
 */
const screen = (written: ReadonlyArray<string>, columns: number): Array<string> => {
  const rows: Array<string> = [""]
  let row = 0
  let column = 0
  const text = written.join("")
  for (let at = 0; at < text.length; at++) {
    const char = text.charAt(at)
    if (char === "\r") column = 0
    else if (char === "\n") {
      row++
      column = 0
      rows[row] ??= ""
    } else if (text.startsWith("\x1b[K", at)) {
      rows[row] = (rows[row] ?? "").slice(0, column)
      at += 2
    } else {
      if (column === columns) {
        row++
        column = 0
        rows[row] ??= ""
      }
      const current = (rows[row] ?? "").padEnd(column)
      rows[row] = current.slice(0, column) + char + current.slice(column + 1)
      column++
    }
  }
  return rows
}

describe("Progress", () => {
  it("renders records per stream, pages, checkpoints, credits of the budget, rate and time", () => {
    expect(render(counts(1_505, 2_000))).toBe(
      "1,505 records (contacts 1,500, companies 5) · 31 pages · 3 checkpoints · 1,505 credits committed (budget 5,000) · 753 records/s · 0:02",
    )
  })

  it("shows done of estimated, per stream too, and the time left at the rate so far", () => {
    // 1,500 of 6,000 contacts in 2 s: 4,500 more at 750 records/s is 6 s.
    const line = render(counts(1_505, 2_000, { contacts: 6_000 }))
    expect(line).toBe(
      "1,505 of ~6,005 records (contacts 1,500/6,000, companies 5) · 31 pages · 3 checkpoints · 1,505 credits committed (budget 5,000) · 753 records/s · 0:02 · ~0:05 left",
    )
    expect(millisLeft(counts(1_505, 2_000, { contacts: 6_000 }))).toBeCloseTo((4_500 * 2_000) / 1_505)
    // An estimate that fell short counts what was read instead; no estimate, no time left.
    expect(expectedRecords(counts(1_505, 2_000, { contacts: 100 }))).toBe(1_505)
    expect(millisLeft(counts(1_505, 2_000))).toBeUndefined()
    expect(millisLeft(counts(0, 2_000, { contacts: 10 }))).toBeUndefined()
  })

  it("fits the width given, leaving out the least useful parts first, and cuts only as a last resort", () => {
    const full = counts(1_505, 2_000, { contacts: 6_000 })
    for (const width of [200, 120, 80, 60, 40, 20, 12]) {
      const line = render(full, width)
      expect(line.length).toBeLessThanOrEqual(width)
    }
    // The rate and the per-stream, page and checkpoint counts go first; then the elapsed time.
    expect(render(full, 70)).toBe("1,505 of ~6,005 records · 1,505 credits committed · 0:02 · ~0:05 left")
    expect(render(full, 60)).toBe("1,505 of ~6,005 records · ~0:05 left")
    expect(render(full, 30)).toBe("1,505 of ~6,005 records")
    expect(render(full, 12)).toBe("1,505 of ~6…")
  })

  it("redraws one live line on a terminal, at most every 100 ms, never wrapping", () => {
    const written: Array<string> = []
    const reporter = new Reporter({ isTTY: true, columns: 50, write: (text) => written.push(text) })
    reporter.update(counts(10, 10, { contacts: 1_000_000 }), 0)
    reporter.update(counts(20, 50, { contacts: 1_000_000 }), 50)
    reporter.update(counts(30, 150, { contacts: 1_000_000 }), 150)
    reporter.finish(counts(40, 200))
    expect(written).toHaveLength(3)
    expect(written.every((line) => line.startsWith("\r\x1b[K"))).toBe(true)
    expect(written.every((line) => line.length - "\r\x1b[K".length <= 50)).toBe(true)
    expect(written.at(-1)?.endsWith("\n")).toBe(true)
    // On the screen: the final line alone, on one row, then the cursor on an empty next row.
    const rows = screen(written, 50)
    expect(rows).toHaveLength(2)
    expect(rows[0]).toMatch(/^40 records/)
    expect(rows[1]).toBe("")
    // The emulator does see a wrap: a line one column too wide takes two rows.
    expect(screen(["x".repeat(51)], 50)).toHaveLength(2)
    // A terminal that does not say its width is taken as 80 columns.
    const unsized: Array<string> = []
    new Reporter({ isTTY: true, write: (text) => unsized.push(text) }).update(counts(10, 10), 0)
    expect((unsized[0] ?? "").length - "\r\x1b[K".length).toBeLessThan(80)
  })

  it("prints whole plain lines every few seconds elsewhere, never a carriage return", () => {
    const written: Array<string> = []
    const reporter = new Reporter({ isTTY: false, columns: 20, write: (text) => written.push(text) }, 5_000)
    for (let now = 0; now <= 12_000; now += 1_000)
      reporter.update(counts(now, now, { contacts: 50_000 }), now)
    reporter.finish(counts(13_000, 13_000))
    expect(written).toHaveLength(4)
    expect(written.some((line) => line.includes("\r"))).toBe(false)
    expect(written.every((line) => line.endsWith("\n"))).toBe(true)
    expect(written[1]).toContain("left")
  })

  it("prints its first line only once there is something to say: no line of zeros when piped", () => {
    // The read's first items (an estimate, the free counts) come before any page or credit.
    const nothing: Counts = {
      records: 0,
      recordsByStream: new Map(),
      estimatedByStream: new Map([["contacts", 6_000]]),
      pages: 0,
      checkpoints: 0,
      creditsSpent: 0,
      creditsCommitted: 0,
      creditBudget: 5_000,
      elapsedMillis: 0,
    }
    for (const isTTY of [false, true]) {
      const written: Array<string> = []
      const reporter = new Reporter({ isTTY, columns: 200, write: (text) => written.push(text) }, 5_000)
      reporter.update(nothing, 0)
      reporter.update({ ...nothing, elapsedMillis: 6_000 }, 6_000)
      expect(written).toEqual([])
      // The first page bought: said at once, not 5 s after the silent updates.
      reporter.update({ ...nothing, pages: 1, creditsSpent: 50, elapsedMillis: 6_500 }, 6_500)
      expect(written).toHaveLength(1)
      expect(written[0]).toContain("0 of ~6,000 records")
      expect(written[0]).toContain("0 credits committed, 50 in flight (budget 5,000)")
    }
    // The final line is always printed, even of a run that did nothing.
    const finished: Array<string> = []
    new Reporter({ isTTY: false, write: (text) => finished.push(text) }).finish(nothing)
    expect(finished).toEqual([
      "0 records · 0 pages · 0 checkpoints · 0 credits committed (budget 5,000) · 0 records/s · 0:00\n",
    ])
  })

  it("shows the credits bought and not yet committed as in flight, so records and credits agree at commit", () => {
    // 4,982 credits spent, 2,231 records committed with their state: 2,751 on pages still being read.
    const reading: Counts = { ...counts(2_231, 2_000), creditsSpent: 4_982, creditsCommitted: 2_231 }
    expect(render(reading)).toContain("2,231 records")
    expect(render(reading)).toContain(" · 2,231 credits committed, 2,751 in flight (budget 5,000) · ")
    // On a terminal of 80 columns, the in-flight figure stays with the committed one.
    expect(render(reading, 79)).toBe("2,231 records · 2,231 credits committed, 2,751 in flight · 0:02")
    // A request that timed out may have been charged: never records, so never in flight either.
    expect(render({ ...reading, creditsUncertain: 50 })).toContain(
      " · 2,231 credits committed, 2,701 in flight, 50 possibly charged without delivery (budget 5,000) · ",
    )
    // Once they commit, the two agree and nothing is in flight.
    const committed: Counts = { ...counts(4_982, 4_000), creditsSpent: 4_982, creditsCommitted: 4_982 }
    expect(render(committed)).toContain(" · 4,982 credits committed (budget 5,000) · ")
    expect(render(committed)).not.toContain("in flight")
  })
})
