/**
 * One truth for what was bought, end to end against the sandbox (credits as it counts them), on
 * PGlite and a real Postgres: the contacts table is the truth, the ledger `_bought` its index.
 * After any run its keys are the table's keys; a full refresh re-reads every configured path (the
 * emails too) and forgets in the ledger what it deletes; `salesintel-pg state` and `plan` read the
 * set as the tables hold it whatever `_state` says; a ledger emptied by hand is rebuilt from the
 * rows, and nothing the tables hold is bought again. A search whose results move while it is read
 * (case 10) is the source's to notice, so it runs on one backend; a connection lost (case 7) needs
 * a server. Each test buys with a key of its own, on a sandbox of 20,000 contacts (truth.ts).
 */
import { Plan, Sync } from "@salesintel/cli"
import { Ledger, Loader, PgDatabase, Sql } from "@salesintel/postgres"
import { Commands } from "@salesintel/source"
import * as Effect from "effect/Effect"
import pg from "pg"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { backends, oneBackend, open } from "../packages/postgres/src/testing/Backends.ts"
import { boughtIds } from "../packages/source/src/testing/BoughtIds.ts"
import { sandboxForFile } from "./sandbox.ts"
import {
  apartIn,
  configOver,
  contactsCatalog,
  outsideEmails as outsideEmails_,
  searchA,
  searchB,
  truthSandbox,
} from "./truth.ts"

const sandbox = sandboxForFile(truthSandbox)

const outsideEmails = () => outsideEmails_(sandbox.dataset)
type Config = ReturnType<typeof configOver>
/** A config with the test's own key: its charges are the sandbox's counters for that key. */
const config = (key: string, contacts: Record<string, unknown>): Config =>
  configOver(sandbox.url, key, contacts)
const catalog = contactsCatalog
/** What the sandbox charges `json`'s key while `run` runs. */
const spentBy = async <A>(json: Config, run: () => Promise<A>): Promise<{ result: A; charged: number }> => {
  const before = sandbox.charged(json.api_key)
  const result = await run()
  return { result, charged: sandbox.charged(json.api_key) - before }
}

