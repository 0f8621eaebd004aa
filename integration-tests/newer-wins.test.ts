/**
 * Newer wins, end to end on a real Postgres and on PGlite, through `salesintel-pg load` (the real
 * command, in process) fed the source's own files: a read at the sandbox's generation 0 forty days
 * ago (file A), a read at generation 1 five days ago from A's state (file B, everything due again:
 * refresh_after_days is 30), both loaded in order; then A replayed. The replay changes nothing:
 * rows, child rows, `_state`, the ledger, the observations and the change tables (and the views
 * over them) are as B left them, and the next read buys nothing (credits as the sandbox counts
 * them: all of it was bought five days ago). Loading B then A into a fresh schema ends equal to
 * A, B, A: rows, child rows, `_state`, the ledger, the observation log and the views over it (the
 * change tables compare a record only with an older row, so there A is logged, not compared).
 */
import { Message, Ndjson, StreamState } from "@salesintel/airbyte"
import { Sql } from "@salesintel/postgres"
import { Commands } from "@salesintel/source"
import * as Effect from "effect/Effect"
import * as Stream from "effect/Stream"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { backends, open } from "../packages/postgres/src/testing/Backends.ts"
import { runInProcess } from "./bins.ts"
import { fastPace, sandboxForFile } from "./sandbox.ts"

const sandbox = sandboxForFile({ seed: 23, contacts: 4_000, companies: 400 })
const domainCount = 80
const day = 86_400_000
const now = Date.now()
// Loads through the command, and a PGlite opened per load, take seconds on a busy machine.
const slow = { timeout: 240_000 }

const config = (key: string) => ({
  api_key: key,
  base_url: sandbox.url,
  credit_budget: 100_000,
  requests_per_minute: fastPace,
  contacts: { refresh_after_days: 30, searches: [{ name: "vps", filters: { job_levels: ["vp"] } }] },
  companies: {
    refresh_after_days: 30,
    domains: sandbox.dataset.companies.slice(0, domainCount).map((company) => company.domain),
  },
})
const catalog = {
  streams: ["contacts", "companies"].map((name) => ({
    stream: { name },
    sync_mode: "incremental",
    destination_sync_mode: "append_dedup",
  })),
}

const setGeneration = sandbox.setGeneration

/** The source's read as of `startedAt`, from `state`: its messages as the file a pipe writes. */
const readFile = async (key: string, state: unknown, startedAt: number) => {
  const messages: Array<Message.Message> = []
  await Effect.runPromise(
    Stream.runForEach(Commands.read({ config: config(key), catalog, state, startedAt }), (message) =>
      Effect.sync(() => messages.push(message)),
    ),
  )
  expect(messages.filter(Message.isTraceError)).toEqual([])
  // The last STATE of each stream, as the next read's --state.
  const last = new Map<string, Message.StateMessage["state"]>()
  for (const message of messages)
    if (message.type === "STATE") last.set(message.state.stream.stream_descriptor.name, message.state)
  return {
    text: messages.map((message) => `${Ndjson.serialize(message)}\n`).join(""),
    records: messages.filter((message) => message.type === "RECORD").length,
    state: [...last.values()],
  }
}

/** Each table's rows, less what says when they were written (not what they hold), as one digest. */
const digested: ReadonlyArray<readonly [table: string, order: string]> = [
  ["contacts", "match_id"],
  ["contact_phones", "match_id, position"],
  ["contact_social_profiles", "match_id, position"],
  ["company_sites", "location_id"],
  ["companies", "company_id"],
  ["company_technologies", "company_id, position"],
  ["_state", "stream"],
  ["_bought", "stream, key"],
  ["company_observations", "company_id, observed_at"],
  ["technology_observations", "company_id, observed_at, product, vendor"],
]
const changeTables = ["technology_changes", "job_changes"]
const writtenAt = "ARRAY['_synced_at', 'loaded_at', 'observation_id', 'change_id', 'updated_at', 'run_id']"

type Db = Awaited<ReturnType<typeof open>>

const snapshot = async (database: Db, tables: ReadonlyArray<readonly [string, string]>) => {
  const out: Record<string, string> = {}
  for (const [table, order] of tables) {
    const [row] = await database.query(
      `SELECT count(*)::int AS n, md5(coalesce(string_agg((to_jsonb(t) - ${writtenAt})::text, '|' ORDER BY ${order}), '')) AS digest
         FROM ${Sql.qualified(database.schema, table)} t`,
    )
    out[table] = `${row?.n} rows ${row?.digest}`
  }
  return out
}

