/**
 * End to end: the sandbox provider -> `salesintel sync` (source and loader in one process) -> SQL,
 * on a real Postgres server and on embedded PGlite, comparing the tables with the sandbox's own
 * data, the run bookkeeping with the sandbox's credit count, and a rerun that buys nothing.
 */
import { Sync } from "@salesintel/cli"
import { PgDatabase, Runs, Sql } from "@salesintel/postgres"
import * as Effect from "effect/Effect"
import pg from "pg"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { backends, open } from "../packages/postgres/src/testing/Backends.ts"
import { fastPace, sandboxForFile } from "./sandbox.ts"

const sandbox = sandboxForFile({ seed: 42, contacts: 100_000, companies: 10_000 })

const silent = { isTTY: false, write: () => true }

// PGlite always; the local Postgres (required under CI=true); a container where Docker answers.
describe.each(await backends())("sandbox -> salesintel sync -> SQL on $name", (backend) => {
  let database: Awaited<ReturnType<typeof open>>
  beforeAll(async () => {
    database = await open(backend, "e2e sync")
    // PGlite boots on its first statement (a second or more): in the setup, not in the first case.
    await database.query("SELECT 1")
  })
  afterAll(async () => {
    await database?.close()
  })

  const run: (typeof database)["run"] = (effect) => database.run(effect)
  const query = (sql: string, params: ReadonlyArray<unknown> = []) => database.query(sql, params)
  const table = (name: string) => Sql.qualified(database.schema, name)

  const domains = () => sandbox.dataset.companies.slice(0, 25).map((company) => company.domain)
  // Each sync asks with a key of its own: what the sandbox charged it is that sync's alone.
  const config = (key: string) => ({
    api_key: key,
    base_url: sandbox.url,
    credit_budget: 10_000,
    requests_per_minute: fastPace,
    contacts: { searches: [{ name: "it-vps", filters: { job_departments: ["it_is"], job_levels: ["vp"] } }] },
    companies: { domains: domains() },
    taxonomy: { full_crawl: true },
  })

  it("lands every record in typed tables that match the provider's data", async () => {
    const key = sandbox.key()
    const outcome = await run(Sync.sync({ config: config(key), schema: database.schema, progress: silent }))
    expect(outcome.error).toBeUndefined()
    expect(outcome.status).toBe("succeeded")

    // Contacts: every one of the search, once, with the provider's values in the typed columns.
    const contacts = await query(
      `SELECT match_id, email, job_level, job_department, company_id FROM ${table("contacts")}`,
    )
    const expectedCount = outcome.streams.find((s) => s.stream === "contacts")?.records
    expect(contacts.length).toBe(expectedCount)
    expect(contacts.length).toBeGreaterThan(500)
    for (const row of contacts.slice(0, 200)) {
      const source = sandbox.dataset.contactByMatchId(String(row.match_id))
      expect(source).toBeDefined()
      expect(row.email).toBe(source?.email)
      expect(row.job_level).toBe("vp")
      expect(row.job_department).toBe("it_is")
      expect(Number(row.company_id)).toBe(source?.company.id)
    }
    const phones = await query(
      `SELECT match_id, count(*)::int AS n FROM ${table("contact_phones")} GROUP BY match_id`,
    )
    for (const row of phones.slice(0, 200)) {
      expect(row.n).toBe(sandbox.dataset.contactByMatchId(String(row.match_id))?.phone_numbers.length)
    }

    // Companies and their technologies, as the provider appends them.
    const companies = await query(`SELECT company_id FROM ${table("companies")}`)
    expect(companies.length).toBe(25)
    for (const row of companies.slice(0, 10)) {
      const id = Number(row.company_id)
      const [technologies] = await query(
        `SELECT count(*)::int AS n FROM ${table("company_technologies")} WHERE company_id = $1`,
        [id],
      )
      expect(technologies?.n).toBe(sandbox.dataset.companyTechnologiesById(id)?.technologies.length)
    }

    // The whole product taxonomy, once each.
    const [products] = await query(`SELECT count(*)::int AS n FROM ${table("taxonomy_products")}`)
    expect(products?.n).toBe(sandbox.dataset.taxonomy.products.length)

    // The run is recorded, and its credits agree with the provider's count.
    const charged = sandbox.charged(key)
    expect(outcome.creditsSpent).toBe(charged)
    const [runRow] = await query(
      `SELECT status, streams::text AS streams FROM ${table("_sync_runs")} WHERE id = $1`,
      [outcome.runId],
    )
    expect(runRow?.status).toBe("succeeded")
    const streams = JSON.parse(String(runRow?.streams)) as Record<
      string,
      { records: number; credits: number }
    >
    expect((streams.contacts?.credits ?? 0) + (streams.companies?.credits ?? 0)).toBe(charged)

    // The views answer the common questions.
    const [adoption] = await query(
      `SELECT product, companies FROM ${table("technology_adoption_by_product")} ORDER BY companies DESC LIMIT 1`,
    )
    expect(Number(adoption?.companies)).toBeGreaterThan(0)
  })

  it("a second sync reads its state from the database and buys nothing", async () => {
    const key = sandbox.key()
    const [before] = await query(`SELECT count(*)::int AS n FROM ${table("contacts")}`)
    const outcome = await run(Sync.sync({ config: config(key), schema: database.schema, progress: silent }))
    expect(outcome.status).toBe("succeeded")
    expect(sandbox.charged(key)).toBe(0)
    const [after] = await query(`SELECT count(*)::int AS n FROM ${table("contacts")}`)
    expect(after?.n).toBe(before?.n)
    const runs = await query(`SELECT status FROM ${table("_sync_runs")} ORDER BY id`)
    expect(runs.map((r) => r.status)).toEqual(["succeeded", "succeeded"])
  })

  it("--reset-state starts a stream afresh on purpose; a run left running is marked abandoned", async () => {
    const key = sandbox.key()
    const refused = await run(
      Effect.flip(
        Sync.sync({ config: config(key), schema: database.schema, progress: silent, resetState: ["nope"] }),
      ),
    )
    expect(refused.message).toContain("unknown stream nope in --reset-state")
    const dead = await run(Runs.start(database.schema))
    const outcome = await run(
      Sync.sync({
        config: config(key),
        schema: database.schema,
        progress: silent,
        resetState: ["companies"],
      }),
    )
    expect(outcome.status).toBe("succeeded")
    expect(outcome.abandoned).toEqual([dead])
    const credits = Object.fromEntries(outcome.streams.map((s) => [s.stream, s.credits]))
    // The companies bought again, the contacts not.
    expect(credits.companies).toBeGreaterThan(0)
    expect(credits.contacts ?? 0).toBe(0)
    expect(sandbox.charged(key)).toBe(credits.companies)
    const runs = await query(`SELECT id::int AS id, status FROM ${table("_sync_runs")} ORDER BY id`)
    expect(runs.find((r) => r.id === dead)?.status).toBe("abandoned")
    expect(runs.at(-1)?.status).toBe("succeeded")
  })

  it.runIf(backend.name === "postgres")(
    "a connection dropped mid-sync: the run fails with the cause, not the failed bookkeeping",
    { timeout: 60_000 },
    async () => {
      const key = sandbox.key()
      sandbox.setFaults({ latency_ms: 100 }, key)
      const owner = `dropped sync ${Math.random().toString(36).slice(2)}`
      const syncing = run(
        Sync.sync({
          config: {
            ...config(key),
            contacts: { searches: [{ name: "it-all", filters: { job_departments: ["it_is"] } }] },
          },
          schema: database.schema,
          progress: silent,
          lock: { owner },
          reconnect: PgDatabase.layer(database.url ?? ""),
        }),
      )
      const deadline = Date.now() + 30_000
      while (sandbox.charged(key) === 0 && Date.now() < deadline)
        await new Promise((resolve) => setTimeout(resolve, 25))
      const admin = new pg.Client({ connectionString: database.url })
      await admin.connect()
      await admin.query(
        "SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE application_name = $1 || ' pid ' || $2::text",
        [owner, String(process.pid)],
      )
      await admin.end()
      const outcome = await syncing
      expect(outcome.status).toBe("failed")
      // The server's reason when it could be read, else the lost connection: never the bookkeeping.
      expect(outcome.error, outcome.error).toMatch(/terminat|connection to the database was lost/i)
      expect(outcome.error).not.toContain("_sync_runs")
      await database.suspend()
      await database.resume()
      // The run row says why it failed (written on a new connection), not left for the next run
      // to mark abandoned; and it counts what committed, as the outcome does, not what was read.
      const [row] = await query(`SELECT status, error, streams FROM ${table("_sync_runs")} WHERE id = $1`, [
        outcome.runId,
      ])
      expect(row?.status).toBe("failed")
      expect(String(row?.error)).toMatch(/terminat|connection to the database was lost/i)
      const committed = (row?.streams as { contacts?: { records: number } } | null)?.contacts?.records ?? 0
      expect(outcome.streams.find((stream) => stream.stream === "contacts")?.records ?? 0).toBe(committed)
    },
  )
})
