/**
 * The source as real Airbyte clients drive it, replayed through the real bin against the sandbox.
 * PyAirbyte (and the platform) build their files with the official pydantic protocol models, which
 * write every optional field they do not set as null; PyAirbyte configures `incremental` and
 * `overwrite` for every stream it reads, and maps each field's JSON schema to one column type.
 * Credits are the sandbox's own count.
 *
 * The shapes below are those of PyAirbyte's `get_configured_catalog` (ConfiguredAirbyteStream
 * with `sync_mode=incremental`, `destination_sync_mode=overwrite`, `primary_key` from discover,
 * dumped with `model_dump_json()`) and of its state file (`to_state_input_file_text()`: the saved
 * AirbyteStateMessage objects, each dumped with `model_dump_json()`).
 *
 * 20,000 contacts (nothing here needs a search past the 10,000-deep paging limit); each test buys
 * with a key of its own.
 */
import { execFile } from "node:child_process"
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { fileURLToPath } from "node:url"
import { promisify } from "node:util"
import type { Catalog, Message } from "@salesintel/airbyte"
import { Sync } from "@salesintel/cli"
import { Commands } from "@salesintel/source"
import * as Effect from "effect/Effect"
import * as Stream from "effect/Stream"
import { afterAll, beforeEach, describe, expect, it } from "vitest"
import { messageProblems } from "../packages/airbyte/src/testing/AirbyteSchema.ts"
import { oneBackend, open } from "../packages/postgres/src/testing/Backends.ts"
import { boughtIds } from "../packages/source/src/testing/BoughtIds.ts"
import { fastPace, sandboxForFile } from "./sandbox.ts"

const source = fileURLToPath(new URL("../packages/source/bin/source-salesintel.js", import.meta.url))

const sandbox = sandboxForFile({ seed: 42, contacts: 20_000, companies: 2_000 })

/** The test's key (a new one for each test), and what it had been charged when `since` was called. */
let key = ""
let mark = 0
beforeEach(() => {
  key = sandbox.key()
  mark = 0
})
/** What the test's key was charged since the test began, or since `since()`. */
const charged = () => sandbox.charged(key) - mark
/** The next read's charges are counted from here. */
const since = () => {
  mark = sandbox.charged(key)
}

// One backend for the SQL NULL state: what the sync makes of a saved state it cannot decode,
// whatever holds it.
const backend = await oneBackend()

const itVps = { name: "it-vps", filters: { job_departments: ["it_is"], job_levels: ["vp"] } }
const itDirectors = { name: "it-dirs", filters: { job_departments: ["it_is"], job_levels: ["dir", "vp"] } }

const configFor = (overrides: Record<string, unknown> = {}) => ({
  api_key: key,
  base_url: "",
  credit_budget: 100_000,
  requests_per_minute: fastPace,
  retry: { initial_delay_ms: 5, max_delay_ms: 50 },
  contacts: { searches: [itVps] },
  companies: { domains: sandbox.dataset.companies.slice(0, 10).map((company) => company.domain) },
  taxonomy: { products: ["cloud"] },
  ...overrides,
})

const directory = mkdtempSync(join(tmpdir(), "salesintel-conformance-"))
afterAll(() => rmSync(directory, { recursive: true, force: true }))
let files = 0
const fileOf = (value: unknown): string => {
  const path = join(directory, `${files++}.json`)
  writeFileSync(path, typeof value === "string" ? value : JSON.stringify(value))
  return path
}

interface Ran {
  readonly code: number
  readonly messages: ReadonlyArray<Message.Message>
  readonly stderr: string
}

/** The real bin, as a client runs it: files in, protocol lines out. */
const run = async (args: ReadonlyArray<string>): Promise<Ran> => {
  const { code, stdout, stderr } = await promisify(execFile)(process.execPath, [source, ...args], {
    maxBuffer: 256 * 1024 * 1024,
  }).then(
    ({ stdout, stderr }) => ({ code: 0, stdout, stderr }),
    (error: { code: number; stdout: string; stderr: string }) => error,
  )
  const messages = stdout
    .split("\n")
    .filter((line) => line !== "")
    .map((line) => JSON.parse(line) as Message.Message)
  for (const message of messages) expect(messageProblems(message)).toEqual([])
  return { code, messages, stderr }
}

const withUrl = (config: Record<string, unknown>) => ({ ...config, base_url: sandbox.url })

