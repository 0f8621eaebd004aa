/**
 * `salesintel plan` against the sandbox: the plan asks free requests only (the sandbox charges
 * nothing and sees no credited request), and its exact figure is what the next `salesintel sync`
 * spends, to the credit, as the sandbox counts it: on a first run under a budget that cuts it
 * short, after that partial run, and when nothing is new. `--quick` is never below the exact
 * figure on an empty target, and close to it after (integration-tests/quick-plan.test.ts). The command itself prints one JSON object and creates no PGlite directory. The plan reads
 * the state from the target as it is given, on each backend. Also the read's ESTIMATE traces:
 * valid protocol messages whose figures match what was read.
 */
import { existsSync, mkdtempSync, rmSync, writeFileSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { Catalog, type Message } from "@salesintel/airbyte"
import { Plan, Sync } from "@salesintel/cli"
import { Sql } from "@salesintel/postgres"
import { Commands } from "@salesintel/source"
import * as Chunk from "effect/Chunk"
import * as Effect from "effect/Effect"
import * as Option from "effect/Option"
import * as Stream from "effect/Stream"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { messageProblems } from "../packages/airbyte/src/testing/AirbyteSchema.ts"
import { backends, oneBackend, open } from "../packages/postgres/src/testing/Backends.ts"
import { runInProcess } from "./bins.ts"
import { fastPace, sandboxForFile } from "./sandbox.ts"

// 88,000 contacts: IT (10,540) is just past the 10,000-deep paging limit, so it needs partitions.
const sandbox = sandboxForFile({ seed: 42, contacts: 88_000, companies: 8_800 })

const silent = { isTTY: false, write: () => true }

// "it-vps" lies inside "it" (bought once, by the first); "it" needs partitions (over 10,000).
const itVps = { name: "it-vps", filters: { job_departments: ["it_is"], job_levels: ["vp"] } }
const it_ = { name: "it", filters: { job_departments: ["it_is"] } }
// Each plan and each sync asks with a key of its own (planOf, syncOf): its counters are its own.
const config = (budget: number, extra: Record<string, unknown> = {}) => ({
  api_key: "unset",
  base_url: sandbox.url,
  credit_budget: budget,
  // The sandbox sets no request limit: the test need not wait for the real one.
  requests_per_minute: fastPace,
  contacts: {
    searches: [itVps, it_],
    // Two contacts outside the searches' departments, one inside: bought once.
    emails: emails(),
    refresh_after_days: 30,
  },
  companies: {
    domains: sandbox.dataset.companies.slice(0, 10).map((company) => company.domain),
    refresh_after_days: 30,
  },
  taxonomy: { products: ["a"] },
  ...extra,
})
const emails = () => {
  const picked: Array<string> = []
  for (let index = 0; picked.length < 3 && index < 5_000; index++) {
    const contact = sandbox.dataset.contact(index)
    const inIt = contact.job_department === "it_is"
    if ((picked.length < 2 && !inIt) || (picked.length === 2 && inIt)) picked.push(String(contact.email))
  }
  return picked
}

type Json = Record<string, unknown>

// What the plan counts and the sync spends is the source's doing, whatever holds the state: one
// backend (the state as each backend gives it is the last describe's, and one-truth.test.ts's).
describe.each([await oneBackend()])("salesintel plan against the sandbox, state on $name", (backend) => {
  let database: Awaited<ReturnType<typeof open>>
  beforeAll(async () => {
    database = await open(backend, "e2e plan")
  })
  afterAll(async () => {
    await database?.close()
  })

  const planOf = async (json: Json, mode: "exact" | "quick" = "exact", now?: number) => {
    const state = await database.run(Plan.savedStateIn(database.schema))
    const key = sandbox.key()
    const plan = await Effect.runPromise(
      Plan.makePlan({
        config: { ...json, api_key: key },
        state,
        mode,
        ...(now === undefined ? {} : { now }),
      }),
    )
    // Free requests only: nothing charged, and no credited endpoint was even asked.
    expect(sandbox.charged(key)).toBe(0)
    const endpoints = Object.keys(sandbox.requests(key))
    expect(endpoints).toEqual(expect.arrayContaining(["people.preview"]))
    for (const endpoint of endpoints)
      expect(["people.preview", "taxonomy.products", "taxonomy.categories"]).toContain(endpoint)
    return plan
  }
  const syncOf = async (json: Json) => {
    const key = sandbox.key()
    const outcome = await database.run(
      Sync.sync({ config: { ...json, api_key: key }, schema: database.schema, progress: silent }),
    )
    expect(outcome.error).toBeUndefined()
    expect(outcome.creditsSpent).toBe(sandbox.charged(key))
    return outcome
  }

  it("a first run cut short by the budget: the plan says what it spends, to the credit", async () => {
    const budget = 5_000
    const plan = await planOf(config(budget))
    const quick = await planOf(config(budget), "quick")
    const [vps, it] = plan.contacts?.searches ?? []
    // What the free preview says, as the plan reports it.
    expect(vps?.new).toBe(vps?.matches)
    expect(it?.partitions).toBeGreaterThan(1)
    expect(it?.earlier).toBe(vps?.matches)
    expect(it?.new).toBe((it?.matches ?? 0) - (vps?.matches ?? 0))
    expect(plan.contacts?.inState).toBe(0)
    expect(plan.creditsNeeded).toBeGreaterThan(budget)
    expect(plan.credits).toBe(budget)
    expect(quick.credits).toBeGreaterThanOrEqual(plan.credits)
    expect(plan.requests.total).toBe(plan.requests.free + plan.requests.credited)
    expect(plan.seconds).toBeCloseTo((plan.requests.total * 60) / fastPace)

    const outcome = await syncOf(config(budget))
    expect(outcome.creditsSpent).toBe(plan.credits)
    expect(outcome.streams.find((s) => s.stream === "contacts")?.credits).toBe(
      (vps?.credits ?? 0) + (it?.credits ?? 0) + (plan.contacts?.emails?.credits ?? 0),
    )
  }, 300_000)

  it("after the partial run: the plan counts what is bought, and the sync spends its figure", async () => {
    const plan = await planOf(config(100_000))
    const quick = await planOf(config(100_000), "quick")
    expect(plan.contacts?.inState).toBe(5_000)
    const [vps, it] = plan.contacts?.searches ?? []
    expect(vps?.bought).toBe(vps?.matches)
    expect((it?.bought ?? 0) + (it?.earlier ?? 0) + (it?.new ?? 0)).toBe(it?.matches)
    expect(plan.companies?.due).toBe(10)
    expect(plan.credits).toBe(plan.creditsNeeded)
    expect(plan.credits).toBeGreaterThan(0)
    // Quick estimates from the partial run's record of each search: close, and its bounds hold.
    expect(Math.abs(quick.credits - plan.credits)).toBeLessThanOrEqual(Math.max(100, plan.credits * 0.1))
    expect(quick.estimate?.creditsAtMost ?? 0).toBeGreaterThanOrEqual(plan.credits)
    expect(quick.estimate?.creditsAtLeast ?? Number.NaN).toBeLessThanOrEqual(plan.credits)

    const outcome = await syncOf(config(100_000))
    expect(outcome.creditsSpent).toBe(plan.credits)
    expect(outcome.streams.find((s) => s.stream === "companies")?.credits).toBe(plan.companies?.credits)
  }, 300_000)

  it("with nothing new, the plan says 0 and the sync spends nothing; stale contacts count later", async () => {
    const plan = await planOf(config(100_000))
    expect(plan.credits).toBe(0)
    expect(plan.creditsNeeded).toBe(0)
    expect(plan.contacts?.emails?.lookedUp).toBe(0)
    expect(plan.companies?.due).toBe(0)
    const quick = await planOf(config(100_000), "quick")
    expect(quick.credits).toBeGreaterThanOrEqual(plan.credits)
    const outcome = await syncOf(config(100_000))
    expect(outcome.creditsSpent).toBe(0)

    // 31 days on, with refresh_after_days 30, everything bought is due again.
    const later = await planOf(config(100_000), "exact", Date.now() + 31 * 86_400_000)
    const inState = later.contacts?.inState ?? 0
    expect(later.contacts?.staleInState).toBe(inState)
    const searches = later.contacts?.searches ?? []
    expect(searches.reduce((sum, s) => sum + (s.stale ?? 0), 0)).toBe(
      searches.reduce((sum, s) => sum + s.matches, 0) - (searches[1]?.earlier ?? 0),
    )
    expect(later.companies?.due).toBe(10)
    expect(later.credits).toBe(later.creditsNeeded)
  }, 300_000)
})

describe("the salesintel plan command", () => {
  it("prints one JSON object whose credits are the plan's, and creates no PGlite directory", async () => {
    const dir = mkdtempSync(join(tmpdir(), "salesintel-plan-"))
    try {
      const file = join(dir, "config.json")
      // One search: what the command prints is what the plan says, whatever it holds (the
      // partitioned search's figures are the describe above's).
      const json = { ...config(100_000), contacts: { searches: [itVps] }, api_key: sandbox.key() }
      writeFileSync(file, JSON.stringify(json))
      const pgliteDir = join(dir, "never-created")
      // In process (arguments in; output and exit code out): what it prints is the command's logic.
      const env = { DATABASE_URL: "" }
      const printedJson = await runInProcess(
        "salesintel",
        ["plan", "--config", file, "--pglite-dir", pgliteDir, "--json"],
        { env },
      )
      expect(printedJson.code).toBe(0)
      const printed = JSON.parse(printedJson.stdout) as {
        credits: number
        credits_needed: number
        mode: string
      }
      const expected = await Effect.runPromise(Plan.makePlan({ config: json, state: [], mode: "exact" }))
      expect(printed.mode).toBe("exact")
      expect(printed.credits).toBe(expected.credits)
      expect(printed.credits_needed).toBe(expected.creditsNeeded)
      expect(existsSync(pgliteDir)).toBe(false)

      const human = await runInProcess(
        "salesintel",
        ["plan", "--config", file, "--pglite-dir", pgliteDir, "--quick"],
        { env },
      )
      expect(human.code).toBe(0)
      expect(human.stdout).toContain("search it-vps")
      expect(human.stdout).toContain("credits:")
      expect(existsSync(pgliteDir)).toBe(false)
    } finally {
      rmSync(dir, { recursive: true, force: true })
    }
  }, 300_000)
})

// How the plan reads the state is the loader's SQL: on every backend, over a state a sync wrote.
describe.each(await backends())("salesintel plan's state, on $name", (backend) => {
  let database: Awaited<ReturnType<typeof open>>
  beforeAll(async () => {
    database = await open(backend, "e2e plan state")
    const outcome = await database.run(
      Sync.sync({
        config: { ...config(300), api_key: sandbox.key() },
        schema: database.schema,
        progress: silent,
      }),
    )
    expect(outcome.error).toBeUndefined()
  })
  afterAll(async () => {
    await database?.close()
  })

  it("the command reads the state from the target as it is given, and writes nothing there", async () => {
    const expected = await database.run(Plan.savedStateIn(database.schema))
    expect(expected.length).toBeGreaterThan(0)
    const runs = async () =>
      (
        await database.query(`SELECT count(*)::int AS n FROM ${Sql.qualified(database.schema, "_sync_runs")}`)
      )[0]?.n
    const runsBefore = await runs()
    // PGlite's files are one process's at a time: the test's own connection steps aside.
    if (database.pgliteDir !== undefined) await database.suspend()
    const read = await Effect.runPromise(
      Plan.savedState({
        databaseUrl: Option.fromNullable(database.url),
        pgliteDir: database.pgliteDir ?? join(tmpdir(), "salesintel-plan-unused"),
        schema: database.schema,
      }),
    )
    if (database.pgliteDir !== undefined) await database.resume()
    expect(read).toEqual(expected)
    expect(await runs()).toBe(runsBefore)
  }, 120_000)
})

const withoutTaxonomy = ({ taxonomy: _, ...rest }: ReturnType<typeof config>) => rest

describe("ESTIMATE traces of a read", () => {
  const estimatesOf = async (syncMode: Catalog.SyncMode) => {
    const messages = await Effect.runPromise(
      Stream.runCollect(
        Commands.read({
          config: {
            ...withoutTaxonomy(config(100_000)),
            api_key: sandbox.key(),
            contacts: { searches: [itVps] },
          },
          catalog: Catalog.configuredAll(syncMode, ["contacts", "companies"]),
          state: [],
        }),
      ).pipe(Effect.map(Chunk.toReadonlyArray)),
    )
    const estimates = messages.filter(
      (m): m is Message.EstimateMessage => m.type === "TRACE" && m.trace.type === "ESTIMATE",
    )
    for (const estimate of estimates) expect(messageProblems(estimate)).toEqual([])
    const records = (stream: string) =>
      messages.filter((m): m is Message.RecordMessage => m.type === "RECORD" && m.record.stream === stream)
    const last = (stream: string) => estimates.filter((e) => e.trace.estimate.name === stream).at(-1)
    return { records, last }
  }

  it.each(["incremental", "full_refresh"] as const)(
    "%s: one per stream, rows as read, bytes near what was emitted",
    async (syncMode) => {
      const { records, last } = await estimatesOf(syncMode)
      const contacts = records("contacts")
      expect(contacts.length).toBeGreaterThan(500)
      expect(last("contacts")?.trace.estimate.row_estimate).toBe(contacts.length)
      expect(last("companies")?.trace.estimate.row_estimate).toBe(records("companies").length)
      const bytes = contacts.reduce((sum, m) => sum + Buffer.byteLength(JSON.stringify(m.record.data)), 0)
      const estimated = last("contacts")?.trace.estimate.byte_estimate ?? 0
      expect(Math.abs(estimated - bytes) / bytes).toBeLessThan(0.2)
    },
    120_000,
  )
})

// The requests are the source's: one backend holds the state.
describe.each([await oneBackend()])("the plan's requests against the sync's, on $name", (backend) => {
  let database: Awaited<ReturnType<typeof open>>
  beforeAll(async () => {
    database = await open(backend, "e2e plan requests")
  })
  afterAll(async () => {
    await database?.close()
  })
  const contactsOnly = (searches: ReadonlyArray<unknown>) => ({
    base_url: sandbox.url,
    credit_budget: 100_000,
    requests_per_minute: fastPace,
    contacts: { searches, refresh_after_days: 30 },
  })
  const planThenSync = async (json: Json) => {
    const state = await database.run(Plan.savedStateIn(database.schema))
    const plan = await Effect.runPromise(
      Plan.makePlan({ config: { ...json, api_key: sandbox.key() }, state, mode: "exact" }),
    )
    // Every request the sandbox answered the sync, by endpoint and status, under its own key.
    const key = sandbox.key()
    const outcome = await database.run(
      Sync.sync({ config: { ...json, api_key: key }, schema: database.schema, progress: silent }),
    )
    expect(outcome.error).toBeUndefined()
    return { plan, outcome, requests: sandbox.requestCount(key) }
  }

  it("a first run read directly, then a run through the free listing: requests as planned", async () => {
    // Nothing bought: the partitioned search is read straight through the credited search.
    const first = await planThenSync(contactsOnly([it_]))
    expect(first.outcome.creditsSpent).toBe(first.plan.credits)
    expect(first.plan.requests.credited).toBeGreaterThan(0)
    expect(first.requests).toBe(first.plan.requests.total)
    // Now bought and fresh: both searches walk the free listing and buy nothing.
    const second = await planThenSync(contactsOnly([it_, itVps]))
    expect(second.plan.credits).toBe(0)
    expect(second.outcome.creditsSpent).toBe(0)
    expect(second.plan.requests.credited).toBe(0)
    expect(second.requests).toBe(second.plan.requests.total)
  }, 300_000)
})
