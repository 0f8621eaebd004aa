/**
 * The Airbyte source against the sandbox over real HTTP on 127.0.0.1: every command, every
 * message validated against the official protocol schema, incremental reruns that spend nothing,
 * the budget (never exceeded, and equal to the sandbox's own count), a search past the 10,000-record
 * paging depth read whole through partitions, the error paths (401, 403, 402) and a flaky provider.
 */
import { mkdtempSync, rmSync, writeFileSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { Message, Streams } from "@salesintel/airbyte"
import { Commands } from "@salesintel/source"
import * as Effect from "effect/Effect"
import * as Either from "effect/Either"
import * as Stream from "effect/Stream"
import { beforeEach, describe, expect, it } from "vitest"
import { messageProblems } from "../packages/airbyte/src/testing/AirbyteSchema.ts"
import { boughtIds } from "../packages/source/src/testing/BoughtIds.ts"
import { runInProcess } from "./bins.ts"
import { fastPace, sandboxForFile } from "./sandbox.ts"

// 88,000 contacts: IT (10,540) is just past the 10,000-deep paging limit, so it needs partitions.
const sandbox = sandboxForFile({ seed: 42, contacts: 88_000, companies: 8_800 })

// Each test (and each read of a test that reads twice) asks with a key of its own: `configFor`
// takes the current one, `charged()` counts it.
let key = ""
const freshKey = () => {
  key = sandbox.key()
  return key
}
beforeEach(() => {
  freshKey()
})

const itVps = { name: "it-vps", filters: { job_departments: ["it_is"], job_levels: ["vp"] } }

const configFor = (overrides: Record<string, unknown> = {}) => ({
  api_key: key,
  base_url: sandbox.url,
  credit_budget: 100_000,
  requests_per_minute: fastPace,
  // Keep retries quick: the sandbox's faults are passing by construction.
  retry: { initial_delay_ms: 5, max_delay_ms: 50 },
  ...overrides,
})

const catalogOf = (streams: Record<string, "full_refresh" | "incremental">) => ({
  streams: Object.entries(streams).map(([name, mode]) => ({
    stream: { name },
    sync_mode: mode,
    destination_sync_mode: mode === "incremental" ? "append_dedup" : "overwrite",
  })),
})

interface ReadResult {
  readonly messages: ReadonlyArray<Message.Message>
  readonly records: (stream: string) => ReadonlyArray<Record<string, unknown>>
  /** The last STATE of each stream, as a --state file holds them. */
  readonly state: ReadonlyArray<unknown>
  readonly trace: Message.TraceErrorMessage | undefined
  readonly logs: ReadonlyArray<string>
}

const read = async (config: unknown, catalog: unknown, state?: unknown): Promise<ReadResult> => {
  const chunk = await Effect.runPromise(Stream.runCollect(Commands.read({ config, catalog, state })))
  const messages = [...chunk]
  for (const message of messages) {
    expect(messageProblems(message)).toEqual([])
    // In process, every record carries the value the core decoded, by its own stream's entry, so
    // the loader never decodes it again; and that value is what decoding its data gives.
    if (message.type === "RECORD") {
      const entry: Streams.StreamEntry<unknown> | undefined = Streams.all.find(
        (candidate) => candidate.name === message.record.stream,
      )
      expect(message.decoded?.stream).toBe(entry)
      expect(message.decoded?.value).toEqual(Either.getOrThrow(entry!.decode(message.record.data)))
    }
  }
  const lastState = new Map<string, unknown>()
  for (const message of messages)
    if (message.type === "STATE") lastState.set(message.state.stream.stream_descriptor.name, message.state)
  return {
    messages,
    records: (stream) =>
      messages.flatMap((m) => (m.type === "RECORD" && m.record.stream === stream ? [m.record.data] : [])),
    state: [...lastState.values()],
    trace: messages.find(Message.isTraceError),
    logs: messages.flatMap((m) => (m.type === "LOG" ? [m.log.message] : [])),
  }
}

const charged = (of = key) => sandbox.charged(of)
const matchIds = (records: ReadonlyArray<Record<string, unknown>>) => records.map((r) => String(r.match_id))

describe("source-salesintel against the sandbox", () => {
  it("spec, check and discover through the bin: protocol lines only on stdout", async () => {
    const dir = mkdtempSync(join(tmpdir(), "source-"))
    // The bin's whole program, in process (a real process's exit code: command-line.process.test.ts).
    const run = async (args: ReadonlyArray<string>) => {
      const ended = await runInProcess("source-salesintel", args)
      const lines = ended.stdout.split("\n").filter((line) => line.length > 0)
      const messages = lines.map((line) => JSON.parse(line) as Message.Message)
      for (const message of messages) expect(messageProblems(message)).toEqual([])
      return { status: ended.code, messages }
    }
    const write = (name: string, value: unknown) => {
      const path = join(dir, name)
      writeFileSync(path, JSON.stringify(value))
      return path
    }

    expect((await run(["spec"])).messages.map((m) => m.type)).toEqual(["SPEC"])

    const good = await run([
      "check",
      "--config",
      write("good.json", configFor({ taxonomy: { products: ["cloud"] } })),
    ])
    expect(good.status).toBe(0)
    expect(good.messages).toMatchObject([
      { type: "CONNECTION_STATUS", connectionStatus: { status: "SUCCEEDED" } },
    ])

    for (const key of ["sandbox-no-access", "not-a-key-at-all"]) {
      const failed = await run(["check", "--config", write(`${key}.json`, configFor({ api_key: key }))])
      expect(failed.messages).toMatchObject([
        { type: "CONNECTION_STATUS", connectionStatus: { status: "FAILED" } },
      ])
      expect(JSON.stringify(failed.messages)).not.toContain(key === "not-a-key-at-all" ? key : "x-never")
    }

    const discover = await run(["discover", "--config", write("d.json", configFor())])
    expect(discover.messages.map((m) => m.type)).toEqual(["CATALOG"])

    const bad = await run([
      "read",
      "--config",
      write("bad.json", { api_key: "k" }),
      "--catalog",
      write("c.json", {}),
    ])
    expect(bad.status).toBe(1)
    expect(bad.messages).toMatchObject([
      { type: "TRACE", trace: { error: { failure_type: "config_error" } } },
    ])
    rmSync(dir, { recursive: true, force: true })
  })

  it("reads every stream, and an incremental rerun with its state spends zero credits", async () => {
    const config = configFor({
      credit_budget: 5_000,
      contacts: { searches: [itVps], refresh_after_days: 30 },
      companies: { domains: [sandbox.dataset.companies[0]!.domain, sandbox.dataset.companies[1]!.domain] },
      taxonomy: { products: ["cloud"], vendors: ["micro"] },
    })
    const catalog = catalogOf({
      taxonomy_categories: "full_refresh",
      taxonomy_products: "full_refresh",
      contacts: "incremental",
      companies: "incremental",
    })
    const first = await read(config, catalog)
    expect(first.trace).toBeUndefined()
    const expected = await sandbox.previewCount({ job_departments: "it_is", job_levels: "vp" })
    const contacts = first.records("contacts")
    expect(new Set(matchIds(contacts)).size).toBe(expected)
    expect(contacts).toHaveLength(expected)
    expect(first.records("companies").length).toBeGreaterThanOrEqual(2)
    expect(first.records("taxonomy_categories").length).toBeGreaterThan(0)
    expect(first.records("taxonomy_products").length).toBeGreaterThan(0)
    const spent = charged()
    expect(spent).toBe(contacts.length + first.records("companies").length)
    expect(first.logs.at(-1)).toContain(`${spent} of 5000 credits spent`)

    const second = await read({ ...config, api_key: freshKey() }, catalog, first.state)
    expect(second.trace).toBeUndefined()
    expect(second.records("contacts")).toHaveLength(0)
    expect(second.records("companies")).toHaveLength(0)
    expect(charged()).toBe(0)
  })

  it("never spends past the budget, matches the sandbox's count, and resumes without buying twice", async () => {
    const config = configFor({ credit_budget: 430, contacts: { searches: [itVps] } })
    const catalog = catalogOf({ contacts: "incremental" })
    const total = await sandbox.previewCount({ job_departments: "it_is", job_levels: "vp" })
    const first = await read(config, catalog)
    expect(first.trace).toBeUndefined()
    const firstSpent = charged()
    expect(firstSpent).toBeLessThanOrEqual(430)
    expect(firstSpent).toBe(first.records("contacts").length)
    expect(firstSpent).toBeGreaterThan(430 - 50)
    const warning = first.logs.find((log) => log.startsWith("credit budget reached"))
    expect(warning).toContain(`${total - firstSpent} records were left unread`)
    expect(warning).toContain(`needing about ${total - firstSpent} credits in all`)

    freshKey()
    const second = await read(
      configFor({ credit_budget: 5_000, contacts: { searches: [itVps] } }),
      catalog,
      first.state,
    )
    expect(charged()).toBe(total - firstSpent)
    const all = [...matchIds(first.records("contacts")), ...matchIds(second.records("contacts"))]
    expect(new Set(all).size).toBe(total)
    expect(all).toHaveLength(total)
  })

  // Two steps: the read at the default concurrency, then one page at a time in the same order.
  let partitioned: ReadonlyArray<string> = []
  it("reads a search past the 10,000-record paging depth whole through partitions", async () => {
    // The smallest search of the sandbox that needs partitions: past 10,000, so one query cannot
    // reach it whole (a search of 25,000 took twice as long to show the same).
    const total = await sandbox.previewCount({ job_departments: "it_is" })
    expect(total).toBeGreaterThan(10_000)
    const managers = { searches: [{ name: "it", filters: { job_departments: ["it_is"] } }] }
    const catalog = catalogOf({ contacts: "full_refresh" })
    const result = await read(configFor({ contacts: managers }), catalog)
    expect(result.trace).toBeUndefined()
    const ids = matchIds(result.records("contacts"))
    expect(ids).toHaveLength(total)
    expect(new Set(ids).size).toBe(total)
    expect(charged()).toBe(total)
    partitioned = ids
  })

  it("reads it in the same order at any concurrency", async () => {
    expect(partitioned.length).toBeGreaterThan(10_000)
    const managers = { searches: [{ name: "it", filters: { job_departments: ["it_is"] } }] }
    const sequential = await read(
      configFor({ contacts: managers, concurrency: 1 }),
      catalogOf({ contacts: "full_refresh" }),
    )
    expect(matchIds(sequential.records("contacts"))).toEqual(partitioned)
  })

  it("fails a bad key with a config_error, and never prints it", async () => {
    const key = "sk-this-key-does-not-exist"
    const result = await read(
      configFor({ api_key: key, contacts: { searches: [itVps] } }),
      catalogOf({ contacts: "incremental" }),
    )
    expect(result.trace?.trace.error.failure_type).toBe("config_error")
    expect(result.trace?.trace.error.message).toContain("HTTP 401")
    expect(JSON.stringify(result.messages)).not.toContain(key)
  })

  it("names the tech add-on on a 403", async () => {
    const search = { name: "crm-users", filters: { tech_category: ["Sales"] } }
    const result = await read(
      configFor({ api_key: "sandbox-no-tech", contacts: { searches: [search] } }),
      catalogOf({ contacts: "incremental" }),
    )
    expect(result.trace?.trace.error.failure_type).toBe("config_error")
    expect(result.trace?.trace.error.message).toContain("technology add-on")
  })

  it("on a 402 mid-run, checkpoints what was emitted; the next read buys nothing twice", async () => {
    // A key of 100 credits, as the sandbox's sandbox-low-credit: it runs out mid-read.
    const lowCredit = sandbox.key(100)
    const catalog = catalogOf({ contacts: "incremental" })
    const first = await read(configFor({ api_key: lowCredit, contacts: { searches: [itVps] } }), catalog)
    expect(first.trace?.trace.error.message).toContain("HTTP 402")
    const bought = matchIds(first.records("contacts"))
    expect(bought.length).toBe(charged(lowCredit))
    expect(bought.length).toBeGreaterThan(0)
    // The last message before the failure is the state covering every record emitted.
    // (After it: the stream's INCOMPLETE status, then the TRACE error.)
    const beforeTrace = first.messages.at(-3)
    expect(first.messages.at(-2)).toMatchObject({ trace: { stream_status: { status: "INCOMPLETE" } } })
    expect(beforeTrace?.type).toBe("STATE")
    const known = boughtIds((beforeTrace as Message.StateMessage).state.stream.stream_state?.known)
    expect(known).toEqual(new Set(bought))

    // The read's own summary (what `salesintel sync` records) counts what the failed read spent.
    const lowCreditAgain = sandbox.key(100)
    const prepared = Either.getOrThrow(
      Commands.prepareRead({
        config: configFor({ api_key: lowCreditAgain, contacts: { searches: [itVps] } }),
        catalog,
      }),
    )
    const items = await Effect.runPromise(
      Stream.runCollect(prepared.read.items).pipe(Effect.provide(Commands.layerFor(prepared.config))),
    )
    // The read's last item is its summary, made from what the streams yielded.
    const last = [...items].at(-1)
    const summary = last?._tag === "Summary" ? last.summary : undefined
    expect(summary?.failure?.failureType).toBe("config_error")
    expect(summary?.creditsSpent).toBe(charged(lowCreditAgain))
    expect(summary?.streams[0]?.pages).toBeGreaterThan(0)
    freshKey()

    const second = await read(configFor({ contacts: { searches: [itVps] } }), catalog, first.state)
    expect(second.trace).toBeUndefined()
    const total = await sandbox.previewCount({ job_departments: "it_is", job_levels: "vp" })
    expect(charged()).toBe(total - bought.length)
    expect(new Set([...bought, ...matchIds(second.records("contacts"))]).size).toBe(total)
  })

  it("ends a read of a flaky provider with exactly the records of a clean run", async () => {
    const config = configFor({ contacts: { searches: [itVps] } })
    const catalog = catalogOf({ contacts: "full_refresh" })
    const clean = await read(config, catalog)
    const flakyKey = freshKey()
    sandbox.setFaults(
      { error_rate: 0.1, rate_limit_rate: 0.05, retry_after_s: 0, drop_rate: 0.05, truncate_rate: 0.05 },
      flakyKey,
    )
    const flaky = await read({ ...config, api_key: flakyKey }, catalog)
    expect(flaky.trace).toBeUndefined()
    expect(matchIds(flaky.records("contacts"))).toEqual(matchIds(clean.records("contacts")))
    expect(charged()).toBe(clean.records("contacts").length)
    const statuses = Object.keys(sandbox.requests(flakyKey)["people.search"] ?? {})
    expect(statuses).toEqual(expect.arrayContaining(["200", "500"]))
  })

  it("enriches emails: one record per match, and counts the emails that matched nothing", async () => {
    const emails = [0, 1, 2].map((index) => sandbox.dataset.contact(index * 997).email)
    const config = configFor({ contacts: { emails: [...emails, "nobody@nowhere.invalid"] } })
    const result = await read(config, catalogOf({ contacts: "incremental" }))
    expect(result.trace).toBeUndefined()
    const found = result.records("contacts").map((r) => String(r.email))
    for (const email of emails) expect(found).toContain(email)
    expect(
      result.logs.some((log) =>
        log.includes("1 matched no one (nobody@nowhere.invalid; nothing was charged"),
      ),
    ).toBe(true)
    expect(charged()).toBe(result.records("contacts").length)
  })

  it("crawls the whole product taxonomy by letter and digit, each product once, for free", async () => {
    const result = await read(
      configFor({ taxonomy: { full_crawl: true } }),
      catalogOf({ taxonomy_categories: "full_refresh", taxonomy_products: "full_refresh" }),
    )
    expect(result.trace).toBeUndefined()
    const products = result
      .records("taxonomy_products")
      .map((r) => `${String(r.product)}|${String(r.vendor)}`)
    expect(new Set(products).size).toBe(products.length)
    const expected = sandbox.dataset.taxonomy.products.map((p) => `${p.product}|${p.vendor}`)
    expect(new Set(products)).toEqual(new Set(expected))
    expect(result.records("taxonomy_categories").map((r) => r.category)).toEqual(
      expect.arrayContaining(["Marketing", "Sales"]),
    )
    expect(charged()).toBe(0)
    const requests = sandbox.requests(key)["taxonomy.products"]?.["200"] ?? 0
    expect(requests).toBeGreaterThanOrEqual(36)
  })

  it("keeps requests under the configured rate, so the provider never answers 429", async () => {
    sandbox.setFaults({ requests_per_minute: 600 }, key)
    const started = Date.now()
    const result = await read(
      configFor({ requests_per_minute: 600, contacts: { searches: [itVps] } }),
      catalogOf({ contacts: "full_refresh" }),
    )
    expect(result.trace).toBeUndefined()
    const requests = sandbox.requests(key)
    const statuses = Object.values(requests).flatMap((byStatus) => Object.keys(byStatus))
    expect(statuses).not.toContain("429")
    const count = Object.values(requests).reduce((sum, byStatus) => sum + (byStatus["200"] ?? 0), 0)
    // 600 a minute is 9 a second after the limiter's headroom: the read cannot be faster than that.
    expect(Date.now() - started).toBeGreaterThanOrEqual(((count - 9) / 10) * 1000)
  })
})