const discovered = async (config: unknown) => {
  const { messages } = await run(["discover", "--config", fileOf(config)])
  const catalog = messages.find((m): m is Message.CatalogMessage => m.type === "CATALOG")
  if (catalog === undefined) throw new Error("discover printed no CATALOG")
  return catalog.catalog.streams
}

let offered: ReturnType<typeof discovered> | undefined
/**
 * What discover prints for this file's config, run once (a process of its own each time costs a
 * second): the catalog is the connector's offer, the same whatever the key or the searches.
 */
const discoveredOnce = () => {
  offered ??= discovered(withUrl(configFor()))
  return offered
}

/** PyAirbyte's configured catalog: every stream incremental into `overwrite`, nulls written. */
const pyAirbyteCatalog = (streams: ReadonlyArray<Catalog.AirbyteStream>) =>
  JSON.stringify({
    streams: streams.map((stream) => ({
      stream: {
        name: stream.name,
        json_schema: stream.json_schema,
        supported_sync_modes: stream.supported_sync_modes,
        source_defined_cursor: stream.source_defined_cursor ?? null,
        default_cursor_field: stream.default_cursor_field ?? null,
        source_defined_primary_key: stream.source_defined_primary_key ?? null,
        namespace: null,
        is_resumable: stream.is_resumable ?? null,
        is_file_based: null,
      },
      sync_mode: "incremental",
      cursor_field: null,
      destination_sync_mode: "overwrite",
      primary_key: stream.source_defined_primary_key ?? null,
      generation_id: null,
      minimum_generation_id: null,
      sync_id: null,
      include_files: null,
    })),
  })

/** The last STATE of each stream, as PyAirbyte's state file holds them (nulls written). */
const pyAirbyteState = (messages: ReadonlyArray<Message.Message>): string => {
  const last = new Map<string, Message.StateMessage>()
  for (const message of messages)
    if (message.type === "STATE") last.set(message.state.stream.stream_descriptor.name, message)
  const dumped = [...last.values()].map((message) =>
    JSON.stringify({
      type: "STREAM",
      stream: {
        stream_descriptor: { name: message.state.stream.stream_descriptor.name, namespace: null },
        stream_state: message.state.stream.stream_state,
      },
      global: null,
      data: null,
      // AirbyteStateStats.recordCount is a float in the models.
      sourceStats: { recordCount: message.state.sourceStats.recordCount + 0.0 },
      destinationStats: null,
    }),
  )
  return `[${dumped.join("\n, ")}]`
}

const records = (messages: ReadonlyArray<Message.Message>, stream: string) =>
  messages.filter((m): m is Message.RecordMessage => m.type === "RECORD" && m.record.stream === stream)
const logs = (messages: ReadonlyArray<Message.Message>) =>
  messages.flatMap((m) => (m.type === "LOG" ? [m.log] : []))
const traceError = (messages: ReadonlyArray<Message.Message>) =>
  messages.find((m): m is Message.TraceErrorMessage => m.type === "TRACE" && m.trace.type === "ERROR")

/**
 * The README's PyAirbyte example as written: its `config={...}` (a Python literal, read as JSON
 * once True, False and None are spelled as JSON does) and its `select_streams([...])`.
 */
const readmeExample = () => {
  const readme = readFileSync(fileURLToPath(new URL("../README.md", import.meta.url)), "utf8")
  const block = /```python\n([\s\S]*?)```/.exec(readme.slice(readme.indexOf("**PyAirbyte**")))?.[1]
  if (block === undefined) throw new Error("README.md has no PyAirbyte example")
  const config = /config=(\{[\s\S]*\}),\n\s*\)/.exec(block)?.[1]
  const selected = /select_streams\((\[[^\]]*\])\)/.exec(block)?.[1]
  if (config === undefined || selected === undefined)
    throw new Error("the example has no config or selection")
  const json = config
    .replace(/\bTrue\b/g, "true")
    .replace(/\bFalse\b/g, "false")
    .replace(/\bNone\b/g, "null")
  return {
    config: JSON.parse(json) as Record<string, unknown>,
    streams: JSON.parse(selected) as ReadonlyArray<string>,
  }
}