// Every backend: what the tables and the ledger hold after loads, deletes and rebuilds is the SQL's.
describe.each(await backends())("one truth for what was bought, on $name", (backend) => {
  let database: Awaited<ReturnType<typeof open>>
  beforeAll(async () => {
    database = await open(backend, "e2e truth")
    // The database starts here (PGlite takes a second or more to boot), not in the first test's time.
    await database.query("SELECT 1")
  })
  afterAll(async () => {
    await database?.close()
  })
  /** A test that starts from an empty schema (case 2 goes on from case 1's). */
  const fresh = () => database.query(`DROP SCHEMA IF EXISTS ${Sql.ident(database.schema)} CASCADE`)
  const table = (name: string) => Sql.qualified(database.schema, name)
  const count = async (sql: string) => Number((await database.query(sql))[0]?.n ?? 0)
  const contactRows = () => count(`SELECT count(*)::int AS n FROM ${table("contacts")}`)
  /** Keys of the ledger without a row, and rows without a ledger key: both 0 when in step. */
  const apart = () => apartIn(database.query, database.schema)
  const inStep = { extraKeys: 0, missingKeys: 0 }

  /** `salesintel sync`, in process: what it printed, its outcome, and what the sandbox charged. */
  const sync = async (json: Config, fullRefresh?: ReadonlyArray<string>) => {
    const lines: Array<string> = []
    const { result: outcome, charged } = await spentBy(json, () =>
      database.run(
        Sync.sync({
          config: json,
          schema: database.schema,
          progress: { isTTY: false, write: (text: string) => lines.push(text) > 0 },
          ...(fullRefresh === undefined ? {} : { fullRefresh }),
        }),
      ),
    )
    expect(outcome.error).toBeUndefined()
    expect(outcome.creditsSpent).toBe(charged)
    return { outcome, charged, printed: lines.join("") }
  }
  /** What `salesintel-pg state` prints. */
  const exported = () =>
    database.run(
      Effect.flatMap(Loader.SavedState.read(database.schema), (saved) =>
        Ledger.exported(database.schema, saved),
      ),
    )
  /** The pipe, in process: the source's read from `state`, loaded (`source read | salesintel-pg load`). */
  const pipe = async (json: Config, state: unknown) => {
    const { result: summary, charged } = await spentBy(json, () =>
      database.run(Loader.load(Commands.read({ config: json, catalog, state }), { schema: database.schema })),
    )
    expect(summary.sourceErrors).toEqual([])
    return charged
  }
  /** The plan, from the saved state as `salesintel plan` reads it: free requests only. */
  const planOf = async (json: Config, fullRefresh?: ReadonlyArray<string>) => {
    const state = await database.run(Plan.savedStateIn(database.schema))
    const { result: plan, charged } = await spentBy(json, () =>
      Effect.runPromise(
        Plan.makePlan({
          config: json,
          state,
          mode: "exact",
          ...(fullRefresh === undefined ? {} : { fullRefresh }),
        }),
      ),
    )
    expect(charged).toBe(0)
    return plan
  }
  const planned = async (json: Config) => (await planOf(json)).credits

  // Cases 1 and 2, in three steps: each goes on from the schema and the config the one before left.
  let emails: ReadonlyArray<string> = []
  let held = 0
  it("the first sync buys the searches' and the emails' contacts (case 1, before the refresh)", async () => {
    await fresh()
    emails = outsideEmails()
    const both = config(sandbox.key(), { searches: [searchA, searchB], emails })
    const first = await sync(both)
    held = await contactRows()
    expect(first.charged).toBe(held)
    expect(held).toBeGreaterThan(emails.length)
  })

  it("a full refresh buys the emails' contacts again, and deletes nothing configured (case 1)", async () => {
    expect(held, "the first sync ran first").toBeGreaterThan(0)
    const both = config(sandbox.key(), { searches: [searchA, searchB], emails })
    // Case 1: searches and emails alike are read again; nothing is deleted that was configured.
    const planBoth = await planOf(both, ["contacts"])
    expect([planBoth.credits, planBoth.contacts?.notReadAgain]).toEqual([held, 0])
    const refreshed = await sync(both, ["contacts"])
    expect(refreshed.charged).toBe(held)
    expect(await contactRows()).toBe(held)
    expect(Sync.describe(refreshed.outcome, "db")).toContain(
      "\n  full refresh of contacts: deleted 0 rows of contacts bought before and not bought again\n",
    )
    expect(await apart()).toEqual(inStep)
    expect(await planned(both)).toBe(0)
    expect((await sync(both)).charged).toBe(0)
  })

  it("a full refresh of fewer searches deletes the rest and forgets them in the ledger (case 2)", async () => {
    expect(held, "case 1 ran first").toBeGreaterThan(0)
    const key = sandbox.key()
    const both = config(key, { searches: [searchA, searchB], emails })
    // A full refresh of A alone deletes B's rows and the emails', and forgets them; the plan and
    // the sync's first line say so first, with what buying them back would cost.
    const onlyA = config(key, { searches: [searchA] })
    const planA = await planOf(onlyA, ["contacts"])
    const refreshA = await sync(onlyA, ["contacts"])
    const rowsOfA = await contactRows()
    expect(refreshA.charged).toBe(rowsOfA)
    expect(rowsOfA).toBeLessThan(held)
    expect([planA.credits, planA.contacts?.notReadAgain]).toEqual([rowsOfA, held - rowsOfA])
    expect(refreshA.printed.split("\n")[0]).toBe(
      `full refresh of contacts: ${held - rowsOfA} contacts held were bought by searches or emails this config no longer has; unless a configured search finds them again they are deleted when the refresh completes, and buying them back would cost ${held - rowsOfA} credits (salesintel plan --full-refresh contacts counts them exactly)`,
    )
    expect(await apart()).toEqual(inStep)
    // The sync's summary names the rows the refresh deleted.
    expect(Sync.describe(refreshA.outcome, "db")).toContain(
      `\n  full refresh of contacts: deleted ${held - rowsOfA} rows of contacts bought before and not bought again\n`,
    )
    // Configured again, what was deleted is due again: the plan says so, and the sync buys it.
    const due = held - rowsOfA
    expect(await planned(both)).toBe(due)
    expect((await sync(both)).charged).toBe(due)
    expect(await contactRows()).toBe(held)
    expect(await apart()).toEqual(inStep)
  })

  it("salesintel-pg state and plan read the set the tables hold, whatever _state says (case 3)", async () => {
    await fresh()
    const key = sandbox.key()
    const a = config(key, { searches: [searchA] })
    const b = config(key, { searches: [searchB] })
    await sync(a)
    const stateAfterA = await exported()
    const boughtB = (await sync(b)).charged
    expect(boughtB).toBeGreaterThan(0)
    // The pipe goes on from the older export: its state (a set of its own, A's) is saved.
    expect(await pipe(a, stateAfterA)).toBe(0)
    const contacts = (await exported()).find((entry) => entry.stream.stream_descriptor.name === "contacts")
    expect(boughtIds(contacts?.stream.stream_state?.known).size).toBe(await contactRows())
    expect(await planned(b)).toBe(0)
    expect(await pipe(b, await exported())).toBe(0)
    // No contacts state at all: the export still holds what the tables hold, and the plan sees it.
    await database.query(`DELETE FROM ${table("_state")} WHERE stream = 'contacts'`)
    const again = (await exported()).find((entry) => entry.stream.stream_descriptor.name === "contacts")
    expect(boughtIds(again?.stream.stream_state?.known).size).toBe(await contactRows())
    expect(await planned(b)).toBe(0)
    expect((await sync(b)).charged).toBe(0)
    expect(await apart()).toEqual(inStep)
  })

  it("a ledger emptied or dropped by hand is rebuilt from the rows, and says so (case 4)", async () => {
    await fresh()
    const a = config(sandbox.key(), { searches: [searchA] })
    await sync(a)
    const held = await contactRows()
    await database.query(`TRUNCATE ${table("_bought")}`)
    expect(await planned(a)).toBe(0)
    const truncated = await sync(a)
    expect(truncated.charged).toBe(0)
    expect(truncated.printed).toContain(`ledger: ${held} contacts rows held in`)
    expect(await apart()).toEqual(inStep)
    await database.query(`DROP TABLE ${table("_bought")}`)
    const dropped = await sync(a)
    expect(dropped.charged).toBe(0)
    expect(dropped.printed).toContain(`ledger: ${held} contacts rows held in`)
    expect(await apart()).toEqual(inStep)
    // In step: nothing said.
    expect((await sync(a)).printed).not.toContain("ledger:")
  })
})