/** Change rows keyed by what they say (their ids and load times aside), and the views' counts. */
const changes = async (database: Db) => {
  const out: Record<string, string> = {}
  for (const table of changeTables) {
    const [row] = await database.query(
      `SELECT count(*)::int AS n, md5(coalesce(string_agg(x, '|' ORDER BY x), '')) AS digest
         FROM (SELECT (to_jsonb(t) - ${writtenAt})::text AS x FROM ${Sql.qualified(database.schema, table)} t) s`,
    )
    out[table] = `${row?.n} rows ${row?.digest}`
  }
  for (const view of ["champion_moves", "technology_install_base"]) {
    const [row] = await database.query(
      `SELECT count(*)::int AS n FROM ${Sql.qualified(database.schema, view)}`,
    )
    out[view] = `${row?.n} rows`
  }
  return out
}

/** The views read from the observation log alone: every row, as one digest. */
const logViews = async (database: Db) => {
  const out: Record<string, string> = {}
  for (const view of [
    "technology_install_base",
    "technology_install_base_trend",
    "technology_displacements",
  ]) {
    const [row] = await database.query(
      `SELECT count(*)::int AS n, md5(coalesce(string_agg(x, '|' ORDER BY x), '')) AS digest
         FROM (SELECT to_jsonb(v)::text AS x FROM ${Sql.qualified(database.schema, view)} v) s`,
    )
    out[view] = `${row?.n} rows ${row?.digest}`
  }
  return out
}

// Every backend: newer-wins is the loader's SQL.
describe.each(await backends())("newer wins on $name", (backend) => {
  let files: { a: Awaited<ReturnType<typeof readFile>>; b: Awaited<ReturnType<typeof readFile>> }
  let first: Db
  let second: Db
  /** The first schema after A, B and the replay of A: what B left (the first test checks it). */
  let replayed: Record<string, string> | undefined
  const target = (database: Db) =>
    database.url === undefined
      ? ["--pglite-dir", database.pgliteDir ?? "", "--schema", database.schema]
      : ["--database-url", database.url, "--schema", database.schema]
  /** `salesintel-pg <command>` on `database` (PGlite's files are one process's at a time). */
  const pg = async (database: Db, command: string, stdin?: string) => {
    await database.suspend()
    try {
      const ended = await runInProcess("salesintel-pg", [command, ...target(database)], { stdin })
      expect(ended.code, ended.stderr).toBe(0)
      return ended.stdout
    } finally {
      await database.resume()
    }
  }

  beforeAll(async () => {
    await setGeneration(0)
    const a = await readFile(sandbox.key(), [], now - 40 * day)
    await setGeneration(1)
    const b = await readFile(sandbox.key(), a.state, now - 5 * day)
    files = { a, b }
    first = await open(backend, "newer wins")
    second = await open(backend, "newer wins reversed")
  })
  afterAll(async () => {
    await setGeneration(0)
    await first?.close()
    await second?.close()
  })

  it(
    "an older file replayed after a newer one changes nothing, and the next read buys nothing",
    slow,
    async () => {
      const { a, b } = files
      // The files mean something: B bought everything again, and the provider had moved on.
      expect(a.records).toBeGreaterThan(200)
      expect(b.records).toBe(a.records)
      await pg(first, "load", a.text)
      await pg(first, "load", b.text)
      const afterB = { rows: await snapshot(first, digested), changes: await changes(first) }
      expect(Number(afterB.changes.technology_changes?.split(" ")[0])).toBeGreaterThan(0)
      expect(Number(afterB.changes.job_changes?.split(" ")[0])).toBeGreaterThan(0)
      await pg(first, "load", a.text)
      replayed = await snapshot(first, digested)
      expect({ rows: replayed, changes: await changes(first) }).toEqual(afterB)
      // The next read, today, from the state the database gives: all of it was bought 5 days ago.
      const key = sandbox.key()
      const saved: unknown = JSON.parse(await pg(first, "state"))
      expect(StreamState.decode(saved)._tag).toBe("Right")
      const next = await readFile(key, saved, now)
      expect({ records: next.records, credits: sandbox.charged(key) }).toEqual({ records: 0, credits: 0 })
      await pg(first, "load", next.text)
      expect((await snapshot(first, digested)).companies).toBe(afterB.rows.companies)
      expect(await changes(first)).toEqual(afterB.changes)
    },
  )

  it("loads in any order end equal: B then A is A, B, A", slow, async () => {
    const { a, b } = files
    await pg(second, "load", b.text)
    await pg(second, "load", a.text)
    const reversed = await snapshot(second, digested)
    if (replayed === undefined) throw new Error("the first test did not run")
    expect(reversed).toEqual(replayed)
    // What the log says is the same whatever the order; the change tables compare a record only
    // with an older row: A, loaded after B, is logged as an observation, not compared.
    expect(await logViews(second)).toEqual(await logViews(first))
    const counted = await changes(second)
    expect([counted.technology_changes, counted.job_changes].map((line) => line?.split(" ")[0])).toEqual([
      "0",
      "0",
    ])
    await pg(second, "load", b.text)
    expect(await snapshot(second, digested)).toEqual(reversed)
  })
})
