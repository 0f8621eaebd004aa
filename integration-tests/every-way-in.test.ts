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
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { backends } from "../packages/postgres/src/testing/Backends.ts"
import { runTag } from "../packages/postgres/src/testing/RunTag.ts"
import { runInProcess } from "./bins.ts"
import { sandboxForFile } from "./sandbox.ts"
import { targetOn } from "./target.ts"
import { apartIn, configOver, truthSandbox } from "./truth.ts"

const sandbox = sandboxForFile(truthSandbox)
// A case runs several syncs and commands, PGlite's in a second or more each on a busy machine.
const slow = { timeout: 120_000 }

/** 2,362 contacts in the truth sandbox: 48 pages of 50, 237 of 10. */
const it_ = { name: "it", filters: { job_departments: ["it_is"] } }
type Config = ReturnType<typeof configOver> & { page_size?: number }
const config = (key: string, settings: { page_size: number; credit_budget?: number }): Config => ({
  ...configOver(sandbox.url, key, { searches: [it_] }),
  ...settings,
})

describe.each(await backends())("every way in keeps what was paid for, on $name", (backend) => {
  const target = targetOn(backend, "e2e ways in", sandbox)
  let dir = ""
  beforeAll(() => {
    dir = mkdtempSync(join(tmpdir(), `salesintel-ways-in-${runTag()}-`))
  })
  afterAll(() => {
    rmSync(dir, { recursive: true, force: true })
  })
  /** A JSON file in the test's directory, by name. */
  const file = (name: string, json: unknown) => {
    const path = join(dir, name)
    writeFileSync(path, JSON.stringify(json))
    return path
  }
  const { fresh, command } = target
  const contactRows = () => target.rows("contacts")
  const apart = () => apartIn(target.database.query, target.database.schema)
  const inStep = { extraKeys: 0, missingKeys: 0 }
  const sync = (json: Config, fullRefresh?: ReadonlyArray<string>) =>
    target.sync(json, fullRefresh === undefined ? {} : { fullRefresh })
  const planned = async (json: Config, fullRefresh?: ReadonlyArray<string>) =>
    (await target.plan(json, fullRefresh)).credits

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
    slow,
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

  /** `source-salesintel read`'s arguments: the config and the catalog, and the state when given. */
  const readArgs = (json: Config, catalog: string, stateText: string | undefined) => [
    "read",
    "--config",
    file("read-config.json", json),
    "--catalog",
    catalog,
    ...(stateText === undefined ? [] : ["--state", file("read-state.json", JSON.parse(stateText))]),
  ]
  /** The pipe's catalog: contacts, incremental into append_dedup. */
  const pipeCatalog = () =>
    file("pipe-catalog.json", {
      streams: [
        { stream: { name: "contacts" }, sync_mode: "incremental", destination_sync_mode: "append_dedup" },
      ],
    })

  // Case 4: incremental into overwrite would replace the table with what this run bought alone.
  it(
    "salesintel-pg load refuses a catalog that reads contacts incrementally into overwrite (case 4)",
    slow,
    async () => {
      await fresh()
      const key = sandbox.key()
      const json = config(key, { page_size: 50 })
      const held = (await sync(json)).charged
      // Only a look at the state: the load below is refused before it begins, so a lease would hold.
      const state = await command("salesintel-pg", ["state", "--lease-minutes", "0"])
      expect(state.code).toBe(0)
      const catalog = file("overwrite.json", {
        streams: [
          { stream: { name: "contacts" }, sync_mode: "incremental", destination_sync_mode: "overwrite" },
        ],
      })
      const before = sandbox.charged(key)
      const read = await runInProcess("source-salesintel", readArgs(json, catalog, state.stdout))
      expect(read.code).toBe(0)
      expect(sandbox.charged(key) - before).toBe(0)
      const load = await command("salesintel-pg", ["load", "--catalog", catalog], { stdin: read.stdout })
      expect(load.code).toBe(1)
      expect(load.stderr).toContain(
        "salesintel-pg: invalid catalog at streams[0].destination_sync_mode: stream contacts is read incrementally",
      )
      expect(await contactRows()).toBe(held)
      expect(await apart()).toEqual(inStep)
      expect((await sync(json)).charged).toBe(0)
    },
  )

  // Cases 2 and 5: a pipe buys from the state it was given; nothing else may buy from the same view.
  const readFrom = (json: Config, stateText: string | undefined) =>
    runInProcess("source-salesintel", readArgs(json, pipeCatalog(), stateText))
  const syncCommand = (json: Config, ...more: ReadonlyArray<string>) =>
    command("salesintel", ["sync", "--config", file("sync-config.json", json), ...more])
  const leaseHolder = "a pipe: salesintel-pg state gave the target's state to a load that has not begun"

  it(
    "a state handed to a pipe reserves the target: a sync or a second export is refused until the load begins (case 2)",
    slow,
    async () => {
      await fresh()
      const key = sandbox.key()
      const json = config(key, { page_size: 50 })
      const first = (await sync({ ...json, credit_budget: 500 })).charged
      const exported = await command("salesintel-pg", ["state"])
      expect(exported.code).toBe(0)
      // A sync, and a second pipe's export, while the first pipe's load has not begun: refused, unpaid.
      const before = sandbox.charged(key)
      const refused = await syncCommand(json)
      expect(refused.code).toBe(1)
      expect(refused.stderr).toContain(leaseHolder)
      const second = await command("salesintel-pg", ["state"])
      expect([second.code, second.stdout]).toEqual([1, ""])
      expect(second.stderr).toContain(leaseHolder)
      expect(sandbox.charged(key)).toBe(before)
      // The first pipe buys the rest, once; its load consumes the reservation.
      const read = await readFrom(json, exported.stdout)
      expect(read.code).toBe(0)
      const load = await command("salesintel-pg", ["load"], { stdin: read.stdout })
      expect(load.code).toBe(0)
      const held = await contactRows()
      expect(sandbox.charged(key) - before).toBe(held - first)
      expect(await apart()).toEqual(inStep)
      const after = await syncCommand(json)
      expect(after.code).toBe(0)
      expect(sandbox.charged(key) - before).toBe(held - first)
    },
  )

  it(
    "a pipe's export beside a running sync waits for it, and the pipe buys nothing twice (case 2)",
    slow,
    async () => {
      await fresh()
      const key = sandbox.key()
      // Paced: the sync's 48 pages take a few seconds, so the export meets it under way.
      const json = { ...config(key, { page_size: 50 }), requests_per_minute: 1_200 }
      await sync({ ...json, credit_budget: 50 })
      const onPGlite = target.database.pgliteDir !== undefined
      if (onPGlite) await target.database.suspend()
      try {
        const syncing = runInProcess("salesintel", [
          "sync",
          "--config",
          file("sync-config.json", json),
          ...target.flags(),
        ])
        const deadline = Date.now() + 30_000
        while (sandbox.charged(key) < 200 && Date.now() < deadline)
          await new Promise((r) => setTimeout(r, 20))
        const [synced, exported] = await Promise.all([
          syncing,
          runInProcess("salesintel-pg", ["state", "--wait", ...target.flags()]),
        ])
        expect([synced.code, exported.code]).toEqual([0, 0])
        const before = sandbox.charged(key)
        const read = await runInProcess("source-salesintel", readArgs(json, pipeCatalog(), exported.stdout))
        expect(read.code).toBe(0)
        expect(sandbox.charged(key) - before).toBe(0)
        expect(
          (await runInProcess("salesintel-pg", ["load", ...target.flags()], { stdin: read.stdout })).code,
        ).toBe(0)
      } finally {
        if (onPGlite) await target.database.resume()
      }
      expect(sandbox.charged(key)).toBe(await contactRows())
      expect(await apart()).toEqual(inStep)
    },
  )

  it("a pipe given no state says before it buys that it buys everything again (case 5)", slow, async () => {
    await fresh()
    const key = sandbox.key()
    const json = config(key, { page_size: 50, credit_budget: 100 })
    const read = await readFrom(json, undefined)
    expect(read.code).toBe(0)
    const messages = read.stdout
      .trim()
      .split("\n")
      .map((line) => JSON.parse(line) as { type: string; log?: { level: string; message: string } })
    expect(messages[0]?.type).toBe("LOG")
    expect(messages[0]?.log?.level).toBe("WARN")
    expect(messages[0]?.log?.message).toContain("no state given (--state): this read starts from nothing")
    // Given the state (even an empty one, as a first export prints), it says nothing of the kind.
    const given = await readFrom(json, "[]")
    expect(given.stdout).not.toContain("no state given")
  })
})
