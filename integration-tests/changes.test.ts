/**
 * What changed, end to end on a real Postgres and on PGlite: a sync at the sandbox's generation 0,
 * the generation advanced, a refresh (incremental, everything due), and the change tables equal
 * the sandbox's own list of changes for the records the refresh bought again: nothing missing,
 * nothing invented. A rerun of the same data adds nothing; a full refresh after another
 * generation adds exactly that generation's changes. The scenario runs in steps, each its own test
 * (vitest runs them in order), on one schema per backend; the sizes are what keeps every kind of
 * change in the refresh (900 VPs and 200 companies: 36 products adopted, 17 dropped, ~20 job moves).
 */
import { Plan, ReportData, Sync } from "@salesintel/cli"
import { Sql } from "@salesintel/postgres"
import * as Effect from "effect/Effect"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { backends, open } from "../packages/postgres/src/testing/Backends.ts"
import { fastPace, sandboxForFile } from "./sandbox.ts"

const sandbox = sandboxForFile({ seed: 11, contacts: 10_000, companies: 1_000 })
/** The companies the config asks for by domain. */
const domainCount = 200

const silent = { isTTY: false, write: () => true }
const day = 86_400_000

const setGeneration = sandbox.setGeneration

const key = (row: Record<string, unknown>): string => JSON.stringify(row)
const sortedKeys = (rows: ReadonlyArray<Record<string, unknown>>): ReadonlyArray<string> =>
  rows.map(key).sort()