describe("the README's PyAirbyte example", () => {
  it("runs as written: its config and selection read records of every stream it selects", async () => {
    const example = readmeExample()
    expect(example.streams.length).toBeGreaterThan(0)
    // The key is the example's placeholder: the sandbox's, and the sandbox's address.
    expect(example.config.api_key).toBe("...")
    const config = withUrl({ ...example.config, api_key: key })
    const streams = (await discovered(config)).filter((stream) => example.streams.includes(stream.name))
    expect(streams.map((stream) => stream.name).sort()).toEqual([...example.streams].sort())
    const ran = await run([
      "read",
      "--config",
      fileOf(config),
      "--catalog",
      fileOf(pyAirbyteCatalog(streams)),
      "--state",
      fileOf("[]"),
    ])
    expect(traceError(ran.messages)).toBeUndefined()
    expect(ran.code).toBe(0)
    for (const stream of example.streams)
      expect(records(ran.messages, stream).length, stream).toBeGreaterThan(0)
    expect(charged()).toBe(records(ran.messages, "contacts").length)
  }, 120_000)
})

describe("PyAirbyte's read, then its next read with the state it saved", () => {
  it("reads every stream (taxonomy in full, with a WARN), and the next read buys nothing", async () => {
    const config = fileOf(withUrl(configFor()))
    const catalog = fileOf(pyAirbyteCatalog(await discoveredOnce()))
    const first = await run(["read", "--config", config, "--catalog", catalog, "--state", fileOf("[]")])
    expect(traceError(first.messages)).toBeUndefined()
    expect(first.code).toBe(0)
    for (const stream of ["taxonomy_categories", "taxonomy_products", "contacts", "companies"])
      expect(records(first.messages, stream).length, stream).toBeGreaterThan(0)
    const warnings = logs(first.messages).filter((log) => log.level === "WARN")
    for (const stream of ["taxonomy_categories", "taxonomy_products"])
      expect(warnings.map((log) => log.message)).toContain(
        `${stream}: the catalog asks for incremental, which this stream does not support; it is read in full (full_refresh)`,
      )
    const bought = charged()
    expect(bought).toBe(
      records(first.messages, "contacts").length + records(first.messages, "companies").length,
    )

    // Before: "invalid state file at [0].stream.stream_descriptor.namespace: Expected string, actual null".
    since()
    const state = fileOf(pyAirbyteState(first.messages))
    const second = await run(["read", "--config", config, "--catalog", catalog, "--state", state])
    expect(traceError(second.messages)).toBeUndefined()
    expect(second.code).toBe(0)
    expect(charged()).toBe(0)
    expect(records(second.messages, "contacts")).toHaveLength(0)
  }, 120_000)

  it("a state the official models wrote (namespace null) is read: the next read buys nothing", async () => {
    // Only streams that support incremental, so that nothing but the state is new here.
    const credited = (await discoveredOnce()).filter((stream) =>
      stream.supported_sync_modes.includes("incremental"),
    )
    // IT managers, directors and VPs: 1,207 contacts, which with the companies pass 1,000 credits.
    const itLeaders = {
      name: "it-leaders",
      filters: { job_departments: ["it_is"], job_levels: ["mgr", "dir", "vp"] },
    }
    const config = fileOf(withUrl(configFor({ contacts: { searches: [itLeaders] } })))
    const catalog = fileOf(pyAirbyteCatalog(credited))
    const first = await run(["read", "--config", config, "--catalog", catalog, "--state", fileOf("[]")])
    expect(first.code).toBe(0)
    expect(charged()).toBeGreaterThan(1_000)
    since()
    const state = pyAirbyteState(first.messages)
    expect(state).toContain('"namespace":null')
    const second = await run(["read", "--config", config, "--catalog", catalog, "--state", fileOf(state)])
    expect(traceError(second.messages)).toBeUndefined()
    expect(second.code).toBe(0)
    expect(charged()).toBe(0)
  }, 120_000)

  it("refuses a catalog that lists a stream twice, naming it, and buys nothing", async () => {
    const streams = await discoveredOnce()
    const contacts = streams.filter((stream) => stream.name === "contacts")
    const catalog = fileOf(pyAirbyteCatalog([...contacts, ...contacts]))
    const ran = await run(["read", "--config", fileOf(withUrl(configFor())), "--catalog", catalog])
    expect(ran.code).toBe(1)
    expect(traceError(ran.messages)?.trace.error).toMatchObject({
      failure_type: "config_error",
      message:
        "invalid catalog at streams[1].stream.name: stream contacts is listed twice (streams[0] and streams[1]); list each stream once",
    })
    expect(charged()).toBe(0)
  })

  it("reads a catalog whose destination modes are protocol 0.18's update and soft_delete (the destination's business)", async () => {
    const streams = await discoveredOnce()
    const asked = JSON.parse(
      pyAirbyteCatalog(streams.filter((s) => s.name === "contacts" || s.name === "companies")),
    )
    const modes = ["update", "soft_delete"]
    const catalog = fileOf({
      streams: (asked.streams as ReadonlyArray<Record<string, unknown>>).map((entry, index) => ({
        ...entry,
        destination_sync_mode: modes[index],
      })),
    })
    const ran = await run(["read", "--config", fileOf(withUrl(configFor())), "--catalog", catalog])
    expect(traceError(ran.messages)).toBeUndefined()
    expect(ran.code).toBe(0)
    expect(records(ran.messages, "contacts").length).toBeGreaterThan(0)
    expect(records(ran.messages, "companies").length).toBeGreaterThan(0)
    expect(charged()).toBe(
      records(ran.messages, "contacts").length + records(ran.messages, "companies").length,
    )
  })
})