// The source's reaction to a search that moves under it: what holds the rows is not the point.
describe("records that shift under a direct read (case 10)", () => {
  it("switches to listing once a page shows the results moved: the waste is the pages in flight", async () => {
    const database = await open(await oneBackend(), "e2e shift")
    const contacts = truthSandbox.contacts
    try {
      const concurrency = 4
      const key = sandbox.key()
      const json = {
        ...config(key, { searches: [{ name: "it", filters: { job_departments: ["it_is"] } }] }),
        concurrency,
        // Paced on purpose, 50 requests a second: the read of ~50 pages lasts about a second, so
        // the change lands inside it.
        requests_per_minute: 3_000,
      }
      const lines: Array<string> = []
      const running = database.run(
        Sync.sync({
          config: json,
          schema: database.schema,
          progress: { isTTY: false, write: (text: string) => lines.push(text) > 0 },
        }),
      )
      // Contacts appear at the provider while the first read is under way (offset paging shifts),
      // once a sixth of the search's 2,362 contacts is bought.
      const deadline = Date.now() + 20_000
      while (sandbox.charged(key) < 400 && Date.now() < deadline)
        await new Promise((resolve) => setTimeout(resolve, 2))
      await fetch(`${sandbox.url}/_sandbox/dataset`, {
        method: "POST",
        body: JSON.stringify({ contacts: contacts + contacts / 10 }),
      })
      const outcome = await running
      const rows = Number(
        (
          await database.query(`SELECT count(*)::int AS n FROM ${Sql.qualified(database.schema, "contacts")}`)
        )[0]?.n,
      )
      const charged = sandbox.charged(key)
      expect(outcome.status).toBe("succeeded")
      expect(outcome.creditsSpent).toBe(charged)
      expect(lines.join("")).toMatch(
        /contacts search "it": its results changed at the provider while it was read/,
      )
      // Paid for twice: only what the pages in flight held when the shift showed.
      expect(charged - rows).toBeLessThanOrEqual(concurrency * 50)
    } finally {
      await fetch(`${sandbox.url}/_sandbox/dataset`, {
        method: "POST",
        body: JSON.stringify({ contacts }),
      })
      await database.close()
    }
  }, 60_000)
})