// Every backend: the change tables are written by the loader's SQL.
describe.each(await backends())("change tables on $name", (backend) => {
  let database: Awaited<ReturnType<typeof open>>
  let key = ""
  const table = (name: string) => Sql.qualified(database.schema, name)
  const config = () => ({
    api_key: key,
    base_url: sandbox.url,
    credit_budget: 100_000,
    requests_per_minute: fastPace,
    contacts: {
      refresh_after_days: 1,
      searches: [{ name: "vps", filters: { job_levels: ["vp"] } }],
    },
    companies: {
      refresh_after_days: 1,
      domains: sandbox.dataset.companies.slice(0, domainCount).map((company) => company.domain),
    },
  })
  const sync = async (startedAt: number, fullRefresh?: ReadonlyArray<string>) => {
    const outcome = await database.run(
      Sync.sync({ config: config(), schema: database.schema, progress: silent, startedAt, fullRefresh }),
    )
    expect(outcome.status).toBe("succeeded")
    return outcome
  }
  const ids = async (sql: string, params: ReadonlyArray<unknown> = []) =>
    new Set((await database.query(sql, params)).map((row) => String(row.id)))
  /** Contacts and companies as the last sync with this `fetched_at` bought them. */
  const bought = async (at: number) => ({
    contacts: await ids(`SELECT match_id AS id FROM ${table("contacts")} WHERE fetched_at = $1`, [
      new Date(at).toISOString(),
    ]),
    companies: await ids(`SELECT company_id AS id FROM ${table("companies")} WHERE fetched_at = $1`, [
      new Date(at).toISOString(),
    ]),
  })
  const technologyRows = async (runId: number) =>
    (
      await database.query(
        `SELECT company_id::int AS company_id, product, vendor, category, subcategory, change
         FROM ${table("technology_changes")} WHERE run_id = $1`,
        [runId],
      )
    ).map((row) => ({ ...row }))
  const jobRows = async (runId: number) =>
    (
      await database.query(
        `SELECT match_id, from_company_id::int AS from_company_id, from_job_title, from_job_level, from_job_department,
           to_company_id::int AS to_company_id, to_job_title, to_job_level, to_job_department
         FROM ${table("job_changes")} WHERE run_id = $1`,
        [runId],
      )
    ).map((row) => ({ ...row }))
  /** The sandbox's changes between two generations, for the records bought in both runs. */
  const expected = (from: number, to: number, before: Set<string>, after: Set<string>) => {
    const refreshed = (id: string) => before.has(id) && after.has(id)
    return {
      technologies: sandbox.dataset
        .technologyChanges(from, to)
        .filter((change) => refreshed(String(change.company_id)))
        .map(({ company_id, product, vendor, category, subcategory, change }) => ({
          company_id,
          product,
          vendor,
          category,
          subcategory,
          change,
        })),
      jobs: sandbox.dataset
        .jobChanges(from, to)
        .filter((change) => refreshed(change.match_id))
        .map(({ match_id, from: was, to: now }) => ({
          match_id,
          from_company_id: was.company_id,
          from_job_title: was.job_title,
          from_job_level: was.job_level,
          from_job_department: was.job_department,
          to_company_id: now.company_id,
          to_job_title: now.job_title,
          to_job_level: now.job_level,
          to_job_department: now.job_department,
        })),
    }
  }
  const count = async (name: string) =>
    Number((await database.query(`SELECT count(*)::int AS n FROM ${table(name)}`))[0]?.n)

  beforeAll(async () => {
    database = await open(backend, "e2e changes")
    // The database starts here (PGlite takes a second or more to boot), not in the first step's time.
    await database.query("SELECT 1")
    key = sandbox.key()
    await setGeneration(0)
  })
  afterAll(async () => {
    await setGeneration(0)
    await database?.close()
  })

  // What the steps hand on: the first sync's time and purchases, the refresh's run and changes.
  const now = Date.now()
  let first: Awaited<ReturnType<typeof bought>> | undefined
  let before: Awaited<ReturnType<typeof bought>> | undefined
  let refresh: Awaited<ReturnType<typeof sync>> | undefined
  let full: Awaited<ReturnType<typeof sync>> | undefined
  let truth: ReturnType<typeof expected> | undefined
  let truthTech: ReturnType<typeof expected>["technologies"] = []
  let next: ReturnType<typeof expected> | undefined
  let nextTech: ReturnType<typeof expected>["technologies"] = []
  const handed = <A>(value: A | undefined, what: string): A => {
    if (value === undefined) throw new Error(`${what}: the step before did not run`)
    return value
  }

  it("step 1: a first sync at generation 0 records no change", async () => {
    await sync(now)
    first = await bought(now)
    expect(first.contacts.size).toBeGreaterThan(500)
    expect(first.companies.size).toBe(domainCount)
    expect(await count("technology_changes")).toBe(0)
    expect(await count("job_changes")).toBe(0)
  })

  it("step 2: a refresh after the provider moved on records exactly the sandbox's changes", async () => {
    const firstBought = handed(first, "step 2")
    await setGeneration(2)
    const refreshAt = now + 2 * day
    // What `plan` says the refresh of what is due will cost, before it runs.
    const state = await database.run(Plan.savedStateIn(database.schema))
    const plan = await Effect.runPromise(
      Plan.makePlan({ config: config(), state, mode: "exact", now: refreshAt }),
    )
    refresh = await sync(refreshAt)
    const second = await bought(refreshAt)
    const refreshedContacts = [...firstBought.contacts].filter((id) => second.contacts.has(id)).length
    expect(plan.refresh).toEqual({
      contacts: refreshedContacts,
      companies: domainCount,
      credits: refreshedContacts + domainCount,
    })
    truth = expected(0, 2, firstBought.contacts, second.contacts)
    truthTech = expected(0, 2, firstBought.companies, second.companies).technologies
    // The test means something only if the refresh saw changes of every kind.
    expect(truthTech.filter((c) => c.change === "adopted").length).toBeGreaterThan(10)
    expect(truthTech.filter((c) => c.change === "dropped").length).toBeGreaterThan(10)
    expect(truth.jobs.length).toBeGreaterThan(5)
    expect(sortedKeys(await technologyRows(refresh.runId))).toEqual(sortedKeys(truthTech))
    expect(sortedKeys(await jobRows(refresh.runId))).toEqual(sortedKeys(truth.jobs))
    // Every change row belongs to that run.
    expect(await count("technology_changes")).toBe(truthTech.length)
    expect(await count("job_changes")).toBe(truth.jobs.length)
  })

  it("step 3: a rerun of the same data records nothing", async () => {
    const jobs = handed(truth, "step 3").jobs
    // The same data bought again: nothing changed, nothing recorded.
    const rerunAt = now + 4 * day
    const rerun = await sync(rerunAt)
    before = await bought(rerunAt)
    expect(before.companies.size).toBe(domainCount)
    expect(rerun.creditsSpent).toBeGreaterThan(0)
    expect(await count("technology_changes")).toBe(truthTech.length)
    expect(await count("job_changes")).toBe(jobs.length)
  })

  it("step 4: a full refresh after one more generation records that generation's changes", async () => {
    const rerunBought = handed(before, "step 4")
    await setGeneration(3)
    const fullAt = now + 5 * day
    full = await sync(fullAt, ["contacts", "companies"])
    const third = await bought(fullAt)
    next = expected(2, 3, rerunBought.contacts, third.contacts)
    nextTech = expected(2, 3, rerunBought.companies, third.companies).technologies
    expect(nextTech.length).toBeGreaterThan(0)
    expect(sortedKeys(await technologyRows(full.runId))).toEqual(sortedKeys(nextTech))
    expect(sortedKeys(await jobRows(full.runId))).toEqual(sortedKeys(next.jobs))
  })

  it("step 5: the report's \"what changed\" numbers are the sandbox's own lists (not the tables)", async () => {
    const [refreshRun, fullRun] = [handed(refresh, "step 5").runId, handed(full, "step 5").runId]
    const [firstJobs, nextJobs] = [handed(truth, "step 5").jobs, handed(next, "step 5").jobs]
    const report = (await database.run(ReportData.read(database.schema, "the test database"))).changes
    const counted = (list: ReadonlyArray<{ change: string }>, change: string) =>
      list.filter((item) => item.change === change).length
    expect(report.runs).toEqual([
      {
        runId: refreshRun,
        adopted: counted(truthTech, "adopted"),
        dropped: counted(truthTech, "dropped"),
        jobChanges: firstJobs.length,
      },
      {
        runId: fullRun,
        adopted: counted(nextTech, "adopted"),
        dropped: counted(nextTech, "dropped"),
        jobChanges: nextJobs.length,
      },
    ])
    const allTech = [...truthTech, ...nextTech]
    expect(report.products.length).toBeGreaterThan(0)
    for (const row of report.products) {
      const mine = allTech.filter((change) => change.product === row.product && change.vendor === row.vendor)
      expect([row.adopted, row.dropped]).toEqual([counted(mine, "adopted"), counted(mine, "dropped")])
    }
    const allJobs = [...firstJobs, ...nextJobs]
    const total = (pick: (row: ReportData.ReportData["changes"]["jobs"][number]) => number) =>
      report.jobs.reduce((sum, row) => sum + pick(row), 0)
    expect(total((row) => row.changes)).toBe(allJobs.length)
    expect(total((row) => row.companyMoves)).toBe(
      allJobs.filter((job) => job.from_company_id !== job.to_company_id).length,
    )
    expect(total((row) => row.levelChanges)).toBe(
      allJobs.filter((job) => job.from_job_level !== job.to_job_level).length,
    )
  })
})
