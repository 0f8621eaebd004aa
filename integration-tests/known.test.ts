/**
 * Known contacts and accounts from where a team keeps them, end to end with `salesintel sync` on
 * each backend: a CSV of 2,000 identities of the four kinds (email, name at a company domain,
 * profile URL, match id; some repeated, some matching no one, some held already from a search),
 * the same as NDJSON, and as a SQL query on the target's database; companies by a domains file
 * and query. The plan says the charge to the credit (the lookups are free), a rerun buys nothing,
 * those matching no one are counted and named, and a file with a bad row buys nothing at all.
 */
import { mkdtempSync, rmSync, writeFileSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import type { Dataset } from "@salesintel/sandbox"
import { afterAll, describe, expect, it } from "vitest"
import { backends } from "../packages/postgres/src/testing/Backends.ts"
import { runTag } from "../packages/postgres/src/testing/RunTag.ts"
import { fastPace, sandboxForFile } from "./sandbox.ts"
import { targetOn } from "./target.ts"
import { searchA } from "./truth.ts"

const sandbox = sandboxForFile({ seed: 42, contacts: 20_000, companies: 2_000 })

const directory = mkdtempSync(join(tmpdir(), `salesintel-known-${runTag()}-`))
afterAll(() => rmSync(directory, { recursive: true, force: true }))

const config = (contacts: object | undefined, companies?: object) => ({
  api_key: sandbox.key(),
  base_url: sandbox.url,
  credit_budget: 100_000,
  requests_per_minute: fastPace,
  ...(contacts === undefined ? {} : { contacts }),
  ...(companies === undefined ? {} : { companies }),
})

type Fields = {
  readonly email?: string
  readonly first_name?: string
  readonly last_name?: string
  readonly company_domain?: string
  readonly linkedin_url?: string
  readonly match_id?: string
}

const linkedinOf = (dataset: Dataset, index: number) =>
  dataset.contact(index).social_profiles.find((profile) => profile.type === "linkedin")?.url

/** One identity of `kind` for the contact at `index` (undefined when it has no profile URL). */
const identityOf = (dataset: Dataset, index: number, kind: number): Fields | undefined => {
  const contact = dataset.contact(index)
  switch (kind % 4) {
    case 0:
      return { email: contact.email }
    case 1:
      return {
        first_name: contact.first_name,
        last_name: contact.last_name,
        company_domain: contact.company_domains[0] ?? "",
      }
    case 2: {
      const url = linkedinOf(dataset, index)
      return url === undefined ? undefined : { linkedin_url: url }
    }
    default:
      return { match_id: contact.match_id }
  }
}

/** One identity of each kind that matches no one (`tag` tells each test's apart: one matching no one is done once looked up). */
const unmatched = (tag: string): ReadonlyArray<Fields> => [
  { email: `nobody-${tag}@nowhere-known.example` },
  { first_name: "Zyxw", last_name: `Vutsr${tag}`, company_domain: "nowhere-known.example" },
  { linkedin_url: `https://www.linkedin.com/in/nobody-${tag}-zzzzzzz` },
  { match_id: `no-such-match-id-${tag}` },
]

/** `count` identities of the four kinds from `from` on, then repeats, those matching no one, and `held`. */
const identities = (
  dataset: Dataset,
  from: number,
  count: number,
  held: ReadonlyArray<string>,
  tag: string,
): ReadonlyArray<Fields> => {
  const rows: Array<Fields> = []
  for (let index = from; rows.length < count; index++) {
    const identity = identityOf(dataset, index, index)
    if (identity !== undefined) rows.push(identity)
  }
  const repeats = rows
    .slice(0, 40)
    .map((row) => (row.email === undefined ? row : { email: row.email.toUpperCase() }))
  return [...rows, ...repeats, ...unmatched(tag), ...held.map((match_id) => ({ match_id }))]
}

const columns = ["email", "first_name", "last_name", "company_domain", "linkedin_url", "match_id"] as const

const csv = (rows: ReadonlyArray<Fields>) =>
  [columns.join(","), ...rows.map((row) => columns.map((column) => row[column] ?? "").join(","))].join("\n")

const ndjson = (rows: ReadonlyArray<Fields>) => rows.map((row) => JSON.stringify(row)).join("\n")

const file = (name: string, text: string) => {
  const path = join(directory, name)
  writeFileSync(path, text)
  return path
}

describe.each(await backends())("known contacts and accounts on $name", (backend) => {
  const target = targetOn(backend, "e2e known", sandbox)
  const crm = () => `${target.database.schema}_crm`
  afterAll(async () => {
    await target.database?.query(`DROP SCHEMA IF EXISTS "${crm()}" CASCADE`)
  })

  it("a CSV of 2,000 identities: the plan is the charge, a rerun buys nothing, those matching no one are named", {
    timeout: 240_000,
  }, async () => {
    await target.fresh()
    const searched = await target.sync(config({ searches: [searchA] }))
    expect(searched.charged).toBeGreaterThan(0)
    const held = (
      await target.database.query(`SELECT match_id FROM ${target.table("contacts")} LIMIT 60`)
    ).map((row) => String(row.match_id))
    const rows = identities(sandbox.dataset, 0, 1_896, held, "csv")
    expect(rows).toHaveLength(2_000)
    const json = config({ searches: [searchA], known_file: file("known.csv", csv(rows)) })
    const plan = await target.plan(json)
    const first = await target.sync(json)
    expect(first.charged).toBeGreaterThan(1_500)
    expect(plan.credits).toBe(first.charged)
    // The repeats and those held are not bought again: at most one credit per distinct new identity.
    expect(first.charged).toBeLessThanOrEqual(1_896 + 10)
    expect(first.printed).toMatch(/known contacts: \d+ looked up, 4 matched no one \(/)
    expect(first.printed).toContain("nobody-csv@nowhere-known.example")
    expect(first.printed).toContain("match_id no-such-match-id-csv")
    // The identities done are kept in the target, not the state: each once (the repeats are one).
    const lookedUp = Number(/known contacts: (\d+) looked up/.exec(first.printed)?.[1])
    expect(lookedUp).toBeGreaterThan(1_900)
    expect(await target.rows("_known_done")).toBe(lookedUp)
    const [saved] = await target.database.query(
      `SELECT state->>'emails' AS emails FROM ${target.table("_state")} WHERE stream = 'contacts'`,
    )
    expect(saved?.emails).toBe("ledger")
    const again = await target.sync(json)
    expect(again.charged).toBe(0)
    expect(again.printed).toContain("known contacts: every identity is up to date")
    expect((await target.plan(json)).credits).toBe(0)
    // The pipe's state holds them, as the target does.
    const exported = await target.command("salesintel-pg", ["state", "--lease-minutes", "0"])
    expect(exported.code).toBe(0)
    const contactsState = (
      JSON.parse(exported.stdout) as ReadonlyArray<{
        stream: {
          stream_descriptor: { name: string }
          stream_state: { emails: Record<string, ReadonlyArray<string>> }
        }
      }>
    ).find((entry) => entry.stream.stream_descriptor.name === "contacts")
    const keys = Object.values(contactsState?.stream.stream_state.emails ?? {}).flat()
    expect(keys).toHaveLength(lookedUp)
    expect(keys).toContain("nobody-csv@nowhere-known.example")
  })

  it("the NDJSON form, and a bad row refused by file and line before a credit", {
    timeout: 120_000,
  }, async () => {
    const rows = identities(sandbox.dataset, 5_000, 300, [], "ndjson")
    const bad = file(
      "bad.ndjson",
      ndjson([...rows.slice(0, 10), { email: "a@b.com", match_id: "x" }, { first_name: "Dana" }]),
    )
    const refused = await target.syncAsIs(config({ known_file: bad }))
    expect(refused.charged).toBe(0)
    expect(refused.outcome.error).toContain(`${bad}:11: expected exactly one identity`)
    expect(refused.outcome.error).toContain(
      `${bad}:12: first_name, last_name and company_domain identify a contact together`,
    )
    const json = config({ known_file: file("known.ndjson", ndjson(rows)) })
    const plan = await target.plan(json)
    const first = await target.sync(json)
    expect(first.charged).toBeGreaterThan(250)
    expect(plan.credits).toBe(first.charged)
    expect((await target.sync(json)).charged).toBe(0)
  })

  it("the query form: a table in the target's database, read by salesintel sync", {
    timeout: 120_000,
  }, async () => {
    const rows = identities(sandbox.dataset, 8_000, 300, [], "query")
    await target.database.query(`DROP SCHEMA IF EXISTS "${crm()}" CASCADE`)
    await target.database.query(`CREATE SCHEMA "${crm()}"`)
    await target.database.query(
      `CREATE TABLE "${crm()}".people (email text, first_name text, last_name text, company_domain text, linkedin_url text, match_id text, owner text)`,
    )
    for (const row of rows)
      await target.database.query(
        `INSERT INTO "${crm()}".people VALUES ($1, $2, $3, $4, $5, $6, 'sales')`,
        columns.map((column) => row[column] ?? null),
      )
    const json = config({
      known_query: `select email, first_name, last_name, company_domain, linkedin_url, match_id from "${crm()}".people`,
    })
    // `salesintel plan` runs the query on the target as the sync will: its credits are the charge.
    writeFileSync(join(directory, "query.json"), JSON.stringify(json))
    const planned = await target.command("salesintel", ["plan", "--config", "query.json", "--json"], {
      cwd: directory,
      env: {},
    })
    expect(planned.stderr).toBe("")
    const first = await target.sync(json)
    expect(first.charged).toBeGreaterThan(250)
    expect((JSON.parse(planned.stdout) as { credits: number }).credits).toBe(first.charged)
    expect(first.printed).toMatch(/known contacts: \d+ looked up, 4 matched no one \(nobody-query@/)
    expect((await target.sync(json)).charged).toBe(0)
    // A column not named as a field is refused, naming the row.
    const extra = await target.syncAsIs(config({ known_query: `select email, owner from "${crm()}".people` }))
    expect(extra.charged).toBe(0)
    expect(extra.outcome.error).toContain(`contacts.known_query row 1: "owner" is not a field here`)
  })

  it("companies by a domains file and a domains query: bought once, a rerun buys nothing", {
    timeout: 120_000,
  }, async () => {
    const companies = sandbox.dataset.companies
    const domains = companies.slice(0, 40).map((company) => company.domain)
    const names = companies.slice(40, 50).map((company) => company.name.replace(/,/g, ""))
    const path = file(
      "companies.csv",
      ["domain,name", ...domains.map((domain) => `${domain},`), ...names.map((name) => `,"${name}"`)].join(
        "\n",
      ),
    )
    const byFile = config(undefined, { domains_file: path })
    const plan = await target.plan(byFile)
    const first = await target.sync(byFile)
    expect(first.charged).toBeGreaterThanOrEqual(40)
    expect(plan.credits).toBeGreaterThanOrEqual(first.charged)
    expect((await target.sync(byFile)).charged).toBe(0)

    await target.database.query(`CREATE SCHEMA IF NOT EXISTS "${crm()}"`)
    await target.database.query(`CREATE TABLE "${crm()}".accounts (domain text)`)
    const more = companies.slice(100, 130).map((company) => company.domain)
    for (const domain of more)
      await target.database.query(`INSERT INTO "${crm()}".accounts VALUES ($1)`, [domain])
    const byQuery = config(undefined, { domains_query: `select domain from "${crm()}".accounts` })
    const queried = await target.sync(byQuery)
    expect(queried.charged).toBeGreaterThanOrEqual(30)
    expect((await target.sync(byQuery)).charged).toBe(0)
  })
})
