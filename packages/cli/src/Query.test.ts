import { describe, expect, it } from "vitest"
import * as Query from "./Query.ts"

const run = (credits: number): Query.RunStatus => ({
  run: 12,
  status: "abandoned",
  startedAt: "2026-11-27T08:00:00.000Z",
  finishedAt: "2026-11-27T08:01:00.000Z",
  records: 600,
  credits,
  streams: { contacts: { records: 600, credits: 600 } },
  error: null,
})

describe("Query.statusTable", () => {
  it("shows a killed run's credits beyond its commits on a line of their own", () => {
    const table = Query.statusTable([run(1_000)])
    expect(table).toMatch(/\(not committed\)\s*\|\s*0\s*\|\s*400/)
    expect(Query.statusTable([run(600)])).not.toContain("not committed")
  })
})
