import type { Runs } from "@salesintel/postgres"
import { describe, expect, it } from "vitest"
import * as Sync from "./Sync.ts"

const outcome = (changes: Partial<Sync.SyncOutcome>): Sync.SyncOutcome => ({
  runId: 7 as Runs.RunId,
  status: "succeeded",
  signal: undefined,
  abandoned: [],
  streams: [
    { stream: "contacts", records: 5_682, rejected: 0, credits: 5_682, recordsLeft: 20_171 },
    { stream: "companies", records: 10, rejected: 0, credits: 10, recordsLeft: 0 },
  ],
  creditsSpent: 5_692,
  creditsUncertain: 0,
  creditBudget: 40_000,
  checkpoints: 12,
  error: undefined,
  ...changes,
})

const contactsLine = (described: string) => described.split("\n").find((line) => line.includes("contacts"))

describe("Sync.describe: why records were left", () => {
  it("names the signal that stopped the run, never the budget", () => {
    for (const signal of ["SIGINT", "SIGTERM"] as const) {
      const described = Sync.describe(outcome({ status: "interrupted", signal }), "embedded PGlite in db")
      expect(contactsLine(described)).toMatch(new RegExp(`\\(stopped by ${signal}: 20,171 left to buy\\)$`))
      expect(described).not.toContain("budget)")
    }
  })

  it("blames the budget only when the run ended on its own", () => {
    expect(contactsLine(Sync.describe(outcome({}), "db"))).toMatch(/\(20,171 left for lack of budget\)$/)
    const failed = Sync.describe(outcome({ status: "failed", error: "the connection was lost" }), "db")
    expect(contactsLine(failed)).toMatch(/\(20,171 left to buy: the run failed\)$/)
    expect(failed).not.toContain("lack of budget")
  })
})

describe("Sync.describe: rejected records", () => {
  it("says how many records of a stream were rejected and where they are kept", () => {
    const streams = [{ stream: "contacts", records: 300, rejected: 50, credits: 350, recordsLeft: 0 }]
    expect(contactsLine(Sync.describe(outcome({ streams }), "db"))).toMatch(
      /300 records +350 credits {2}\(50 rejected: paid for, kept whole in _rejected\)$/,
    )
    expect(contactsLine(Sync.describe(outcome({}), "db"))).not.toContain("rejected")
  })
})
