/**
 * The progress `salesintel sync` writes while it runs, against the sandbox: piped, its first line
 * comes once there is something to say (never a line of zeros); on a terminal and off it, the
 * credits it shows as committed are those of the records committed, so with no free stream the
 * two figures are equal on every line, and what was bought and not yet committed is shown apart,
 * "in flight"; the last line has nothing in flight and the credits the sandbox charged.
 */
import { Sync } from "@salesintel/cli"
import { describe, expect, it } from "vitest"
import { oneBackend, open } from "../packages/postgres/src/testing/Backends.ts"
import { fastPace, sandboxForFile } from "./sandbox.ts"

// The search below finds 287 contacts here: 15 pages of 20, lines enough to check.
const sandbox = sandboxForFile({ seed: 5, contacts: 3_000, companies: 300 })

const config = (key: string) => ({
  api_key: key,
  base_url: sandbox.url,
  credit_budget: 5_000,
  requests_per_minute: fastPace,
  page_size: 20,
  contacts: { searches: [{ name: "vps", filters: { job_levels: ["vp"] } }] },
  companies: { domains: sandbox.dataset.companies.slice(0, 5).map((company) => company.domain) },
})

const figure = (line: string, pattern: RegExp): number | undefined => {
  const found = pattern.exec(line)?.[1]
  return found === undefined ? undefined : Number(found.replaceAll(",", ""))
}

/** Each line the progress shows: a live redraw (after \r and clear line) or a plain line. */
const linesOf = (written: ReadonlyArray<string>) =>
  written
    .join("")
    .replaceAll("\r\x1b[K", "\n")
    .split("\n")
    .filter((line) => line.length > 0)

// The progress is the sync's, whatever holds the records: one backend (Postgres when it answers).
const backend = await oneBackend()

describe("the progress of salesintel sync", () => {
  it.each([false, true])(
    "on a terminal: %s",
    async (isTTY) => {
      const database = await open(backend, "e2e progress")
      try {
        const written: Array<string> = []
        const key = sandbox.key()
        const outcome = await database.run(
          Sync.sync({
            config: config(key),
            schema: database.schema,
            progress: { isTTY, columns: 400, write: (text: string) => written.push(text) > 0 },
          }),
        )
        expect(outcome.error).toBeUndefined()
        const charged = sandbox.charged(key)
        expect(outcome.creditsSpent).toBe(charged)
        const lines = linesOf(written)
        expect(lines.length).toBeGreaterThan(0)
        // The first line already says something: a page read, a credit spent or a record committed.
        expect(lines[0]).not.toMatch(/^0 records · 0 pages · 0 checkpoints · 0 credits committed \(budget/)
        for (const line of lines) {
          const records = figure(line, /^([\d,]+)(?: of ~[\d,]+)? records/)
          const committed = figure(line, / · ([\d,]+) credits committed/)
          // Records and credits are both counted at commit: one credit a record, no free stream here.
          expect({ line, committed }).toEqual({ line, committed: records })
        }
        const last = lines.at(-1) ?? ""
        const total = outcome.streams.reduce((sum, stream) => sum + stream.records, 0)
        expect(figure(last, /^([\d,]+) records/)).toBe(total)
        expect(figure(last, / · ([\d,]+) credits committed/)).toBe(charged)
        expect(last).not.toContain("in flight")
      } finally {
        await database.close()
      }
    },
    120_000,
  )
})
