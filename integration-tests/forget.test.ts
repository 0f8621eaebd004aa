/**
 * `salesintel forget` end to end against the sandbox, on PGlite and a real Postgres: a person held
 * from a search, one held from an email and a company held by its domain are forgotten; no table
 * holds them after, the suppression list names no one in the clear, and neither an incremental
 * sync, a full refresh nor the source through the pipe (with the exported `suppress_file`) buys
 * them again. A dry run changes nothing.
 */
import { mkdtempSync, rmSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import type { Message } from "@salesintel/airbyte"
import { Commands } from "@salesintel/source"
import * as Effect from "effect/Effect"
import * as Stream from "effect/Stream"
import { afterAll, describe, expect, it } from "vitest"
import { backends } from "../packages/postgres/src/testing/Backends.ts"
import { runTag } from "../packages/postgres/src/testing/RunTag.ts"
import { fastPace, sandboxForFile } from "./sandbox.ts"
import { targetOn } from "./target.ts"

const sandbox = sandboxForFile({ seed: 46, contacts: 4_000, companies: 400 })
const dir = mkdtempSync(join(tmpdir(), `salesintel-forget-${runTag()}-`))
afterAll(() => rmSync(dir, { recursive: true, force: true }))

const search = { name: "it-leaders", filters: { job_departments: ["it_is"], job_levels: ["vp", "dir"] } }
/** Two contacts outside the search's department: held from their emails. */
const emails = () => {
  const picked: Array<string> = []
  for (let index = 0; picked.length < 2 && index < 4_000; index++) {
    const contact = sandbox.dataset.contact(index)
    if (contact.job_department !== "it_is" && contact.email) picked.push(String(contact.email))
  }
  return picked
}
/** A contact outside the search whom nothing bought: forgotten before anyone holds them. */
const notHeld = () => {
  const taken = new Set(emails())
  for (let index = 0; index < 4_000; index++) {
    const contact = sandbox.dataset.contact(index)
    const email = String(contact.email ?? "")
    if (contact.job_department !== "it_is" && email !== "" && !taken.has(email)) return email
  }
  return ""
}
const domains = () => sandbox.dataset.companies.slice(0, 3).map((company) => company.domain)
const config = (extra: Record<string, unknown> = {}) => ({
  api_key: sandbox.key(),
  base_url: sandbox.url,
  credit_budget: 100_000,
  requests_per_minute: fastPace,
  contacts: { searches: [search], emails: emails() },
  companies: { domains: domains() },
  ...extra,
})

interface Person {
  readonly match_id: string
  readonly email: string
  readonly linkedin_url: string | null
  readonly first_name: string
  readonly last_name: string
}

describe.each(await backends())("salesintel forget, on $name", (backend) => {
  const t = targetOn(backend, "forget", sandbox)
  const people: Array<Person> = []
  let company = { id: "", domain: "" }

  /** Rows, in every table of the schema, whose text holds `text` (case-insensitive). */
  const rowsHolding = async (text: string, except: ReadonlyArray<string> = []) => {
    const tables = await t.database.query(
      "SELECT table_name FROM information_schema.tables WHERE table_schema = $1 AND table_type = 'BASE TABLE'",
      [t.database.schema],
    )
    const found: Array<string> = []
    for (const row of tables) {
      const name = String(row.table_name)
      if (except.includes(name)) continue
      const n = await t.count(
        `SELECT count(*)::int AS n FROM ${t.table(name)} r WHERE strpos(lower(r::text), lower(${`'${text.replaceAll("'", "''")}'`})) > 0`,
      )
      if (n > 0) found.push(`${name}: ${n}`)
    }
    return found
  }
  /** Rows of the forgotten company, by its id, in the tables of companies. */
  const companyRows = async () => {
    const tables = ["companies", "companies_history", "company_technologies", "company_observations"]
    const counts = await Promise.all(
      tables.map((name) =>
        t.count(`SELECT count(*)::int AS n FROM ${t.table(name)} WHERE company_id = ${company.id}`),
      ),
    )
    return counts.reduce((sum, n) => sum + n, 0)
  }
  const gone = async () => {
    for (const person of people) {
      expect(await rowsHolding(person.match_id), person.match_id).toEqual([])
      expect(await rowsHolding(person.email, ["_suppressed"]), person.email).toEqual([])
    }
    expect(await companyRows()).toBe(0)
  }

  it("a sync holds a person from the search, one from an email and a company", async () => {
    await t.sync(config())
    const fromSearch = await t.database.query(
      `SELECT match_id, email, linkedin_url, first_name, last_name FROM ${t.table("contacts")} WHERE search = 'it-leaders' AND email IS NOT NULL AND linkedin_url IS NOT NULL ORDER BY match_id LIMIT 1`,
    )
    const fromEmail = await t.database.query(
      `SELECT match_id, email, linkedin_url, first_name, last_name FROM ${t.table("contacts")} WHERE lower(email) = lower($1)`,
      [emails()[0]],
    )
    people.push(...[...fromSearch, ...fromEmail].map((row) => row as unknown as Person))
    expect(people).toHaveLength(2)
    const domain = domains()[0] ?? ""
    const [held] = await t.database.query(
      `SELECT company_id::text AS id FROM ${t.table("companies")} WHERE $1 = ANY(company_domains)`,
      [domain],
    )
    company = { id: String(held?.id), domain }
    expect(await companyRows()).toBeGreaterThan(0)
  })

  // The search's person by their LinkedIn URL, written otherwise than the row holds it: the match id
  // the suppression needs (the listing names no one by URL) is the row's.
  const forgetArgs = () => [
    "forget",
    "--linkedin-url",
    `https://www.${people[0]?.linkedin_url ?? ""}/`,
    "--email",
    people[1]?.email ?? "",
    "--domain",
    company.domain,
  ]

  it("--dry-run says what would go and changes nothing", async () => {
    const before = await t.rows("contacts")
    const bought = await t.rows("_bought")
    const ended = await t.command("salesintel", [...forgetArgs(), "--dry-run"])
    expect(ended.stderr).toBe("")
    expect(ended.code).toBe(0)
    expect(ended.stdout).toContain("would forget 2 people and 1 company (dry run: nothing changed)")
    expect(ended.stdout).toMatch(/contacts\s+2 to delete/)
    expect(await t.rows("contacts")).toBe(before)
    expect(await t.rows("_bought")).toBe(bought)
    expect(await t.rows("_suppressed")).toBe(0)
  })

  it("forget deletes them everywhere and keeps no one in the clear", async () => {
    const ended = await t.command("salesintel", forgetArgs())
    expect(ended.stderr).toBe("")
    expect(ended.code).toBe(0)
    expect(ended.stdout).toContain("forgot 2 people and 1 company")
    await gone()
    expect(await t.rows("_suppressed")).toBeGreaterThanOrEqual(5)
    const list = JSON.stringify(
      await t.database.query(`SELECT * FROM ${t.table("_suppressed")}`),
    ).toLowerCase()
    for (const person of people)
      for (const text of [person.match_id, person.email, person.first_name, person.last_name])
        expect(list).not.toContain(text.toLowerCase())
    expect(list).not.toContain(company.domain.toLowerCase())
  })

  it("the plan, an incremental sync and a full refresh buy none of them back", async () => {
    // Met by the search's listing, the email's lookup and the company keys: tallied, not bought.
    const plan = await t.plan(config())
    expect(plan.suppressed).toBe(3)
    expect(plan.credits).toBe(0)
    const again = await t.sync(config())
    expect(again.charged).toBe(0)
    await gone()
    await t.sync(config(), { fullRefresh: ["contacts", "companies"] })
    await gone()
  })

  it("someone not held is suppressed by the identifier given: their email is never looked up or bought", async () => {
    const email = notHeld()
    const ended = await t.command("salesintel", ["forget", "--email", email])
    expect(ended.code).toBe(0)
    expect(ended.stdout).toContain("forgot 0 people and 0 companies")
    const withIt = config({ contacts: { searches: [search], emails: [...emails(), email] } })
    const synced = await t.sync(withIt)
    expect(synced.charged).toBe(0)
    expect(await rowsHolding(email, ["_suppressed"])).toEqual([])
  })

  it("the source through the pipe, with the exported suppress_file, buys none of them", async () => {
    const file = join(dir, `${backend.name.replaceAll(/\W/g, "-")}.json`)
    const ended = await t.command("salesintel", ["forget", "--export", file])
    expect(ended.code).toBe(0)
    const piped = config({ suppress_file: file })
    const catalog = {
      streams: ["contacts", "companies"].map((name) => ({
        stream: { name },
        sync_mode: "incremental",
        destination_sync_mode: "append_dedup",
      })),
    }
    const records: Array<string> = []
    await Effect.runPromise(
      Stream.runForEach(Commands.read({ config: piped, catalog, state: [] }), (message: Message.Message) =>
        Effect.sync(() => {
          if (message.type === "RECORD") records.push(JSON.stringify(message.record.data))
          if (message.type === "TRACE" && message.trace.type === "ERROR") records.push("ERROR")
        }),
      ),
    )
    expect(records.length).toBeGreaterThan(0)
    expect(sandbox.charged(piped.api_key)).toBeGreaterThan(0)
    expect(records).not.toContain("ERROR")
    for (const person of people) expect(records.filter((r) => r.includes(person.match_id))).toEqual([])
    expect(records.filter((r) => r.includes(`"company_id":${company.id},`))).toEqual([])
  })
})
