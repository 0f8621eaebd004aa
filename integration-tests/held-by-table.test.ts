/**
 * Every stream's bought set is held by its table (issue 44, cases 6 and 7), end to end against the
 * sandbox (credits as it counts them), on PGlite and a real Postgres:
 * - companies (configured domains and names, and the companies of the contacts held): their
 *   `_state` row deleted, or saying less than the table (`"domains": {}`), the next sync, the plan
 *   and a pipe given what `salesintel-pg state` prints buy none of the companies the table holds;
 * - the contacts' ledger: days of `_bought` moved back by hand are mended from the rows'
 *   `fetched_at` (a line says so) and nothing they index is bought again.
 */

import { mkdtempSync, rmSync, writeFileSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { Loader } from "@salesintel/postgres"
import { Commands } from "@salesintel/source"
import { describe, expect, it } from "vitest"
import { backends } from "../packages/postgres/src/testing/Backends.ts"
import { runTag } from "../packages/postgres/src/testing/RunTag.ts"
import { fastPace, sandboxForFile } from "./sandbox.ts"
import { targetOn } from "./target.ts"
import { searchA, searchB, truthSandbox } from "./truth.ts"

const sandbox = sandboxForFile(truthSandbox)

const configOf = (key: string, companies: Record<string, unknown>, refreshAfterDays?: number) => ({
  api_key: key,
  base_url: sandbox.url,
  credit_budget: 20_000,
  requests_per_minute: fastPace,
  contacts: {
    searches: [searchA, searchB],
    ...(refreshAfterDays === undefined ? {} : { refresh_after_days: refreshAfterDays }),
  },
  ...(Object.keys(companies).length === 0 ? {} : { companies }),
})
type Config = ReturnType<typeof configOf>

const both = { streams: ["contacts", "companies"] }
const catalog = {
  streams: both.streams.map((name) => ({
    stream: { name },
    sync_mode: "incremental",
    destination_sync_mode: "append_dedup",
  })),
}

describe.each(await backends())("bought sets held by their tables, on $name", (backend) => {
  const target = targetOn(backend, "e2e held by table", sandbox)
  const { fresh, table, count, charging } = target
  const database = () => target.database
  /** `salesintel sync`, in process: what it printed and what the sandbox charged. */
  const sync = async (json: Config) => {
    const { charged, printed } = await target.sync(json)
    return { charged, printed }
  }
  const planOf = (json: Config) => target.plan(json)
  /** The companies' credits the plan says. */
  const plannedCompanies = async (json: Config) =>
    (await planOf(json)).works
      .filter((work) => work.stream === "companies")
      .reduce((sum, work) => sum + work.credits, 0)
  /** A command in process on this target, run in a directory of its own holding `config.json`. */
  const command = async (
    bin: "salesintel" | "salesintel-pg",
    args: ReadonlyArray<string>,
    config?: Config,
  ) => {
    const directory = mkdtempSync(join(tmpdir(), `salesintel-held-by-table-${runTag()}-`))
    try {
      if (config !== undefined) writeFileSync(join(directory, "config.json"), JSON.stringify(config))
      const ended = await target.command(bin, args, { cwd: directory, env: {} })
      expect(ended.stderr).toBe("")
      expect(ended.code).toBe(0)
      return ended.stdout
    } finally {
      rmSync(directory, { recursive: true, force: true })
    }
  }
  /** The pipe: what `salesintel-pg state` prints, as the source's --state, loaded; what the sandbox charged. */
  const pipe = async (json: Config) => {
    // The load below is Loader.load in process, which takes no lock: the export leaves no lease for it.
    const state: unknown = JSON.parse(await command("salesintel-pg", ["state", "--lease-minutes", "0"]))
    const { result: summary, charged } = await charging(json, () =>
      database().run(
        Loader.load(Commands.read({ config: json, catalog, state }), { schema: database().schema }),
      ),
    )
    expect(summary.sourceErrors).toEqual([])
    return charged
  }
  const companyRows = () => target.rows("companies")

  it("companies are held by their table: a state deleted or saying less buys none of them again (case 6)", {
    timeout: 120_000,
  }, async () => {
    await fresh()
    // Configured domains and names (names as the provider spells them), and the contacts' companies.
    const configured = sandbox.dataset.companies.slice(0, 40)
    const companies = {
      from_contacts: true,
      domains: configured.slice(0, 30).map((company) => company.domain),
      names: configured.slice(30).map((company) => company.name),
      refresh_after_days: 30,
    }
    const first = await sync(configOf(sandbox.key(), companies))
    const held = await companyRows()
    expect(held).toBeGreaterThan(100)
    expect(first.charged).toBeGreaterThan(held)
    const again = () => configOf(sandbox.key(), companies)
    // The state a sync commits says what the table holds: nothing to mend, nothing bought.
    const inStep = await sync(again())
    expect(inStep.charged).toBe(0)
    expect(inStep.printed).not.toMatch(/companies: .* (were missing|had another day)/)

    // The companies' `_state` row deleted: the plan, the sync and the pipe buy none of them.
    await database().query(`DELETE FROM ${table("_state")} WHERE stream = 'companies'`)
    expect(await plannedCompanies(again())).toBe(0)
    // `salesintel plan` says so too.
    expect(await command("salesintel", ["plan", "--config", "config.json"], again())).toMatch(
      /^companies: .*: 0 credits at one per key/m,
    )
    const afterDelete = await sync(again())
    expect(afterDelete.charged).toBe(0)
    expect(afterDelete.printed).toContain(`companies held in ${database().schema}.companies were missing`)
    expect(await companyRows()).toBe(held)
    // Mended once: the state the sync committed holds them, and the next sync says nothing.
    const quiet = await sync(again())
    expect(quiet.charged).toBe(0)
    expect(quiet.printed).not.toMatch(/companies: .* (were missing|had another day)/)

    // A state that says less than the table (no configured domains, no names).
    await database().query(
      `UPDATE ${table("_state")} SET state = state || '{"domains": {}, "names": {}}'::jsonb WHERE stream = 'companies'`,
    )
    expect(await plannedCompanies(again())).toBe(0)
    expect((await sync(again())).charged).toBe(0)

    // A state whose days are not the rows': every domain held said bought 100 days ago (due again
    // at refresh_after_days 30, were the state believed), the contacts' set and the names emptied.
    await database().query(
      `UPDATE ${table("_state")} SET state = state || jsonb_build_object(
         'domains', jsonb_build_object((floor(extract(epoch from now()) / 86400)::integer - 100)::text,
           (SELECT jsonb_agg(DISTINCT lower(btrim(d.domain))) FROM ${table("companies")} AS c, unnest(c.company_domains) AS d(domain))),
         'contact_domains', '{}'::jsonb, 'names', '{}'::jsonb)
        WHERE stream = 'companies'`,
    )
    expect(await plannedCompanies(again())).toBe(0)
    const redated = await sync(again())
    expect(redated.charged).toBe(0)
    expect(redated.printed).toMatch(
      /companies: .* had another day in the saved state than their rows' fetched_at/,
    )

    // The pipe, given what `salesintel-pg state` prints after the state was deleted again.
    await database().query(`DELETE FROM ${table("_state")} WHERE stream = 'companies'`)
    expect(await pipe(again())).toBe(0)
    expect(await companyRows()).toBe(held)

    // --reset-state companies starts the stream afresh on purpose: the table does not hold it back.
    const json = again()
    const { outcome: reset, charged } = await target.syncAsIs(json, { resetState: ["companies"] })
    expect(reset.error).toBeUndefined()
    expect(charged).toBeGreaterThanOrEqual(held)
  })

  it("a ledger day edited by hand is mended from its row's fetched_at, nothing bought again (case 7)", {
    timeout: 60_000,
  }, async () => {
    await fresh()
    const json = () => configOf(sandbox.key(), {}, 30)
    const first = await sync(json())
    expect(first.charged).toBeGreaterThan(100)
    // 100 days moved back 100 days: due again by refresh_after_days 30, were the ledger believed.
    await database().query(
      `UPDATE ${table("_bought")} SET day = day - 100
        WHERE stream = 'contacts' AND key IN (SELECT key FROM ${table("_bought")} WHERE stream = 'contacts' ORDER BY key LIMIT 100)`,
    )
    // The plan reads the days as the rows say them, before any run mends the ledger.
    expect((await planOf(json())).credits).toBe(0)
    const next = await sync(json())
    expect(next.charged).toBe(0)
    expect(next.printed).toContain("ledger: 100 contacts keys of")
    const redated = await count(
      `SELECT count(*)::int AS n FROM ${table("_bought")} b JOIN ${table("contacts")} t ON t.match_id = b.key
        WHERE b.stream = 'contacts' AND b.day <> floor(extract(epoch from coalesce(t.fetched_at, t."_synced_at")) / 86400)::integer`,
    )
    expect(redated).toBe(0)
    expect((await sync(json())).printed).not.toContain("ledger:")
  })
})
