/**
 * The bought set in the database's ledger (`_bought`), end to end against the sandbox, on
 * PGlite and a real Postgres: `salesintel sync` keeps the contacts bought there and a state of a
 * few bytes; the pipe goes on from that database with the state `salesintel-pg state` prints
 * (the ids written back), and a sync goes on from a state the pipe wrote (its ids moved into the
 * ledger): neither way buys anything again. Each purchase (a sync, a pipe) has a key of its own,
 * whose charges are its own.
 */
import type { Message } from "@salesintel/airbyte"
import { Sync } from "@salesintel/cli"
import { Ledger, Loader, Sql } from "@salesintel/postgres"
import { Commands } from "@salesintel/source"
import * as Effect from "effect/Effect"
import * as Stream from "effect/Stream"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { backends, open } from "../packages/postgres/src/testing/Backends.ts"
import { boughtIds } from "../packages/source/src/testing/BoughtIds.ts"
import { fastPace, sandboxForFile } from "./sandbox.ts"

// 20,000 contacts: the search below finds 565 of them.
const sandbox = sandboxForFile({ seed: 42, contacts: 20_000, companies: 2_000 })

const silent = { isTTY: false, write: () => true }
const config = (key: string) => ({
  api_key: key,
  base_url: sandbox.url,
  credit_budget: 10_000,
  requests_per_minute: fastPace,
  contacts: {
    searches: [{ name: "it-leaders", filters: { job_departments: ["it_is"], job_levels: ["vp", "dir"] } }],
  },
})
const catalog = {
  streams: [
    { stream: { name: "contacts" }, sync_mode: "incremental", destination_sync_mode: "append_dedup" },
  ],
}

/** The source through the pipe, with `key`: its contacts records and its last contacts STATE. */
const pipeRead = async (key: string, state: unknown) => {
  const messages: Array<Message.Message> = []
  await Effect.runPromise(
    Stream.runForEach(Commands.read({ config: config(key), catalog, state }), (message) =>
      Effect.sync(() => messages.push(message)),
    ),
  )
  const trace = messages.find((m) => m.type === "TRACE" && m.trace.type === "ERROR")
  expect(trace).toBeUndefined()
  const last = messages.filter((m): m is Message.StateMessage => m.type === "STATE").at(-1)
  return { records: messages.filter((m) => m.type === "RECORD").length, state: last?.state }
}

// Every backend: what the ledger `_bought` and `_state` hold after a sync is the loader's SQL.
describe.each(await backends())("the ledger of what was bought, on $name", (backend) => {
  let database: Awaited<ReturnType<typeof open>>
  beforeAll(async () => {
    database = await open(backend, "ledger")
    // The database starts here (PGlite takes a second or more to boot), not in the first test's time.
    await database.query("SELECT 1")
  })
  afterAll(async () => {
    await database?.close()
  })
  const table = (name: string) => Sql.qualified(database.schema, name)
  const sync = (key: string) =>
    database.run(Sync.sync({ config: config(key), schema: database.schema, progress: silent }))
  const contactsState = async () =>
    (await database.query(`SELECT state FROM ${table("_state")} WHERE stream = 'contacts'`))[0]?.state
  const ledgerCount = async () =>
    (await database.query(`SELECT count(*)::int AS n FROM ${table("_bought")} WHERE stream = 'contacts'`))[0]
      ?.n

  // In two steps: the pipe's goes on from the database the sync's left.
  let bought = 0
  it("sync keeps the ids in the ledger, and a state of a few bytes", async () => {
    const key = sandbox.key()
    const first = await sync(key)
    expect(first.status).toBe("succeeded")
    bought = sandbox.charged(key)
    expect(bought).toBeGreaterThan(500)
    expect(await contactsState()).toMatchObject({ known: "ledger", emails: "ledger" })
    // The two markers and the search's last read (its filters and counts): no id, whatever is held.
    expect(JSON.stringify(await contactsState()).length).toBeLessThan(256)
    expect(await ledgerCount()).toBe(bought)
  })

  it("the pipe goes on from the state salesintel-pg state prints, and buys nothing", async () => {
    expect(bought, "the sync's step ran first").toBeGreaterThan(0)
    // What `salesintel-pg state` prints: the ids back in the state, every one of them.
    const exported = await database.run(
      Effect.flatMap(Loader.SavedState.read(database.schema), (saved) =>
        Ledger.exported(database.schema, saved),
      ),
    )
    const contacts = exported.find((entry) => entry.stream.stream_descriptor.name === "contacts")
    expect(boughtIds(contacts?.stream.stream_state?.known).size).toBe(bought)
    const pipeKey = sandbox.key()
    const piped = await pipeRead(pipeKey, exported)
    expect(piped.records).toBe(0)
    expect(sandbox.charged(pipeKey)).toBe(0)
  })

  it("a sync goes on from a state the pipe wrote: its ids move into the ledger, nothing is bought", async () => {
    await database.query(`DELETE FROM ${table("_state")}`)
    await database.query(`DELETE FROM ${table("_bought")}`)
    const pipeKey = sandbox.key()
    const piped = await pipeRead(pipeKey, [])
    const bought = sandbox.charged(pipeKey)
    expect(piped.records).toBe(bought)
    expect(boughtIds(piped.state?.stream.stream_state?.known).size).toBe(bought)
    await database.run(Loader.SavedState.write(database.schema, "contacts", piped.state?.stream.stream_state))

    const key = sandbox.key()
    const next = await sync(key)
    expect(next.status).toBe("succeeded")
    expect(sandbox.charged(key)).toBe(0)
    expect(await ledgerCount()).toBe(bought)
    expect(await contactsState()).toMatchObject({ known: "ledger" })
  })
})