type Node = { readonly [key: string]: unknown }
const isNode = (value: unknown): value is Node =>
  typeof value === "object" && value !== null && !Array.isArray(value)

/** Every place a schema breaks Airbyte's typing convention, with its path. */
const typingProblems = (node: Node, path: string): ReadonlyArray<string> => {
  const own = ["anyOf", "oneOf", "allOf", "$ref"].filter((key) => key in node).map((key) => `${path}: ${key}`)
  const types = Array.isArray(node.type) ? node.type : [node.type]
  const named = types.filter((type) => type !== "null")
  const typed =
    named.length === 1 && typeof named[0] === "string" && types.length <= 2
      ? []
      : [`${path}: type ${JSON.stringify(node.type)} is not one type (plus "null")`]
  const properties = isNode(node.properties) ? Object.entries(node.properties) : []
  const inner = [
    ...properties.flatMap(([name, child]) => (isNode(child) ? typingProblems(child, `${path}.${name}`) : [])),
    ...(isNode(node.items) ? typingProblems(node.items, `${path}[]`) : []),
  ]
  return [...own, ...typed, ...inner]
}

describe("the catalog's schemas, as a typed destination maps them", () => {
  it("declares one type per field (a type array with null where it can be missing); keys and cursors never null", async () => {
    for (const stream of await discoveredOnce()) {
      expect(typingProblems(stream.json_schema, stream.name)).toEqual([])
      const properties = stream.json_schema.properties as Node
      const keyFields = [...(stream.source_defined_primary_key ?? []), stream.default_cursor_field ?? []]
      for (const [field] of keyFields.filter((path) => path.length > 0)) {
        const declared = properties[field ?? ""] as Node | undefined
        expect(typeof declared?.type, `${stream.name}.${field}`).toBe("string")
      }
    }
  })

  it("the check finds a union, and a nullable key", () => {
    expect(
      typingProblems({ type: "object", properties: { a: { anyOf: [{ type: "string" }] } } }, "s"),
    ).toEqual(["s.a: anyOf", 's.a: type undefined is not one type (plus "null")'])
    expect(typingProblems({ type: ["number", "string"] }, "s")).toHaveLength(1)
  })
})

/** A read in process, the messages collected; `onMessage` sees each as it comes. */
const readInProcess = async (
  config: unknown,
  syncMode: Catalog.SyncMode,
  state: unknown,
  onMessage: (message: Message.Message) => void = () => {},
) => {
  const catalog = {
    streams: [{ stream: { name: "contacts" }, sync_mode: syncMode, destination_sync_mode: "append_dedup" }],
  }
  const messages: Array<Message.Message> = []
  await Effect.runPromise(
    Stream.runForEach(Commands.read({ config, catalog, state }), (message) =>
      Effect.sync(() => {
        onMessage(message)
        messages.push(message)
      }),
    ),
  )
  expect(traceError(messages)).toBeUndefined()
  const states = messages.filter((m): m is Message.StateMessage => m.type === "STATE")
  const last = states.at(-1)
  return {
    messages,
    state: last === undefined ? [] : [last.state],
    known: boughtIds(last?.state.stream.stream_state?.known),
  }
}

