/**
 * Personal-data control end to end: fields excluded in the config (exclude_fields) or left out of
 * the configured catalog's json_schema (Airbyte's field selection) are in no message the source
 * prints, no column, no `_raw` and no child table, whether the records reach Postgres in process
 * (`salesintel sync`, which hands the loader the source's decoded values) or through a pipe
 * (`source-salesintel read | salesintel-pg load`, where the loader reuses each line's text).
 */
import { execFile } from "node:child_process"
import { mkdtempSync, writeFileSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { FieldPaths, type Message, Streams } from "@salesintel/airbyte"
import { Sync } from "@salesintel/cli"
import { Sql } from "@salesintel/postgres"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { messageProblems } from "../packages/airbyte/src/testing/AirbyteSchema.ts"
import { backends, open } from "../packages/postgres/src/testing/Backends.ts"
import { fastPace, sandboxForFile } from "./sandbox.ts"

const sandbox = sandboxForFile({ seed: 7, contacts: 30_000, companies: 3_000 })

const silent = { isTTY: false, write: () => true }
const itVps = { name: "it-vps", filters: { job_departments: ["it_is"], job_levels: ["vp"] } }
// The provider also sends the company's revenue flat (company_revenue); once the contact Schema
// declares it, it is excluded beside company.revenue (an exclusion names one field, not a value).
const flatRevenue = FieldPaths.declaredPaths(Streams.streams.contacts.jsonSchema).has("company_revenue")
const contactExclusions = [
  "personal_email",
  "phone_numbers",
  "company.revenue",
  "addresses.street_1",
  ...(flatRevenue ? ["company_revenue"] : []),
]

const config = (overrides: Record<string, unknown> = {}) => ({
  api_key: "sandbox-full",
  requests_per_minute: fastPace,
  base_url: sandbox.url,
  credit_budget: 20_000,
  retry: { initial_delay_ms: 5, max_delay_ms: 50 },
  contacts: { searches: [itVps], exclude_fields: contactExclusions },
  companies: {
    domains: sandbox.dataset.companies.slice(0, 10).map((company) => company.domain),
    exclude_fields: ["company.revenue"],
  },
  ...overrides,
})

/** The sandbox's own contacts carry the fields, so their absence below is the exclusion's doing. */
const expectProviderHasThem = (matchIds: ReadonlyArray<string>) => {
  const source = matchIds.map((id) => sandbox.dataset.contactByMatchId(id))
  expect(source.filter((contact) => typeof contact?.personal_email === "string").length).toBeGreaterThan(0)
  expect(source.filter((contact) => (contact?.phone_numbers.length ?? 0) > 0).length).toBeGreaterThan(0)
  expect(JSON.stringify(source)).toContain('"street_1"')
  expect(JSON.stringify(source)).toContain('"revenue"')
}

/** A sandbox-sized run of a built command, asynchronously (the sandbox answers from this process). */
const runBin = (bin: string, args: ReadonlyArray<string>, input?: string) =>
  new Promise<{ status: number; stdout: string; stderr: string }>((resolve) => {
    const child = execFile(
      process.execPath,
      [join(import.meta.dirname, bin), ...args],
      { timeout: 120_000, maxBuffer: 256 * 1024 * 1024 },
      (error, stdout, stderr) =>
        resolve({ status: error === null ? 0 : Number(error.code ?? 1), stdout, stderr }),
    )
    if (input !== undefined) child.stdin?.end(input)
  })

// A real Postgres where one answers (PGlite only when none does, so the file still runs).
const all = await backends()
const servers = all.filter((backend) => backend.name !== "pglite")

describe.each(servers.length > 0 ? servers : all)(
  "excluded fields are absent everywhere on $name",
  // Each test starts the built commands in processes of their own: slow on a loaded machine.
  { timeout: 180_000 },
  (backend) => {
    let database: Awaited<ReturnType<typeof open>>
    beforeAll(async () => {
      database = await open(backend, "exclusion")
    })
    afterAll(async () => {
      await database?.close()
    })
    const query = (sql: string, params: ReadonlyArray<unknown> = []) => database.query(sql, params)
    const count = async (sql: string) => Number((await query(sql))[0]?.n)

    /** Asserts absence in every column, `_raw` and child table of `schema`; returns the contacts' ids. */
    const expectAbsentIn = async (schema: string): Promise<ReadonlyArray<string>> => {
      const table = (name: string) => Sql.qualified(schema, name)
      const contacts = await query(`SELECT match_id FROM ${table("contacts")}`)
      expect(contacts.length).toBeGreaterThan(20)
      const matchIds = contacts.map((row) => String(row.match_id))
      expectProviderHasThem(matchIds)
      // What was not excluded is there.
      expect(
        await count(`SELECT count(*) AS n FROM ${table("contacts")} WHERE email IS NOT NULL`),
      ).toBeGreaterThan(0)
      expect(
        await count(`SELECT count(*) AS n FROM ${table("contacts")} WHERE _raw ? 'addresses'`),
      ).toBeGreaterThan(0)
      // Columns: every column fed by an excluded field is NULL (those later added included).
      const columns = await query(
        "SELECT table_name, column_name FROM information_schema.columns WHERE table_schema = $1",
        [schema],
      )
      // (A table of company sites built from contacts' addresses has a street_1 column too.)
      const fed = columns.filter(
        (c) =>
          ["personal_email", "street_1"].includes(String(c.column_name)) ||
          (c.table_name === "contacts" && c.column_name === "company_revenue") ||
          (c.table_name === "companies" && c.column_name === "revenue"),
      )
      expect(fed.length).toBeGreaterThanOrEqual(2)
      for (const column of fed)
        expect(
          await count(
            `SELECT count(*) AS n FROM ${table(String(column.table_name))} WHERE ${Sql.ident(String(column.column_name))} IS NOT NULL`,
          ),
          `${column.table_name}.${column.column_name}`,
        ).toBe(0)
      // _raw: not a key anywhere it could be.
      expect(
        await count(
          `SELECT count(*) AS n FROM ${table("contacts")} WHERE _raw ? 'personal_email' OR _raw ? 'phone_numbers'
           OR coalesce(_raw->'company', '{}') ? 'revenue' OR jsonb_path_exists(_raw, '$.addresses[*].street_1')
           ${flatRevenue ? "OR _raw ? 'company_revenue'" : ""}`,
        ),
      ).toBe(0)
      expect(
        await count(
          `SELECT count(*) AS n FROM ${table("companies")} WHERE coalesce(_raw->'company', '{}') ? 'revenue'`,
        ),
      ).toBe(0)
      expect(await count(`SELECT count(*) AS n FROM ${table("companies")}`)).toBe(10)
      // Child tables fed by an excluded list are empty.
      expect(await count(`SELECT count(*) AS n FROM ${table("contact_phones")}`)).toBe(0)
      return matchIds
    }

    it("salesintel sync (in process, decoded values handed over) lands none of them", async () => {
      sandbox.reset()
      const outcome = await database.run(
        Sync.sync({
          config: config(),
          schema: database.schema,
          streams: ["contacts", "companies"],
          progress: silent,
        }),
      )
      expect(outcome.error).toBeUndefined()
      expect(outcome.status).toBe("succeeded")
      await expectAbsentIn(database.schema)
    })

    it("source-salesintel read prints none of them, and the loader fed its stdout lands none", async () => {
      sandbox.reset()
      const dir = mkdtempSync(join(tmpdir(), "exclusion-"))
      const write = (name: string, value: unknown) => {
        const path = join(dir, name)
        writeFileSync(path, JSON.stringify(value))
        return path
      }
      const catalog = {
        streams: ["contacts", "companies"].map((name) => ({
          stream: { name },
          sync_mode: "full_refresh",
          destination_sync_mode: "overwrite",
        })),
      }
      const read = await runBin("../packages/source/dist/bin.js", [
        "read",
        "--config",
        write("config.json", config()),
        "--catalog",
        write("catalog.json", catalog),
      ])
      expect(read.status, read.stderr).toBe(0)
      const lines = read.stdout.split("\n").filter((line) => line.length > 0)
      const records = lines
        .map((line) => JSON.parse(line) as Message.Message)
        .filter((message): message is Message.RecordMessage => message.type === "RECORD")
      for (const record of records) expect(messageProblems(record)).toEqual([])
      const contactLines = lines.filter((line) => line.includes('"stream":"contacts"'))
      expect(contactLines.length).toBeGreaterThan(20)
      for (const line of contactLines)
        for (const key of ['"personal_email"', '"phone_numbers"', '"street_1"', '"revenue"'])
          expect(line).not.toContain(key)
      expectProviderHasThem(
        records.flatMap((r) => (r.record.stream === "contacts" ? [String(r.record.data.match_id)] : [])),
      )

      if (database.url === undefined) return // the loader's pipe runs against a server here
      const pipedSchema = `${database.schema} piped`
      try {
        const load = await runBin(
          "../packages/postgres/dist/bin.js",
          [
            "load",
            "--database-url",
            database.url,
            "--schema",
            pipedSchema,
            "--catalog",
            write("catalog.json", catalog),
          ],
          read.stdout,
        )
        expect(load.status, load.stderr).toBe(0)
        await expectAbsentIn(pipedSchema)
      } finally {
        await query(`DROP SCHEMA IF EXISTS ${Sql.ident(pipedSchema)} CASCADE`)
      }
    })

    it("honours the configured catalog's field selection (fields left out of json_schema)", async () => {
      sandbox.reset()
      const dir = mkdtempSync(join(tmpdir(), "selection-"))
      const write = (name: string, value: unknown) => {
        const path = join(dir, name)
        writeFileSync(path, JSON.stringify(value))
        return path
      }
      const {
        email: _,
        job_title: __,
        ...selected
      } = Streams.streams.contacts.jsonSchema.properties as Record<string, unknown>
      const catalog = {
        streams: [
          {
            stream: {
              name: "contacts",
              json_schema: { ...Streams.streams.contacts.jsonSchema, properties: selected },
            },
            sync_mode: "full_refresh",
            destination_sync_mode: "overwrite",
          },
        ],
      }
      const read = await runBin("../packages/source/dist/bin.js", [
        "read",
        "--config",
        write("config.json", config({ contacts: { searches: [itVps] } })),
        "--catalog",
        write("catalog.json", catalog),
      ])
      expect(read.status, read.stderr).toBe(0)
      const records = read.stdout
        .split("\n")
        .filter((line) => line.includes('"type":"RECORD"'))
        .map((line) => (JSON.parse(line) as Message.RecordMessage).record.data)
      expect(records.length).toBeGreaterThan(20)
      for (const data of records) {
        expect(Object.keys(data)).not.toContain("email")
        expect(Object.keys(data)).not.toContain("job_title")
        expect(typeof data.match_id).toBe("string")
        expect(typeof data._salesintel_fetched_at).toBe("string")
      }
      // Only the deselected fields went: the config's exclusions were not asked for this time.
      expect(records.some((data) => "personal_email" in data)).toBe(true)
      const source = records.map((data) => sandbox.dataset.contactByMatchId(String(data.match_id)))
      expect(source.filter((contact) => typeof contact?.email === "string").length).toBeGreaterThan(0)
    })
  },
)
