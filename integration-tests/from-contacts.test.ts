/**
 * `"companies": {"from_contacts": true}` end to end, on each backend: a `salesintel sync` of two
 * searches appends the technographics of every company its contacts work at (by company domain,
 * once each), after the contacts and within the budget. `salesintel plan` before each run says
 * what the sandbox then charges, to the credit; a rerun spends nothing; a budget that stops in the
 * middle leaves the rest due, and the next run buys exactly it (the held contacts' domains come
 * from the target). The contacts-with-technographics view and the report cover those companies.
 */
import { mkdtempSync, rmSync, writeFileSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { Plan, ReportData, Sync } from "@salesintel/cli"
import { Sql } from "@salesintel/postgres"
import { HeldKeys } from "@salesintel/source"
import * as Effect from "effect/Effect"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { backends, open } from "../packages/postgres/src/testing/Backends.ts"
import { runTag } from "../packages/postgres/src/testing/RunTag.ts"
import { runInProcess } from "./bins.ts"
import { fastPace, sandboxForFile } from "./sandbox.ts"
import { searchA, searchB } from "./truth.ts"

const sandbox = sandboxForFile({ seed: 11, contacts: 20_000, companies: 2_000 })

const silent = { isTTY: false, write: () => true }

// Each plan and each sync asks with a key of its own (planOf, syncOf): its counters are its own.
const config = (budget: number) => ({
  api_key: "unset",
  base_url: sandbox.url,
  credit_budget: budget,
  requests_per_minute: fastPace,
  contacts: { searches: [searchA, searchB] },
  companies: { from_contacts: true },
})

describe.each(await backends())("companies from contacts on $name", (backend) => {
  let database: Awaited<ReturnType<typeof open>>
  beforeAll(async () => {
    database = await open(backend, "e2e from contacts")
  })
  afterAll(async () => {
    await database?.close()
  })
  const table = (name: string) => Sql.qualified(database.schema, name)
  const count = async (sql: string) => Number((await database.query(sql))[0]?.n)

  /** The plan of the next sync of `json`, from the target's state and held contacts. */
  const planOf = async (json: ReturnType<typeof config>) => {
    const { state, held } = await database.run(Plan.savedIn(database.schema, Plan.heldKeysWanted(json)))
    const key = sandbox.key()
    const plan = await Effect.runPromise(
      Effect.provideService(
        Plan.makePlan({ config: { ...json, api_key: key }, state, mode: "exact" }),
        HeldKeys.HeldKeys,
        held,
      ),
    )
    expect(sandbox.charged(key)).toBe(0)
    return plan
  }
  const syncOf = async (json: ReturnType<typeof config>) => {
    const key = sandbox.key()
    const outcome = await database.run(
      Sync.sync({ config: { ...json, api_key: key }, schema: database.schema, progress: silent }),
    )
    expect(outcome.error).toBeUndefined()
    expect(outcome.creditsSpent).toBe(sandbox.charged(key))
    return outcome
  }
  /** What `salesintel plan` prints for `json` on this target, run in process. */
  const planPrinted = async (json: ReturnType<typeof config>) => {
    const directory = mkdtempSync(join(tmpdir(), `salesintel-from-contacts-${runTag()}-`))
    const target =
      database.url !== undefined
        ? ["--database-url", database.url]
        : ["--pglite-dir", String(database.pgliteDir)]
    // PGlite's files are one user's at a time: the test's connection steps aside.
    if (database.url === undefined) await database.suspend()
    try {
      writeFileSync(join(directory, "config.json"), JSON.stringify({ ...json, api_key: sandbox.key() }))
      const printed = await runInProcess(
        "salesintel",
        ["plan", "--config", "config.json", ...target, "--schema", database.schema],
        { cwd: directory, env: {} },
      )
      expect(printed.stderr).toBe("")
      expect(printed.code).toBe(0)
      return printed.stdout
    } finally {
      if (database.url === undefined) await database.resume()
      rmSync(directory, { recursive: true, force: true })
    }
  }
  /** `salesintel sync` then `salesintel status --json` of `json` on this target, in process. */
  const syncPrinted = async (json: ReturnType<typeof config>) => {
    const directory = mkdtempSync(join(tmpdir(), `salesintel-from-contacts-${runTag()}-`))
    const target = [
      ...(database.url !== undefined
        ? ["--database-url", database.url]
        : ["--pglite-dir", String(database.pgliteDir)]),
      "--schema",
      database.schema,
    ]
    if (database.url === undefined) await database.suspend()
    try {
      writeFileSync(join(directory, "config.json"), JSON.stringify({ ...json, api_key: sandbox.key() }))
      const synced = await runInProcess("salesintel", ["sync", "--config", "config.json", ...target], {
        cwd: directory,
        env: {},
      })
      const status = await runInProcess("salesintel", ["status", "--json", "--limit", "1", ...target], {
        cwd: directory,
        env: {},
      })
      const [latest] = JSON.parse(status.stdout) as ReadonlyArray<{ readonly status: string }>
      return { ...synced, status: latest?.status }
    } finally {
      if (database.url === undefined) await database.resume()
      rmSync(directory, { recursive: true, force: true })
    }
  }
  /** The contacts' company domains with no companies row. */
  const uncovered = () =>
    database.query(
      `SELECT d.domain FROM (SELECT DISTINCT lower(btrim(company_domains[1])) AS domain FROM ${table("contacts")}
         WHERE company_domains[1] IS NOT NULL) d
       WHERE NOT EXISTS (SELECT 1 FROM ${table("companies")} c, unnest(c.company_domains) AS cd(domain)
                         WHERE lower(cd.domain) = d.domain)`,
    )

  it("buys every contact's company once, as planned; a budget that stops in the middle leaves the rest for the next run", {
    timeout: 60_000,
  }, async () => {
    // The contacts in full and half of their companies.
    const contacts = (await planOf(config(1_000_000))).works
      .filter((work) => work.stream === "contacts")
      .reduce((sum, work) => sum + work.credits, 0)
    const firstPlan = await planOf(config(1_000_000))
    const companies = firstPlan.works.find((work) => work.work === "companies from contacts")
    const domains = companies?.counts.listed ?? 0
    expect(domains).toBeGreaterThan(20)
    expect(companies?.counts.new).toBe(domains)
    const budget = contacts + Math.floor(domains / 2)
    const cutPlan = await planOf(config(budget))
    const cut = await syncOf(config(budget))
    expect(cut.creditsSpent).toBe(cutPlan.credits)
    expect(cut.creditsSpent).toBe(budget)
    expect(await count(`SELECT count(*) AS n FROM ${table("contacts")}`)).toBe(contacts)
    expect(await count(`SELECT count(*) AS n FROM ${table("companies")}`)).toBe(Math.floor(domains / 2))

    // `salesintel plan` on the target says the same (the held contacts' domains read from it).
    const left = domains - Math.floor(domains / 2)
    expect(await planPrinted(config(1_000_000))).toContain(
      `companies from contacts: ${domains} listed, ${Math.floor(domains / 2)} held, ${left} due (${left} new, 0 due again)`,
    )

    // The rest is due; the next run buys exactly it, as planned.
    const restPlan = await planOf(config(1_000_000))
    const rest = restPlan.works.find((work) => work.work === "companies from contacts")
    expect(rest?.due).toBe(domains - Math.floor(domains / 2))
    expect(restPlan.credits).toBe(rest?.due)
    const second = await syncOf(config(1_000_000))
    expect(second.creditsSpent).toBe(restPlan.credits)
    // Every contact's company has its row (the sandbox knows every domain its contacts carry).
    expect(await uncovered()).toEqual([])
    expect(await count(`SELECT count(*) AS n FROM ${table("companies")}`)).toBe(domains)

    // A rerun spends nothing, as planned.
    const againPlan = await planOf(config(1_000_000))
    expect(againPlan.credits).toBe(0)
    expect((await syncOf(config(1_000_000))).creditsSpent).toBe(0)

    // The contacts-with-technographics view covers every contact whose company uses a product.
    const usingSome = await count(
      `SELECT count(DISTINCT c.match_id) AS n FROM ${table("contacts")} c
       JOIN ${table("company_technologies")} t ON t.company_id = c.company_id AND t.in_use IS NOT FALSE`,
    )
    expect(usingSome).toBeGreaterThan(contacts / 2)
    expect(
      await count(
        `SELECT count(DISTINCT match_id) AS n FROM ${table("contacts_at_companies_using_product")}`,
      ),
    ).toBe(usingSome)
    // And the report counts them all.
    const report = await database.run(ReportData.read(database.schema, "test"))
    expect(report.companies).toBe(domains)
    expect(report.contacts).toBe(contacts)
  })

  describe("on a target of its own", () => {
    // Nothing bought yet: the case above bought everything its target's config has.
    beforeAll(async () => {
      await database.close()
      database = await open(backend, "e2e from contacts budget")
    })
    it("a budget stop says so (exit 0, status stopped_at_budget) with the credits left that the plan counts", {
      timeout: 60_000,
    }, async () => {
      const before = await planOf(config(1_000_000))
      expect(before.creditsNeeded).toBeGreaterThan(600)
      // Stopped among the contacts: their companies are not even listed yet.
      const stopped = await syncPrinted(config(200))
      expect(stopped.code, stopped.stderr).toBe(0)
      expect(stopped.stdout).toMatch(/^sync stopped at the budget \(run \d+\)/)
      expect(stopped.stdout).not.toContain("sync succeeded")
      expect(stopped.status).toBe("stopped_at_budget")
      const after = await planOf(config(200))
      expect(after.creditsNeeded).toBe(before.creditsNeeded - 200)
      expect(stopped.stdout).toContain(`credits left: ${after.creditsNeeded.toLocaleString("en-US")} `)
      // Each stream's line says what the plan counts for it.
      const companies = after.works
        .filter((work) => work.stream === "companies")
        .reduce((sum, work) => sum + work.due, 0)
      expect(companies).toBeGreaterThan(0)
      expect(stopped.stdout).toMatch(
        new RegExp(`\\n  companies .*\\(${companies.toLocaleString("en-US")} left for lack of budget\\)`),
      )
    })
  })
})
