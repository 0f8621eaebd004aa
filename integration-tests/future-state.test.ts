/**
 * Airbyte's connector acceptance test `test_state_with_abnormally_large_values`, replayed through
 * the real bin against the sandbox: the configured catalog's incremental streams read with a
 * state of "abnormally large values" must emit no records and at least one STATE, and exit 0. Here
 * that state is a real one (what a first read saved) with every bought set's days moved far ahead
 * (as a worker whose clock runs fast would write them) and every number it holds made huge; it is
 * read with a key of its own, whose charges are the sandbox's count.
 */
import { execFile } from "node:child_process"
import { mkdtempSync, rmSync, writeFileSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { fileURLToPath } from "node:url"
import { promisify } from "node:util"
import type { Catalog, Message } from "@salesintel/airbyte"
import { Sync } from "@salesintel/cli"
import * as Schema from "effect/Schema"
import { afterAll, describe, expect, it } from "vitest"
import { messageProblems } from "../packages/airbyte/src/testing/AirbyteSchema.ts"
import { backends, open } from "../packages/postgres/src/testing/Backends.ts"
import { DatedSetJson } from "../packages/source/src/bought/DatedSet.ts"
import { fastPace, sandboxForFile } from "./sandbox.ts"

const source = fileURLToPath(new URL("../packages/source/bin/source-salesintel.js", import.meta.url))

const sandbox = sandboxForFile({ seed: 42, contacts: 5_000, companies: 1_000 })

const directory = mkdtempSync(join(tmpdir(), "salesintel-future-state-"))
afterAll(() => rmSync(directory, { recursive: true, force: true }))
let files = 0
const fileOf = (value: unknown): string => {
  const path = join(directory, `${files++}.json`)
  writeFileSync(path, JSON.stringify(value))
  return path
}

interface Ran {
  readonly code: number
  readonly messages: ReadonlyArray<Message.Message>
}

/** The real bin, as a client runs it: files in, protocol lines out. */
const run = async (args: ReadonlyArray<string>): Promise<Ran> => {
  const { code, stdout } = await promisify(execFile)(process.execPath, [source, ...args], {
    maxBuffer: 64 * 1024 * 1024,
  }).then(
    ({ stdout }) => ({ code: 0, stdout }),
    (error: { code: number; stdout: string }) => error,
  )
  const messages = stdout
    .split("\n")
    .filter((line) => line !== "")
    .map((line) => JSON.parse(line) as Message.Message)
  for (const message of messages) expect(messageProblems(message)).toEqual([])
  return { code, messages }
}

const configFor = (key: string) => {
  const companies = sandbox.dataset.companies
  return {
    api_key: key,
    base_url: sandbox.url,
    credit_budget: 100_000,
    requests_per_minute: fastPace,
    retry: { initial_delay_ms: 5, max_delay_ms: 50 },
    contacts: { searches: [{ name: "it-vps", filters: { job_departments: ["it_is"], job_levels: ["vp"] } }] },
    companies: {
      domains: companies.slice(0, 10).map((company) => company.domain),
      names: companies.slice(10, 12).map((company) => company.name),
      from_contacts: true,
    },
  }
}

/** The acceptance test's catalog (incremental_only_catalog): the streams discovered, incremental. */
const incrementalCatalog = (streams: ReadonlyArray<Catalog.AirbyteStream>) => ({
  streams: streams
    .filter((stream) => stream.name === "contacts" || stream.name === "companies")
    .map((stream) => ({
      stream,
      sync_mode: "incremental",
      destination_sync_mode: "append_dedup",
      primary_key: stream.source_defined_primary_key,
    })),
})

/** The last STATE of each stream. */
const lastStates = (messages: ReadonlyArray<Message.Message>) => {
  const last = new Map<string, Message.JsonObject>()
  for (const message of messages)
    if (message.type === "STATE")
      last.set(message.state.stream.stream_descriptor.name, message.state.stream.stream_state ?? {})
  return last
}

const farDay = "99999"
const huge = Number.MAX_SAFE_INTEGER

/** A bought set as day -> its ids, sorted, whether a day's ids are listed or packed. */
const byDay = (json: unknown): Record<string, ReadonlyArray<string>> =>
  Object.fromEntries(
    Object.entries(Schema.decodeUnknownSync(DatedSetJson)(json)).map(([day, ids]) => [day, [...ids].sort()]),
  )

/** A set by day (`{"20419": [...]}`) with every key moved to `farDay`, or any other value as it is. */
const datedAhead = (value: unknown): unknown => {
  if (typeof value !== "object" || value === null || Array.isArray(value)) return value
  const days = Object.values(byDay(value))
  return days.length === 0 ? value : { [farDay]: days.flat() }
}

/**
 * A stream's state with every bought set dated `farDay` and a huge number wherever a number goes
 * (a full refresh's position, which an incremental read leaves behind).
 */
const abnormal = (stream: string, state: Message.JsonObject): Record<string, unknown> => ({
  ...Object.fromEntries(
    Object.entries(state).map(([field, value]) => [
      field,
      /^(known|emails|domains|names|contact_domains)$/.test(field) ? datedAhead(value) : value,
    ]),
  ),
  ...(stream === "contacts"
    ? { full_refresh: { completed: [], current: { part: "all", next_page: huge, page_size: huge } } }
    : {}),
})

describe("a state with abnormally large values (the acceptance test)", () => {
  it("exits 0, emits no record and a STATE per stream carrying it on, WARNs each path, and charges nothing", async () => {
    const discovered = await run(["discover", "--config", fileOf(configFor(sandbox.key()))])
    const offer = discovered.messages.find((m): m is Message.CatalogMessage => m.type === "CATALOG")
    expect(offer).toBeDefined()
    const catalog = fileOf(incrementalCatalog(offer?.catalog.streams ?? []))

    // A first read, for a real state: what it bought.
    const first = await run(["read", "--config", fileOf(configFor(sandbox.key())), "--catalog", catalog])
    expect(first.code).toBe(0)
    const saved = lastStates(first.messages)
    expect([...saved.keys()].sort()).toEqual(["companies", "contacts"])

    const future = new Map([...saved].map(([stream, state]) => [stream, abnormal(stream, state)]))
    const sets = { contacts: ["known"], companies: ["domains", "names", "contact_domains"] }
    // Every bought set of the first read holds keys, now all dated ahead.
    for (const [stream, fields] of Object.entries(sets))
      for (const field of fields) {
        const set = byDay(future.get(stream)?.[field])
        expect(Object.keys(set), `${stream}.${field}`).toEqual([farDay])
        expect(set[farDay]?.length, `${stream}.${field}`).toBeGreaterThan(0)
      }
    const stateFile = fileOf(
      [...future].map(([name, state]) => ({
        type: "STREAM",
        stream: { stream_descriptor: { name, namespace: null }, stream_state: state },
        // The largest whole number JSON reads exactly (one more is refused, with its path, by the
        // bins' JSON reader: it would be read as another number).
        sourceStats: { recordCount: huge },
      })),
    )

    const key = sandbox.key()
    const ran = await run([
      "read",
      "--config",
      fileOf(configFor(key)),
      "--catalog",
      catalog,
      "--state",
      stateFile,
    ])
    const error = ran.messages.find((m) => m.type === "TRACE" && m.trace.type === "ERROR")
    // Before: exit 1, "the saved state of stream contacts is not readable at known.99999: day 99999
    // (2243-10-16) is after today", and the same of companies at domains.99999.
    expect(error).toBeUndefined()
    expect(ran.code).toBe(0)
    expect(ran.messages.filter((m) => m.type === "RECORD")).toHaveLength(0)
    expect(sandbox.charged(key)).toBe(0)

    const states = ran.messages.filter((m) => m.type === "STATE")
    expect(states.length).toBeGreaterThan(0)
    const after = lastStates(ran.messages)
    // Held, and carried on as they were: a later read holds them still.
    for (const [stream, fields] of Object.entries(sets))
      for (const field of fields)
        expect(byDay(after.get(stream)?.[field]), `${stream}.${field}`).toEqual(
          byDay(future.get(stream)?.[field]),
        )
    const statuses = ran.messages.flatMap((m) =>
      m.type === "TRACE" && m.trace.type === "STREAM_STATUS"
        ? [`${m.trace.stream_status.stream_descriptor.name} ${m.trace.stream_status.status}`]
        : [],
    )
    expect(statuses).toEqual(expect.arrayContaining(["contacts COMPLETE", "companies COMPLETE"]))
    expect(statuses.filter((status) => status.endsWith("INCOMPLETE"))).toEqual([])

    const warnings = ran.messages.flatMap((m) =>
      m.type === "LOG" && m.log.level === "WARN" ? [m.log.message] : [],
    )
    const today = String.raw`after today \(\d{4}-\d{2}-\d{2}\)`
    const contactsWarning = warnings.filter((w) => w.startsWith("contacts: the saved state's"))
    expect(contactsWarning).toHaveLength(1)
    expect(contactsWarning[0]).toMatch(
      new RegExp(
        `^contacts: the saved state's known\\.99999 is dated 2243-10-16, ${today}: its \\d+ contacts are held as bought and not due until then; if the worker's clock was wrong, remove the stream's state to start it afresh$`,
      ),
    )
    const companiesWarning = warnings.filter((w) => w.startsWith("companies: the saved state's"))
    expect(companiesWarning).toHaveLength(1)
    expect(companiesWarning[0]).toMatch(
      new RegExp(
        `^companies: the saved state's domains\\.99999 is dated 2243-10-16, ${today}: its \\d+ domains are held`,
      ),
    )
    for (const path of ["names.99999", "contact_domains.99999"]) expect(companiesWarning[0]).toContain(path)

    // The next read, from the STATE this one emitted, holds them still and charges nothing.
    const again = await run([
      "read",
      "--config",
      fileOf(configFor(key)),
      "--catalog",
      catalog,
      "--state",
      fileOf(
        [...after].map(([name, state]) => ({
          type: "STREAM",
          stream: { stream_descriptor: { name }, stream_state: state },
        })),
      ),
    ])
    expect(again.code).toBe(0)
    expect(again.messages.filter((m) => m.type === "RECORD")).toHaveLength(0)
    expect(sandbox.charged(key)).toBe(0)
  }, 120_000)
})

const loaders = await backends()

describe("salesintel sync after runs whose clock was ahead", () => {
  it.each(loaders)(
    "holds what they bought, WARNs the state's paths, and charges nothing, on $name",
    async (backend) => {
      const database = await open(backend, "future state")
      try {
        const key = sandbox.key()
        const config = {
          ...configFor(key),
          contacts: { ...configFor(key).contacts, refresh_after_days: 30 },
          companies: { ...configFor(key).companies, refresh_after_days: 30 },
        }
        const lines: Array<string> = []
        const progress = {
          isTTY: false,
          write: (text: string) => lines.push(text) > 0,
        }
        // A worker whose clock ran 1,000 days fast: its rows, its ledger and its state say so.
        const ahead = Date.now() + 1_000 * 86_400_000
        const first = await database.run(
          Sync.sync({ config, schema: database.schema, progress, startedAt: ahead }),
        )
        expect(first.error).toBeUndefined()
        const bought = sandbox.charged(key)
        expect(bought).toBeGreaterThan(0)
        const [row] = await database.query(
          `SELECT min(day)::integer AS day FROM "${database.schema}"._bought WHERE stream = 'contacts'`,
        )
        expect(row?.day).toBe(Math.floor(ahead / 86_400_000))

        // The clock put right: the next sync holds everything, as bought on those days.
        lines.length = 0
        const second = await database.run(Sync.sync({ config, schema: database.schema, progress }))
        // Before: failed, "the saved state of stream companies is not readable at domains.N: day N
        // (...) is after today".
        expect(second.error).toBeUndefined()
        expect(second.status).toBe("succeeded")
        expect(second.streams.map((stream) => stream.records)).toEqual(second.streams.map(() => 0))
        expect(sandbox.charged(key)).toBe(bought)
        const warnings = lines.filter((line) => line.startsWith("WARN companies: the saved state's"))
        expect(warnings).toHaveLength(1)
        expect(warnings[0]).toMatch(/domains\.\d+ is dated \d{4}-\d{2}-\d{2}, after today/)
        expect(warnings[0]).toContain("held as bought and not due until then")
        // The contacts' set is the ledger's, dated by the rows it fetched: said the same way.
        const contactsWarnings = lines.filter((line) =>
          line.startsWith("WARN contacts: the ledger (_bought)"),
        )
        expect(contactsWarnings).toHaveLength(1)
        expect(contactsWarnings[0]).toMatch(
          /^WARN contacts: the ledger \(_bought\) dates \d+ contacts \d{4}-\d{2}-\d{2}, after today \(\d{4}-\d{2}-\d{2}\): they are held as bought and not due until then; /,
        )
      } finally {
        await database.close()
      }
    },
    120_000,
  )
})
