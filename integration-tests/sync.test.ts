/**
 * End to end: the sandbox provider -> `salesintel sync` (source and loader in one process) -> SQL,
 * on a real Postgres server and on embedded PGlite, comparing the tables with the sandbox's own
 * data, the run bookkeeping with the sandbox's credit count, and a rerun that buys nothing.
 */
import { mkdtempSync, rmSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { Sync } from "@salesintel/cli"
import { Database, PGliteDatabase, PgDatabase, Sql } from "@salesintel/postgres"
import { type Sandbox, startSandbox } from "@salesintel/sandbox"
import { Effect, type Layer, ManagedRuntime } from "effect"
import pg from "pg"
import { afterAll, beforeAll, describe, expect, it } from "vitest"

const postgresUrl = process.env.DATABASE_URL ?? "postgres://postgres@127.0.0.1:5432/test"
const postgresAnswers = await (async () => {
  const client = new pg.Client({ connectionString: postgresUrl, connectionTimeoutMillis: 2_000 })
  try {
    await client.connect()
    await client.end()
    return true
  } catch {
    return false
  }
})()
if (!postgresAnswers && process.env.CI === "true")
  throw new Error(`CI needs a Postgres server: none answered at ${postgresUrl.replace(/:[^:@/]*@/, ":***@")}`)
if (!postgresAnswers)
  console.warn(`NO POSTGRES at ${postgresUrl}: the sync end-to-end test runs on PGlite only`)

let sandbox: Sandbox
beforeAll(async () => {
  sandbox = await startSandbox({ seed: 42, contacts: 100_000, companies: 10_000 })
})
afterAll(async () => {
  await sandbox?.close()
})

const silent = { isTTY: false, write: () => true }

interface Target {
  readonly name: string
  readonly schema: string
  readonly layer: () => Layer.Layer<Database.Database, Database.DatabaseError>
  readonly cleanup: () => Promise<void>
}

const targets: Array<Target> = []
if (postgresAnswers) {
  const schema = `e2e sync ${process.pid}`
  targets.push({
    name: "postgres",
    schema,
    layer: () => PgDatabase.layer(postgresUrl),
    cleanup: async () => {
      const client = new pg.Client({ connectionString: postgresUrl })
      await client.connect()
      await client.query(`DROP SCHEMA IF EXISTS ${Sql.ident(schema)} CASCADE`)
      await client.end()
    },
  })
}
const pgliteDir = mkdtempSync(join(tmpdir(), "salesintel-e2e-"))
targets.push({
  name: "pglite",
  schema: "salesintel",
  layer: () => PGliteDatabase.layer(pgliteDir),
  cleanup: async () => rmSync(pgliteDir, { recursive: true, force: true }),
})

describe.each(targets)("sandbox -> salesintel sync -> SQL on $name", (target) => {
  // One database connection (or one open PGlite) for the whole file, as a long-lived process has.
  let runtime: ManagedRuntime.ManagedRuntime<Database.Database, Database.DatabaseError>
  beforeAll(() => {
    runtime = ManagedRuntime.make(target.layer())
  })
  afterAll(async () => {
    await runtime.dispose()
    await target.cleanup()
  })

  const run = <A, E>(effect: Effect.Effect<A, E, Database.Database>) => runtime.runPromise(effect)
  const query = (sql: string, params: ReadonlyArray<unknown> = []) =>
    run(Effect.flatMap(Database.Database, (db) => db.query(sql, params)))
  const table = (name: string) => Sql.qualified(target.schema, name)

  const domains = () => sandbox.dataset.companies.slice(0, 25).map((company) => company.domain)
  const config = () => ({
    api_key: "sandbox-full",
    base_url: sandbox.url,
    credit_budget: 10_000,
    contacts: { searches: [{ name: "it-vps", filters: { job_departments: ["it_is"], job_levels: ["vp"] } }] },
    companies: { domains: domains() },
    taxonomy: { full_crawl: true },
  })

  it("lands every record in typed tables that match the provider's data", async () => {
    sandbox.reset()
    const outcome = await run(Sync.sync({ config: config(), schema: target.schema, progress: silent }))
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
    const charged = sandbox.accounts()["sandbox-full"]?.credits_charged
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
    sandbox.reset()
    const [before] = await query(`SELECT count(*)::int AS n FROM ${table("contacts")}`)
    const outcome = await run(Sync.sync({ config: config(), schema: target.schema, progress: silent }))
    expect(outcome.status).toBe("succeeded")
    expect(sandbox.accounts()["sandbox-full"]?.credits_charged).toBe(0)
    const [after] = await query(`SELECT count(*)::int AS n FROM ${table("contacts")}`)
    expect(after?.n).toBe(before?.n)
    const runs = await query(`SELECT status FROM ${table("_sync_runs")} ORDER BY id`)
    expect(runs.map((r) => r.status)).toEqual(["succeeded", "succeeded"])
  })
})