describe("one bought set, whatever the mode", () => {
  const config = () =>
    withUrl(configFor({ contacts: { searches: [itVps] }, companies: undefined, taxonomy: undefined }))

  it("a full refresh records what it bought: the incremental read after it buys nothing", async () => {
    const full = await readInProcess(config(), "full_refresh", [])
    const bought = records(full.messages, "contacts").length
    expect(bought).toBeGreaterThan(100)
    expect(charged()).toBe(bought)
    // Before: the full refresh ended with an empty bought set, and this read bought all again.
    expect(full.known.size).toBe(bought)
    since()
    const incremental = await readInProcess(config(), "incremental", full.state)
    expect(charged()).toBe(0)
    expect(records(incremental.messages, "contacts")).toHaveLength(0)
  })

  it("a full refresh after incremental reads keeps what they bought, with its own purchases", async () => {
    const wider = withUrl(
      configFor({ contacts: { searches: [itDirectors] }, companies: undefined, taxonomy: undefined }),
    )
    const incremental = await readInProcess(wider, "incremental", [])
    since()
    const full = await readInProcess(config(), "full_refresh", incremental.state)
    for (const id of incremental.known) expect(full.known.has(id)).toBe(true)
    since()
    await readInProcess(wider, "incremental", full.state)
    expect(charged()).toBe(0)
  })
})

describe("the estimate, from the free counts of every search before anything is bought", () => {
  it.each(["incremental", "full_refresh"] as const)(
    "%s: the first ESTIMATE comes before any credit is spent and covers every search",
    async (syncMode) => {
      const config = withUrl(
        configFor({
          contacts: { searches: [itVps, itDirectors] },
          companies: undefined,
          taxonomy: undefined,
        }),
      )
      const estimates: Array<{ rows: number; chargedThen: number; recordsThen: number }> = []
      let recordsSoFar = 0
      const { messages } = await readInProcess(config, syncMode, [], (message) => {
        if (message.type === "RECORD") recordsSoFar++
        if (message.type === "TRACE" && message.trace.type === "ESTIMATE")
          estimates.push({
            rows: message.trace.estimate.row_estimate ?? 0,
            chargedThen: charged(),
            recordsThen: recordsSoFar,
          })
      })
      const read = records(messages, "contacts").length
      const [first] = estimates
      expect(first).toMatchObject({ chargedThen: 0, recordsThen: 0 })
      // Both searches from the start (before: only the first one's, 228 of 429 in the issue).
      expect(first?.rows).toBeGreaterThanOrEqual(read)
      expect(estimates.at(-1)?.rows).toBe(read)
    },
  )
})

describe("a state that does not decode is refused with its path, and nothing is bought", () => {
  it("a bought set whose day key is not a day", async () => {
    const state = [
      {
        type: "STREAM",
        stream: { stream_descriptor: { name: "contacts" }, stream_state: { known: { yesterday: ["m-1"] } } },
      },
    ]
    const catalog = fileOf(pyAirbyteCatalog((await discoveredOnce()).filter((s) => s.name === "contacts")))
    const ran = await run([
      "read",
      "--config",
      fileOf(withUrl(configFor())),
      "--catalog",
      catalog,
      "--state",
      fileOf(state),
    ])
    expect(ran.code).toBe(1)
    const error = traceError(ran.messages)?.trace.error
    expect(error?.failure_type).toBe("config_error")
    expect(error?.message).toContain(
      "contacts is not readable at known.yesterday: is unexpected, expected: a day number as the key",
    )
    expect(charged()).toBe(0)
  })

  it.each([backend])(
    "a _state row whose state is SQL NULL, on $name",
    async (backend) => {
      const database = await open(backend, "conformance null state")
      try {
        const config = withUrl(
          configFor({ contacts: { searches: [itVps] }, companies: undefined, taxonomy: undefined }),
        )
        const silent = { isTTY: false, write: () => true }
        const first = await database.run(Sync.sync({ config, schema: database.schema, progress: silent }))
        expect(first.error).toBeUndefined()
        await database.query(`UPDATE "${database.schema}"._state SET state = NULL WHERE stream = 'contacts'`)
        since()
        const refused = await database
          .run(Sync.sync({ config, schema: database.schema, progress: silent }))
          .then(
            () => "ran",
            (error: unknown) => String(error),
          )
        expect(refused).toContain("saved state of stream contacts")
        expect(refused).toContain("SQL NULL")
        expect(charged()).toBe(0)
      } finally {
        await database.close()
      }
    },
    60_000,
  )
})
