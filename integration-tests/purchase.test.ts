/**
 * The purchase engine against the sandbox over real HTTP: credits counted as the provider counts
 * them (timeouts under latency jitter never push its charges past the budget), one bought set for
 * searches and emails, exact reservations under a small budget, state files checked, STREAM_STATUS
 * per stream, a graceful stop that lands and checkpoints the pages in flight, and a closed pipe
 * that stops the buying at once.
 *
 * 40,000 contacts: the managers (10,376) still pass the 10,000-deep paging limit, so that a stop
 * leaves parts not begun, and resuming reads no more than that. Each read has a key of its own.
 */
import { spawn } from "node:child_process"
import { mkdtempSync, rmSync, writeFileSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { Message } from "@salesintel/airbyte"
import { Commands, type Read } from "@salesintel/source"
import * as Deferred from "effect/Deferred"
import * as Effect from "effect/Effect"
import * as Either from "effect/Either"
import * as Stream from "effect/Stream"
import { describe, expect, it } from "vitest"
import { messageProblems } from "../packages/airbyte/src/testing/AirbyteSchema.ts"
import { fastPace, sandboxForFile } from "./sandbox.ts"

const sandbox = sandboxForFile({ seed: 42, contacts: 40_000, companies: 4_000 })

const itVps = { name: "it-vps", filters: { job_departments: ["it_is"], job_levels: ["vp"] } }
const managers = { name: "managers", filters: { job_levels: ["mgr"] } }

/** A config of `key`, at the tests' pace unless `overrides` set another. */
const configFor = (key: string, overrides: Record<string, unknown> = {}) => ({
  api_key: key,
  base_url: sandbox.url,
  credit_budget: 100_000,
  requests_per_minute: fastPace,
  retry: { initial_delay_ms: 5, max_delay_ms: 50 },
  ...overrides,
})

/**
 * Full refreshes into `append` (the platform's "Full refresh | Append"): the stops and budgets
 * these tests cut them with are the engine's to survive; into `overwrite` the source refuses a
 * budget that cannot finish them, and fails a read that ends them unfinished (replaced.test.ts).
 */
const catalogOf = (streams: Record<string, "full_refresh" | "incremental">) => ({
  streams: Object.entries(streams).map(([name, mode]) => ({
    stream: { name },
    sync_mode: mode,
    destination_sync_mode: mode === "incremental" ? "append_dedup" : "append",
  })),
})

const sleep = (millis: number) => new Promise((resolve) => setTimeout(resolve, millis))

/** Runs a read in process; every message is checked against the official protocol schema. */
const read = async (inputs: Commands.ReadInputs) => {
  const prepared = Either.getOrThrow(Commands.prepareRead(inputs))
  const items = await Effect.runPromise(
    Stream.runCollect(prepared.read.items).pipe(Effect.provide(Commands.layerFor(prepared.config))),
  )
  const messages = [...items].flatMap((item) => (item._tag === "Message" ? [item.message] : []))
  for (const message of messages) expect(messageProblems(message)).toEqual([])
  return { messages, summary: summaryOf(items), ...views(messages) }
}

/** The read's summary: its last item. */
const summaryOf = (items: Iterable<Read.Item>): Read.ReadSummary => {
  const last = [...items].at(-1)
  if (last?._tag !== "Summary") throw new Error("the read did not end with its summary")
  return last.summary
}

const views = (messages: ReadonlyArray<Message.Message>) => {
  const lastState = new Map<string, unknown>()
  for (const message of messages)
    if (message.type === "STATE") lastState.set(message.state.stream.stream_descriptor.name, message.state)
  return {
    records: (stream: string) =>
      messages.flatMap((m) => (m.type === "RECORD" && m.record.stream === stream ? [m.record.data] : [])),
    statuses: (stream: string) =>
      messages.flatMap((m) =>
        m.type === "TRACE" &&
        m.trace.type === "STREAM_STATUS" &&
        m.trace.stream_status.stream_descriptor.name === stream
          ? [m.trace.stream_status.status]
          : [],
      ),
    state: [...lastState.values()],
    trace: messages.find(Message.isTraceError),
    logs: messages.flatMap((m) => (m.type === "LOG" ? [m.log.message] : [])),
  }
}

const ids = (records: ReadonlyArray<Record<string, unknown>>) => records.map((r) => String(r.match_id))

describe("the purchase engine against the sandbox", () => {
  it("timeouts under latency jitter with a small budget never push the provider's charges past it", async () => {
    // Answers take 0-600 ms; credited requests give up after 150 ms, so many outcomes are unknown.
    const key = sandbox.key()
    sandbox.setFaults({ latency_ms: 0, jitter_ms: 600 }, key)
    const budget = 300
    const result = await read({
      config: configFor(key, {
        credit_budget: budget,
        credited_timeout_ms: 150,
        page_size: 25,
        contacts: { searches: [managers] },
      }),
      catalog: catalogOf({ contacts: "full_refresh" }),
    })
    await sleep(800) // every answer the provider was still preparing is charged by now
    const providerCharged = sandbox.charged(key)
    expect(providerCharged).toBeLessThanOrEqual(budget)
    // Our count is never below the provider's: what may have been charged is counted as spent.
    expect(result.summary.creditsSpent).toBeGreaterThanOrEqual(providerCharged)
    expect(result.summary.creditsSpent).toBeLessThanOrEqual(budget)
    expect(result.summary.creditsSpent - result.summary.creditsUncertain).toBe(
      result.records("contacts").length,
    )
    expect(result.logs.at(-1)).toContain(`${result.summary.creditsUncertain} of them possibly charged`)
  }, 60_000)

  it("an email a search already bought costs nothing more, and keeps its search", async () => {
    const catalog = catalogOf({ contacts: "incremental" })
    const first = await read({
      config: configFor(sandbox.key(), { contacts: { searches: [itVps] } }),
      catalog,
    })
    const bought = first.records("contacts")
    expect(bought.length).toBeGreaterThan(3)
    const emails = bought.slice(0, 3).map((record) => String(record.email))

    const secondKey = sandbox.key()
    const second = await read({
      config: configFor(secondKey, { contacts: { searches: [itVps], emails } }),
      catalog,
      state: first.state,
    })
    expect(second.trace).toBeUndefined()
    expect(second.records("contacts")).toHaveLength(0)
    expect(sandbox.charged(secondKey)).toBe(0)

    // The same in one run: the search buys them, the emails find them bought.
    const togetherKey = sandbox.key()
    const together = await read({
      config: configFor(togetherKey, { contacts: { searches: [itVps], emails } }),
      catalog,
    })
    expect(new Set(ids(together.records("contacts"))).size).toBe(together.records("contacts").length)
    expect(sandbox.charged(togetherKey)).toBe(bought.length)
    for (const record of together.records("contacts")) expect(record._salesintel_search).toBe("it-vps")
  })

  it("a budget smaller than page_size buys what it can, and says how much is left", async () => {
    const domains = sandbox.dataset.companies.slice(0, 30).map((company) => company.domain)
    const companiesKey = sandbox.key()
    const companies = await read({
      config: configFor(companiesKey, { credit_budget: 10, companies: { domains } }),
      catalog: catalogOf({ companies: "incremental" }),
    })
    expect(sandbox.charged(companiesKey)).toBe(10)
    expect(companies.records("companies")).toHaveLength(10)
    const warning = companies.logs.find((log) => log.startsWith("credit budget reached"))
    expect(warning).toContain("0 unspent")
    expect(warning).toContain("20 records were left unread")
    expect(companies.statuses("companies")).toEqual(["STARTED", "RUNNING", "INCOMPLETE"])

    const contactsKey = sandbox.key()
    const contacts = await read({
      config: configFor(contactsKey, { credit_budget: 7, contacts: { searches: [itVps] } }),
      catalog: catalogOf({ contacts: "incremental" }),
    })
    expect(sandbox.charged(contactsKey)).toBe(7)
    expect(contacts.records("contacts")).toHaveLength(7)
  })

  it("refuses a malformed state with the path of the bad field, and buys nothing", async () => {
    const key = sandbox.key()
    const config = configFor(key, { contacts: { searches: [itVps] } })
    const catalog = catalogOf({ contacts: "incremental" })
    // Refused before any request: the read is only the TRACE error.
    const refused = async (state: unknown) =>
      views([...(await Effect.runPromise(Stream.runCollect(Commands.read({ config, catalog, state }))))])
    const legacy = await refused({ foo: 1 })
    expect(legacy.trace?.trace.error.failure_type).toBe("config_error")
    expect(legacy.trace?.trace.error.message).toContain('"foo" is not a stream')

    const misspelled = [
      { type: "STREAM", stream: { stream_descriptor: { name: "contacts" }, stream_state: { knwon: {} } } },
    ]
    const result = await read({ config, catalog, state: misspelled })
    expect(result.trace?.trace.error.message).toContain("at knwon")
    expect(result.trace?.trace.error.failure_type).toBe("config_error")
    expect(result.trace?.trace.error.message).toContain("knwon")
    expect(result.records("contacts")).toHaveLength(0)
    expect(sandbox.charged(key)).toBe(0)
  })

  it("says when each stream starts, runs and completes", async () => {
    const result = await read({
      config: configFor(sandbox.key(), {
        contacts: { searches: [itVps] },
        taxonomy: { products: ["cloud"] },
      }),
      catalog: catalogOf({
        taxonomy_categories: "full_refresh",
        contacts: "incremental",
        companies: "incremental",
      }),
    })
    expect(result.trace).toBeUndefined()
    expect(result.statuses("taxonomy_categories")).toEqual(["STARTED", "RUNNING", "COMPLETE"])
    expect(result.statuses("contacts")).toEqual(["STARTED", "RUNNING", "COMPLETE"])
    // Nothing configured: started and complete, with no record.
    expect(result.statuses("companies")).toEqual(["STARTED", "COMPLETE"])
  })

  // What the stop's step hands on to the resume's: the records it bought and the state it saved.
  let stopped:
    | { readonly records: ReadonlyArray<Record<string, unknown>>; readonly state: unknown }
    | undefined

  it("a stop request lands the pages in flight, checkpoints them, and ends INCOMPLETE", async () => {
    const key = sandbox.key()
    sandbox.setFaults({ latency_ms: 100 }, key)
    const stop = Effect.runSync(Deferred.make<void>())
    const prepared = Either.getOrThrow(
      Commands.prepareRead({
        config: configFor(key, {
          contacts: { searches: [managers] },
          companies: { domains: ["acme.com"] },
          concurrency: 4,
          // The provider's pace: the stop lands while pages are in flight at the pace a real run has.
          requests_per_minute: 1_800,
        }),
        catalog: catalogOf({
          contacts: "full_refresh",
          companies: "full_refresh",
          taxonomy_categories: "full_refresh",
        }),
        stopWhen: Deferred.await(stop),
      }),
    )
    const messages: Array<Message.Message> = []
    const items: Array<Read.Item> = []
    await Effect.runPromise(
      Stream.runForEach(prepared.read.items, (item) =>
        Effect.sync(() => {
          items.push(item)
          if (item._tag !== "Message") return
          messages.push(item.message)
          // Stop once a few pages have come in: more are in flight at that moment.
          if (item.message.type === "RECORD" && messages.length === 120)
            Deferred.unsafeDone(stop, Effect.void)
        }),
      ).pipe(Effect.provide(Commands.layerFor(prepared.config))),
    )
    for (const message of messages) expect(messageProblems(message)).toEqual([])
    const result = views(messages)
    expect(result.trace).toBeUndefined()
    const records = result.records("contacts")
    // Every credit the provider charged was delivered and emitted: the pages in flight landed.
    expect(sandbox.charged(key)).toBe(records.length)
    expect(records.length).toBeGreaterThanOrEqual(100)
    expect(records.length).toBeLessThan(1_000)
    expect(result.statuses("contacts")).toEqual(["STARTED", "RUNNING", "INCOMPLETE"])
    // The credited stream not yet begun is not started; the free one was read beside the contacts
    // (nothing configured for it here).
    expect(result.statuses("companies")).toEqual(["INCOMPLETE"])
    expect(result.statuses("taxonomy_categories")).toEqual(["STARTED", "COMPLETE"])
    const types = messages.map((m) => m.type)
    expect(types.lastIndexOf("STATE")).toBeGreaterThan(types.lastIndexOf("RECORD"))
    expect(summaryOf(items).stopped).toBe(true)
    // What was left is counted whole: the refused part's rest and the parts not begun.
    const total = await sandbox.previewCount({ job_levels: "mgr" })
    const warning = result.logs.find((log) => log.startsWith("stopped on request"))
    expect(warning).toContain(`${total - records.length} records were left unread`)
    stopped = { records, state: result.state }
  })

  // The rest after the stop, ~10,200 contacts, in two runs (the first ends at a budget), so that
  // neither step reads them all: the second goes on from the first's state.
  let resumed:
    | { readonly records: ReadonlyArray<Record<string, unknown>>; readonly state: unknown }
    | undefined

  it("the run after a stop resumes from its checkpoint: nothing is bought twice (to a budget)", async () => {
    if (stopped === undefined) throw new Error("the stop's step did not run")
    const next = await read({
      config: configFor(sandbox.key(), { credit_budget: 5_000, contacts: { searches: [managers] } }),
      catalog: catalogOf({ contacts: "full_refresh" }),
      state: stopped.state,
    })
    expect(next.records("contacts").length).toBeGreaterThan(4_000)
    expect(next.records("contacts").length).toBeLessThanOrEqual(5_000)
    const all = [...ids(stopped.records), ...ids(next.records("contacts"))]
    expect(new Set(all).size).toBe(all.length)
    resumed = { records: [...stopped.records, ...next.records("contacts")], state: next.state }
  })

  it("the run after that reads the rest: nothing is bought twice", async () => {
    if (resumed === undefined) throw new Error("the resume's step did not run")
    const next = await read({
      config: configFor(sandbox.key(), { contacts: { searches: [managers] } }),
      catalog: catalogOf({ contacts: "full_refresh" }),
      state: resumed.state,
    })
    const all = [...ids(resumed.records), ...ids(next.records("contacts"))]
    expect(new Set(all).size).toBe(all.length)
    // The three runs bought the search whole.
    expect(all).toHaveLength(await sandbox.previewCount({ job_levels: "mgr" }))
  })

  it("stops buying when the reader of its stdout goes away (EPIPE)", async () => {
    const key = sandbox.key()
    sandbox.setFaults({ latency_ms: 20 }, key)
    const dir = mkdtempSync(join(tmpdir(), "source-epipe-"))
    const write = (name: string, value: unknown) => {
      const path = join(dir, name)
      writeFileSync(path, JSON.stringify(value))
      return path
    }
    const config = write(
      "config.json",
      // The provider's pace: how soon the source sees the closed pipe is measured in pages at it.
      configFor(key, { contacts: { searches: [managers] }, requests_per_minute: 1_800 }),
    )
    const catalog = write("catalog.json", catalogOf({ contacts: "full_refresh" }))
    const bin = join(import.meta.dirname, "../packages/source/dist/bin.js")
    // The reader takes 20 kB and exits; the source's exit status is printed after it.
    const script = `"${process.execPath}" "${bin}" read --config "${config}" --catalog "${catalog}" | head -c 20000 > /dev/null; echo "source exit \${PIPESTATUS[0]}" >&2`
    const { stderr } = await new Promise<{ stderr: string }>((resolve, reject) => {
      const child = spawn("bash", ["-c", script], { stdio: ["ignore", "ignore", "pipe"] })
      let text = ""
      child.stderr.on("data", (data: Buffer) => {
        text += data.toString()
      })
      const timer = setTimeout(() => {
        child.kill("SIGKILL")
        reject(new Error(`the source did not stop: ${text}`))
      }, 60_000)
      child.on("close", () => {
        clearTimeout(timer)
        resolve({ stderr: text })
      })
    }).finally(() => rmSync(dir, { recursive: true, force: true }))
    const lines = stderr.split("\n").filter((line) => line.length > 0)
    expect(lines).toEqual([expect.stringContaining("stdout closed"), "source exit 1"])
    const atExit = sandbox.charged(key)
    await sleep(1_000)
    expect(sandbox.charged(key)).toBe(atExit)
    // 20 kB is a few dozen records: the source stopped within a few pages of them.
    expect(atExit).toBeLessThan(1_000)
  }, 90_000)
})