// A server connection to lose: Postgres only (PGlite is in process).
const server = (await backends()).find((backend) => backend.name !== "pglite")
describe.skipIf(server === undefined)(
  "a connection lost while a state's ids move into the ledger (case 7)",
  () => {
    let database: Awaited<ReturnType<typeof open>>
    let url = ""
    beforeAll(async () => {
      if (server === undefined) return
      database = await open(server, "e2e adopt")
      url = database.url ?? ""
    })
    afterAll(async () => {
      await database?.close()
    })

    it("ends the run failed with the lost connection as its cause, not left running", async () => {
      const a = config(sandbox.key(), { searches: [searchA] })
      const first = await database.run(
        Sync.sync({ config: a, schema: database.schema, progress: { isTTY: false, write: () => true } }),
      )
      expect(first.status).toBe("succeeded")
      // A state the pipe wrote: its ids in the state (400,000, so that moving them takes a while).
      const ids = Array.from({ length: 400_000 }, (_, index) => `piped-${index}`)
      await database.query(
        `UPDATE ${Sql.qualified(database.schema, "_state")} SET state = $1::jsonb WHERE stream = 'contacts'`,
        [JSON.stringify({ known: { "20000": ids } })],
      )
      const killer = new pg.Client({ connectionString: url })
      await killer.connect()
      let terminated = 0
      const watching = (async () => {
        const deadline = Date.now() + 30_000
        while (terminated === 0 && Date.now() < deadline) {
          const { rows } = await killer.query(
            "SELECT pg_terminate_backend(pid) AS done FROM pg_stat_activity WHERE query LIKE '%DO UPDATE SET day = EXCLUDED.day%' AND pid <> pg_backend_pid()",
          )
          terminated += rows.length
          await new Promise((resolve) => setTimeout(resolve, 5))
        }
      })()
      const outcome = await database
        .run(
          Effect.either(
            Sync.sync({
              config: a,
              schema: database.schema,
              progress: { isTTY: false, write: () => true },
              reconnect: PgDatabase.layer(url),
            }),
          ),
        )
        .finally(() => watching)
      await killer.end()
      // The test's own connection was the sync's: a new one for what follows.
      await database.suspend()
      await database.resume()
      expect(terminated).toBeGreaterThan(0)
      const said = outcome._tag === "Right" ? outcome.right.error : outcome.left.message
      expect(said).toMatch(/connection to the database was lost|terminat/i)
      expect(said).not.toMatch(/_sync_runs/)
      const runsLeft = await database.query(
        `SELECT status, error FROM ${Sql.qualified(database.schema, "_sync_runs")} ORDER BY id`,
      )
      expect(runsLeft.map((row) => row.status)).toEqual(["succeeded", "failed"])
      expect(String(runsLeft[1]?.error)).toMatch(/connection to the database was lost|terminat/i)
    }, 60_000)
  },
)
