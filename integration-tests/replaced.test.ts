/**
 * A read never ends in a way that lets a destination drop what was paid for. The source's `read`
 * (in process, arguments in, output and exit code out) against the sandbox, credits as it counts
 * them. A stream whose destination replaces its table (a full refresh into `overwrite`, or a
 * refresh deleting the earlier generations) and that the budget cannot finish is refused before
 * its first credit; one cut anyway (a stop, the account's 402) fails the read after its STATEs and
 * INCOMPLETE; a selected stream with nothing configured is refused there and warned of under
 * append; incremental reads into append_dedup stop at the budget with exit 0 and resume exactly.
 *
 * 6,000 contacts; the managers (about 1,500) are the search. Each test buys with a key of its own.
 */
import { mkdtempSync, rmSync, writeFileSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import type { Message } from "@salesintel/airbyte"
import { Commands } from "@salesintel/source"
import * as Deferred from "effect/Deferred"
import * as Effect from "effect/Effect"
import * as Stream from "effect/Stream"
import { afterAll, describe, expect, it } from "vitest"
import { messageProblems } from "../packages/airbyte/src/testing/AirbyteSchema.ts"
import { runInProcess } from "./bins.ts"
import { fastPace, sandboxForFile } from "./sandbox.ts"

const sandbox = sandboxForFile({ seed: 7, contacts: 6_000, companies: 600 })
const dir = mkdtempSync(join(tmpdir(), "salesintel-replaced-"))
afterAll(() => rmSync(dir, { recursive: true, force: true }))

const managers = { name: "managers", filters: { job_levels: ["mgr"] } }

const configFor = (key: string, overrides: Record<string, unknown> = {}) => ({
  api_key: key,
  base_url: sandbox.url,
  credit_budget: 100_000,
  requests_per_minute: fastPace,
  contacts: { searches: [managers] },
  ...overrides,
})

type Entry = {
  readonly name: string
  readonly sync: "full_refresh" | "incremental"
  readonly destination: string
  readonly generation?: { readonly id: number; readonly minimum: number }
}

const catalogOf = (...entries: ReadonlyArray<Entry>) => ({
  streams: entries.map((entry) => ({
    stream: { name: entry.name, json_schema: {}, supported_sync_modes: ["full_refresh", "incremental"] },
    sync_mode: entry.sync,
    destination_sync_mode: entry.destination,
    ...(entry.generation === undefined
      ? {}
      : { generation_id: entry.generation.id, minimum_generation_id: entry.generation.minimum, sync_id: 1 }),
  })),
})

let files = 0
const file = (value: unknown) => {
  files += 1
  const path = join(dir, `${files}.json`)
  writeFileSync(path, JSON.stringify(value))
  return path
}

/** `source-salesintel read`, in process: its messages (each valid) and exit code. */
const read = async (config: unknown, catalog: unknown, state?: unknown) => {
  const args = ["read", "--config", file(config), "--catalog", file(catalog)]
  const ended = await runInProcess(
    "source-salesintel",
    state === undefined ? args : [...args, "--state", file(state)],
  )
  const messages = ended.stdout
    .split("\n")
    .filter((line) => line.length > 0)
    .map((line) => JSON.parse(line) as Message.Message)
  for (const message of messages) expect(messageProblems(message)).toEqual([])
  return { code: ended.code, ...viewsOf(messages) }
}

const viewsOf = (messages: ReadonlyArray<Message.Message>) => ({
  messages,
  records: (stream: string) =>
    messages.flatMap((m) => (m.type === "RECORD" && m.record.stream === stream ? [m.record.data] : [])),
  /** The last STATE of each stream: what a destination hands the next read. */
  states: [
    ...new Map(
      messages.flatMap((m) =>
        m.type === "STATE" && m.state.type === "STREAM"
          ? [[m.state.stream.stream_descriptor.name, m.state] as const]
          : [],
      ),
    ).values(),
  ],
  statuses: (stream: string) =>
    messages.flatMap((m) =>
      m.type === "TRACE" &&
      m.trace.type === "STREAM_STATUS" &&
      m.trace.stream_status.stream_descriptor.name === stream
        ? [m.trace.stream_status.status]
        : [],
    ),
  errors: messages.flatMap((m) => (m.type === "TRACE" && m.trace.type === "ERROR" ? [m.trace.error] : [])),
  logs: (level: string) =>
    messages.flatMap((m) => (m.type === "LOG" && m.log.level === level ? [m.log.message] : [])),
})

const ids = (records: ReadonlyArray<unknown>) =>
  records.map((r) => String((r as { match_id: unknown }).match_id))

/** The managers' count, as the provider's free preview gives it. */
const managersCount = () => sandbox.previewCount({ job_levels: "mgr" })

const slow = { timeout: 120_000 }

describe("a stream whose destination replaces its table, and a budget that cannot finish it", () => {
  it.each([
    ["full_refresh | overwrite", { name: "contacts", sync: "full_refresh", destination: "overwrite" }],
    [
      "a refresh deleting the earlier generations",
      {
        name: "contacts",
        sync: "incremental",
        destination: "append_dedup",
        generation: { id: 3, minimum: 3 },
      },
    ],
  ] satisfies ReadonlyArray<readonly [string, Entry]>)(
    "%s: refused before the first credit, with the plan's figure and what to do",
    slow,
    async (_, entry) => {
      const key = sandbox.key()
      const total = await managersCount()
      const result = await read(configFor(key, { credit_budget: 300 }), catalogOf(entry))
      expect(result.code).toBe(1)
      expect(sandbox.charged(key)).toBe(0)
      expect(result.records("contacts")).toEqual([])
      expect(result.errors).toHaveLength(1)
      expect(result.errors[0]?.failure_type).toBe("config_error")
      const text = result.errors[0]?.message ?? ""
      expect(text).toContain("within credit_budget 300: contacts")
      expect(text).toContain(`it buys 300 and leaves ${total - 300} records unread`)
      // What it spends and leaves, and a page (reserved whole before it is bought).
      expect(text).toContain(`Raise credit_budget to ${total + 50}`)
      expect(text).toContain("incremental | append_dedup")
      expect(text).toContain("Nothing was bought")
    },
  )

  it(
    "a budget that covers the plan: the overwrite read runs to its end, COMPLETE, exit 0",
    slow,
    async () => {
      const key = sandbox.key()
      const total = await managersCount()
      const entry: Entry = { name: "contacts", sync: "full_refresh", destination: "overwrite" }
      // What the refusal asks for: every match, and a page (a page is reserved whole before it is bought).
      const result = await read(configFor(key, { credit_budget: total + 50 }), catalogOf(entry))
      expect(result.code).toBe(0)
      expect(result.errors).toEqual([])
      expect(new Set(ids(result.records("contacts"))).size).toBe(total)
      expect(sandbox.charged(key)).toBe(total)
      expect(result.statuses("contacts").at(-1)).toBe("COMPLETE")
    },
  )

  it(
    "incremental | append_dedup under the same budget: exit 0, INCOMPLETE, state saved; the next read buys exactly the rest",
    slow,
    async () => {
      const key = sandbox.key()
      const total = await managersCount()
      const entry: Entry = { name: "contacts", sync: "incremental", destination: "append_dedup" }
      const first = await read(configFor(key, { credit_budget: 300 }), catalogOf(entry))
      expect(first.code).toBe(0)
      expect(first.errors).toEqual([])
      expect(first.statuses("contacts").at(-1)).toBe("INCOMPLETE")
      expect(first.logs("WARN").some((line) => line.includes("credit budget"))).toBe(true)
      expect(sandbox.charged(key)).toBe(300)
      expect(first.states.length).toBeGreaterThan(0)
      const second = await read(configFor(key), catalogOf(entry), first.states)
      expect(second.code).toBe(0)
      expect(sandbox.charged(key)).toBe(total)
      const all = [...ids(first.records("contacts")), ...ids(second.records("contacts"))]
      expect(all).toHaveLength(total)
      expect(new Set(all).size).toBe(total)
    },
  )

  it(
    "incremental | overwrite (PyAirbyte's catalog; its caches merge by key) is not refused: exit 0 at the budget",
    slow,
    async () => {
      const key = sandbox.key()
      const entry: Entry = { name: "contacts", sync: "incremental", destination: "overwrite" }
      const result = await read(configFor(key, { credit_budget: 300 }), catalogOf(entry))
      expect(result.code).toBe(0)
      expect(sandbox.charged(key)).toBe(300)
      expect(result.statuses("contacts").at(-1)).toBe("INCOMPLETE")
    },
  )
})

describe("a stream the destination replaces, cut anyway", () => {
  it("the account's 402 mid-read: exit 1 after its STATEs and INCOMPLETE", slow, async () => {
    const key = sandbox.key(250)
    const entry: Entry = { name: "contacts", sync: "full_refresh", destination: "overwrite" }
    const result = await read(configFor(key, { credit_budget: 100_000 }), catalogOf(entry))
    expect(result.code).toBe(1)
    expect(result.statuses("contacts").at(-1)).toBe("INCOMPLETE")
    expect(result.records("contacts").length).toBe(sandbox.charged(key))
    const types = result.messages.map((m) => m.type)
    expect(types.lastIndexOf("STATE")).toBeGreaterThan(types.lastIndexOf("RECORD"))
    expect(types.at(-1)).toBe("TRACE")
  })

  it(
    "a stop request: every page in flight landed and checkpointed, then a TRACE error (exit 1), not a success",
    slow,
    async () => {
      const key = sandbox.key()
      const stop = Effect.runSync(Deferred.make<void>())
      const entry: Entry = { name: "contacts", sync: "full_refresh", destination: "overwrite" }
      const messages: Array<Message.Message> = []
      await Effect.runPromise(
        Stream.runForEach(
          Commands.read({
            config: configFor(key, { concurrency: 2 }),
            catalog: catalogOf(entry),
            stopWhen: Deferred.await(stop),
          }),
          (message) =>
            Effect.sync(() => {
              messages.push(message)
              if (message.type === "RECORD" && messages.length === 150) Deferred.unsafeDone(stop, Effect.void)
            }),
        ),
      )
      const result = viewsOf(messages)
      expect(result.records("contacts").length).toBe(sandbox.charged(key))
      expect(result.records("contacts").length).toBeLessThan(await managersCount())
      expect(result.statuses("contacts").at(-1)).toBe("INCOMPLETE")
      expect(result.errors).toHaveLength(1)
      expect(result.errors[0]?.failure_type).toBe("transient_error")
      expect(result.errors[0]?.message).toContain(
        "stopped on request before contacts (full_refresh | overwrite)",
      )
      const types = messages.map((m) => m.type)
      expect(types.lastIndexOf("STATE")).toBeGreaterThan(types.lastIndexOf("RECORD"))
    },
  )
})

describe("a selected stream with nothing configured", () => {
  it("under overwrite: refused before any credit, naming what to configure", slow, async () => {
    const key = sandbox.key()
    const result = await read(
      configFor(key),
      catalogOf(
        { name: "contacts", sync: "incremental", destination: "append_dedup" },
        { name: "taxonomy_categories", sync: "full_refresh", destination: "overwrite" },
      ),
    )
    expect(result.code).toBe(1)
    expect(sandbox.charged(key)).toBe(0)
    expect(result.records("contacts")).toEqual([])
    expect(result.errors[0]?.message).toContain(
      "invalid catalog at streams[1]: stream taxonomy_categories is selected as full_refresh | overwrite",
    )
    expect(result.errors[0]?.message).toContain("nothing is configured for it (taxonomy)")
  })

  it("under append: a WARN, the stream COMPLETE with no record, the rest read", slow, async () => {
    const key = sandbox.key()
    const total = await managersCount()
    const result = await read(
      configFor(key),
      catalogOf(
        { name: "contacts", sync: "incremental", destination: "append_dedup" },
        { name: "companies", sync: "incremental", destination: "append_dedup" },
      ),
    )
    expect(result.code).toBe(0)
    expect(result.records("contacts")).toHaveLength(total)
    expect(result.records("companies")).toEqual([])
    expect(result.statuses("companies")).toEqual(["STARTED", "COMPLETE"])
    expect(result.logs("WARN")).toContain(
      "stream companies: selected, but nothing is configured for it (companies.domains, companies.names, companies.domains_file, companies.domains_query or companies.from_contacts): it sends no record",
    )
  })
})
