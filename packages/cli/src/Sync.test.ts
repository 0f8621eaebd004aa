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
  deleted: {},
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

describe("Sync.describe: how the run ended, what it left and deleted", () => {
  it("a budget stop is not a success, and its left figures are the plan's", () => {
    const described = Sync.describe(
      outcome({
        status: "stopped_at_budget",
        // Stopped among the contacts: the companies (of the contacts) never started.
        streams: [{ stream: "contacts", records: 5_682, rejected: 0, credits: 5_682, recordsLeft: 171 }],
        left: { credits: 20_900, byStream: { contacts: 20_500, companies: 400 } },
      }),
      "db",
    )
    expect(described.split("\n")[0]).toBe("sync stopped at the budget (run 7) into db")
    expect(contactsLine(described)).toMatch(/\(20,500 left for lack of budget\)$/)
    // A stream the run never reached has its line too.
    expect(described).toMatch(/\n {2}companies +0 records +0 credits {2}\(400 left for lack of budget\)\n/)
    expect(described).toContain(
      "\n  credits left: 20,900 (what salesintel plan counts for everything still due)\n",
    )
  })

  it("says when the credits left could not be counted, and what a full refresh deleted", () => {
    const described = Sync.describe(
      outcome({
        status: "interrupted",
        signal: "SIGINT",
        left: { unknown: "connect ECONNREFUSED" },
        deleted: { contacts: 1_204, companies: 0, taxonomy_products: 0, taxonomy_categories: 3 },
      }),
      "db",
    )
    expect(described).toContain(
      "credits left: not counted (the plan of the next sync could not be made: connect ECONNREFUSED)",
    )
    expect(described).toContain(
      "\n  full refresh of contacts: deleted 1,204 rows of contacts bought before and not bought again\n",
    )
    // A credited stream says so with none deleted; the free taxonomy, read in full every run, only
    // when it deleted some.
    expect(described).toContain("full refresh of companies: deleted 0 rows")
    expect(described).toContain("full refresh of taxonomy_categories: deleted 3 rows")
    expect(described).not.toContain("taxonomy_products")
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
