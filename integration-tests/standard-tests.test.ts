/**
 * Airbyte's standard tests for a source (the connector-acceptance-test suite,
 * airbyte-integrations/bases/connector-acceptance-test/connector_acceptance_test/tests/test_core.py
 * and test_incremental.py in airbytehq/airbyte), their cases written here, run against the
 * command file of the image's tree (assembled as packages/source/Dockerfile does, see
 * imageTree.ts) and the sandbox. Each case names the check of the suite it follows:
 *
 * - TestSpec.test_docker_env: the image's AIRBYTE_ENTRYPOINT is its ENTRYPOINT, space-joined, and
 *   that is the command file these cases run (inside the tree, where the image's WORKDIR puts it).
 * - TestSpec: one SPEC message; the connection specification is a draft-07 JSON Schema the
 *   config matches (test_config_match_spec); additionalProperties is never false.
 * - TestConnection.test_check: exactly one CONNECTION_STATUS, SUCCEEDED with a good key, FAILED
 *   with a bad one.
 * - TestDiscovery: one CATALOG with uniquely named streams (test_discover), valid schemas
 *   (test_streams_have_valid_json_schemas), no `$ref` (test_defined_refs_exist_in_schema), no
 *   `allOf` or `not` (test_defined_keyword_exist_in_schema, skipping property names under an
 *   object as find_keyword_schema does), primary keys present (test_primary_keys_exist_in_schema)
 *   and neither object nor array (test_primary_keys_data_type), cursors present
 *   (test_defined_cursors_exist_in_schema), sync modes declared, no `additionalProperties: false`.
 * - TestBasicRead.test_read: records in every configured stream, each valid against its stream's
 *   schema and sharing fields with it, primary keys scalar and not all null, a STREAM state with
 *   sourceStats for every stream; test_airbyte_trace_message_on_failure: a catalog naming a stream
 *   that does not exist (with the suite's "INVALID" sync modes) ends with a TRACE error.
 * - TestIncremental.test_two_sequential_reads: the second read, given the first's last states,
 *   buys nothing (credits as the sandbox counts them).
 * - TestIncremental.test_state_with_abnormally_large_values: a state whose every bought set is
 *   dated far in the future reads no record, emits a STATE, exits 0 and buys nothing.
 *
 * Every message of every command is checked against the protocol (spec/airbyte/), and stdout
 * carries nothing else.
 */
import { readFileSync } from "node:fs"
import { join, relative } from "node:path"
import { Ajv } from "ajv"
import addFormats from "ajv-formats"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { messageProblems } from "../packages/airbyte/src/testing/AirbyteSchema.ts"
import { assemble, type ImageTree, imageTreeDirectory, type Ran, runFile, unprivileged } from "./imageTree.ts"
import { fastPace, sandboxForFile } from "./sandbox.ts"

const sandbox = sandboxForFile({ seed: 23, contacts: 2_000, companies: 200 })
let image: ImageTree

beforeAll(async () => {
  image = imageTreeDirectory()
  const assembled = await assemble(image)
  expect(assembled.code, assembled.stderr).toBe(0)
}, 120_000)
afterAll(() => {
  image?.remove()
})

type Json = null | boolean | number | string | ReadonlyArray<Json> | { readonly [key: string]: Json }
type JsonObject = { readonly [key: string]: Json }
interface Stream {
  readonly name: string
  readonly json_schema: JsonObject & { readonly properties: JsonObject }
  readonly supported_sync_modes?: ReadonlyArray<string>
  readonly source_defined_primary_key?: ReadonlyArray<ReadonlyArray<string>>
  readonly default_cursor_field?: ReadonlyArray<string>
}
interface Message {
  readonly type: string
  readonly [key: string]: Json
}

const isObject = (value: Json | undefined): value is JsonObject =>
  typeof value === "object" && value !== null && !Array.isArray(value)

/** The lines of stdout, each a protocol message valid against the schema: nothing else is allowed there. */
const messagesOf = (ran: Ran): ReadonlyArray<Message> =>
  ran.stdout
    .split("\n")
    .filter((line) => line.length > 0)
    .map((line) => {
      const message = JSON.parse(line) as Message
      expect(messageProblems(message), line.slice(0, 300)).toEqual([])
      return message
    })
const ofType = (messages: ReadonlyArray<Message>, type: string) => messages.filter((m) => m.type === type)
const traceErrors = (messages: ReadonlyArray<Message>) =>
  ofType(messages, "TRACE").filter((m) => isObject(m.trace) && m.trace.type === "ERROR")

const source = (args: ReadonlyArray<string>) => runFile(image.bin, args, image.work, unprivileged)

/** A config that has each stream read something: two contact searches, ten domains, one taxonomy product. */
const configFor = (key: string) => ({
  api_key: key,
  base_url: sandbox.url,
  credit_budget: 5_000,
  requests_per_minute: fastPace,
  retry: { initial_delay_ms: 5, max_delay_ms: 50 },
  contacts: { searches: [{ name: "vps", filters: { job_levels: ["vp"] } }] },
  companies: { domains: sandbox.dataset.companies.slice(0, 10).map((company) => company.domain) },
  taxonomy: { products: ["cloud"], full_crawl: true },
})

let files = 0
const fileOf = (value: unknown) => image.write(`standard-${files++}.json`, value)

/** Every value of `key` anywhere in a schema (the suite's find_all_values_for_key_in_schema). */
const valuesOfKey = (schema: Json, key: string): ReadonlyArray<Json> => {
  if (Array.isArray(schema)) return schema.flatMap((item: Json) => valuesOfKey(item, key))
  if (!isObject(schema)) return []
  return Object.entries(schema).flatMap(([k, v]) => [...(k === key ? [v] : []), ...valuesOfKey(v, key)])
}

/** Whether `key` is used as a keyword (the suite's find_keyword_schema: an object's property names are skipped). */
const hasKeyword = (schema: Json, key: string, skip = false): boolean => {
  if (Array.isArray(schema)) return schema.some((item: Json) => hasKeyword(item, key))
  if (!isObject(schema)) return false
  return Object.entries(schema).some(
    ([k, v]) => (k === key && !skip) || hasKeyword(v, key, k === "properties" && schema.type === "object"),
  )
}

/** The schema of a field at a path of property names (the suite's "/properties/".join(path)). */
const fieldAt = (stream: Stream, path: ReadonlyArray<string>): JsonObject | undefined => {
  let node: Json | undefined = stream.json_schema
  for (const name of path) {
    const properties: Json | undefined = isObject(node) ? node.properties : undefined
    node = isObject(properties) ? properties[name] : undefined
  }
  return isObject(node) ? node : undefined
}
const typesOf = (field: JsonObject): ReadonlyArray<Json> =>
  Array.isArray(field.type) ? field.type : field.type === undefined ? [] : [field.type]

const draft07 = () => {
  const ajv = new Ajv({ strict: false, allErrors: true })
  addFormats.default(ajv)
  return ajv
}

/** The discovered streams, once for the file: the catalog the reads configure from, as the suite's do. */
let discovered: Promise<{ ran: Ran; streams: ReadonlyArray<Stream> }> | undefined
const discover = () => {
  discovered ??= (async () => {
    const ran = await source(["discover", "--config", fileOf(configFor(sandbox.key()))])
    const catalogs = ofType(messagesOf(ran), "CATALOG")
    const catalog = catalogs[0]?.catalog
    const streams = isObject(catalog) ? (catalog.streams as unknown as ReadonlyArray<Stream>) : []
    return { ran, streams }
  })()
  return discovered
}

/** The configured catalog Airbyte sends for a connection: the discovered stream whole, and its modes. */
const configured = (streams: ReadonlyArray<Stream>) => ({
  streams: streams.map((stream) => {
    const incremental = stream.supported_sync_modes?.includes("incremental") === true
    return {
      stream,
      sync_mode: incremental ? "incremental" : "full_refresh",
      destination_sync_mode: incremental ? "append_dedup" : "overwrite",
      cursor_field: stream.default_cursor_field ?? [],
      primary_key: stream.source_defined_primary_key ?? [],
    }
  }),
})

const read = (key: string, catalog: unknown, state?: unknown) =>
  source([
    "read",
    "--config",
    fileOf(configFor(key)),
    "--catalog",
    fileOf(catalog),
    ...(state === undefined ? [] : ["--state", fileOf(state)]),
  ])

const readStreams = ["contacts", "companies", "taxonomy_products", "taxonomy_categories"]

describe("spec (TestSpec)", () => {
  it("AIRBYTE_ENTRYPOINT is the ENTRYPOINT, space-joined, and the command file run here", () => {
    const dockerfile = readFileSync(join(import.meta.dirname, "../packages/source/Dockerfile"), "utf8")
    const finalStage = dockerfile.split(/^FROM /m).at(-1) ?? ""
    const entrypoint = JSON.parse(
      finalStage.match(/^ENTRYPOINT (\[.*\])$/m)?.[1] ?? "null",
    ) as ReadonlyArray<string>
    const env = finalStage.match(/^ENV AIRBYTE_ENTRYPOINT="([^"]*)"$/m)?.[1]
    expect(env).toBe(entrypoint.join(" "))
    const workdir = finalStage.match(/^WORKDIR (\S+)$/m)?.[1] ?? ""
    expect(entrypoint).toEqual([join(workdir, relative(image.tree, image.bin))])
  })

  it("prints exactly one SPEC: a draft-07 schema the test's config matches, never additionalProperties false", async () => {
    const ran = await source(["spec"])
    expect(ran.code, ran.stderr).toBe(0)
    const specs = ofType(messagesOf(ran), "SPEC")
    expect(specs).toHaveLength(1)
    const spec = specs[0]?.spec
    const connectionSpecification = isObject(spec) ? spec.connectionSpecification : undefined
    expect(isObject(connectionSpecification)).toBe(true)
    const validate = draft07().compile(connectionSpecification as JsonObject)
    expect(validate(configFor("a-key")), JSON.stringify(validate.errors)).toBe(true)
    for (const value of valuesOfKey(connectionSpecification as JsonObject, "additionalProperties"))
      expect(value).toBe(true)
  }, 120_000)
})

describe("check (TestConnection.test_check)", () => {
  it("one CONNECTION_STATUS: SUCCEEDED with a good key, FAILED with a bad one, exit 0 and no credit either way", async () => {
    const good = sandbox.key()
    const bad = `${good}-revoked`
    const [succeeded, failed] = await Promise.all([
      source(["check", "--config", fileOf(configFor(good))]),
      source(["check", "--config", fileOf(configFor(bad))]),
    ])
    for (const [ran, status] of [
      [succeeded, "SUCCEEDED"],
      [failed, "FAILED"],
    ] as const) {
      expect(ran.code, ran.stderr).toBe(0)
      const statuses = ofType(messagesOf(ran), "CONNECTION_STATUS")
      expect(statuses).toHaveLength(1)
      expect(statuses[0]).toMatchObject({ connectionStatus: { status } })
    }
    expect(sandbox.charged(good)).toBe(0)
  }, 120_000)
})

describe("discover (TestDiscovery)", () => {
  it("one CATALOG of uniquely named streams with sync modes and schemas that are valid draft-07", async () => {
    const { ran, streams } = await discover()
    expect(ran.code, ran.stderr).toBe(0)
    expect(ofType(messagesOf(ran), "CATALOG")).toHaveLength(1)
    expect(streams.length).toBeGreaterThan(0)
    const names = streams.map((stream) => stream.name)
    expect(new Set(names).size).toBe(names.length)
    for (const name of readStreams) expect(names).toContain(name)
    const ajv = draft07()
    for (const stream of streams) {
      expect(stream.supported_sync_modes?.length ?? 0, stream.name).toBeGreaterThan(0)
      expect(ajv.validateSchema(stream.json_schema), `${stream.name}: ${JSON.stringify(ajv.errors)}`).toBe(
        true,
      )
      expect(isObject(stream.json_schema.properties), stream.name).toBe(true)
    }
  }, 120_000)

  it("no $ref, allOf, not or additionalProperties false in any stream's schema", async () => {
    const { streams } = await discover()
    for (const stream of streams) {
      expect(valuesOfKey(stream.json_schema, "$ref"), stream.name).toEqual([])
      expect(hasKeyword(stream.json_schema, "allOf"), `${stream.name}: allOf`).toBe(false)
      expect(hasKeyword(stream.json_schema, "not"), `${stream.name}: not`).toBe(false)
      for (const value of valuesOfKey(stream.json_schema, "additionalProperties"))
        expect(value, `${stream.name}: additionalProperties`).toBe(true)
    }
  }, 120_000)

  it("every primary key is in its schema and scalar, every cursor is in its schema", async () => {
    const { streams } = await discover()
    for (const stream of streams) {
      for (const key of stream.source_defined_primary_key ?? []) {
        const field = fieldAt(stream, key)
        expect(field, `${stream.name}: primary key ${key.join(".")}`).toBeDefined()
        const types = typesOf(field as JsonObject)
        expect(types.length, `${stream.name}: ${key.join(".")} has a type`).toBeGreaterThan(0)
        for (const type of ["object", "array"])
          expect(types, `${stream.name}: ${key.join(".")}`).not.toContain(type)
      }
      if ((stream.default_cursor_field ?? []).length > 0)
        expect(fieldAt(stream, stream.default_cursor_field ?? []), `${stream.name}: cursor`).toBeDefined()
    }
  }, 120_000)

  it("the rules catch what they look for: each fails on a schema made to break it", () => {
    const stream: Stream = {
      name: "s",
      json_schema: {
        type: "object",
        properties: {
          id: { type: ["object", "null"] },
          not: { type: "string" },
          nested: {
            type: ["object", "null"],
            properties: { allOf: { type: "string" } },
            additionalProperties: false,
          },
          picked: { allOf: [{ type: "string" }] },
        },
      },
      source_defined_primary_key: [["id"]],
    }
    // A property named like a keyword under an object is skipped, as the suite skips it; under a
    // nullable object it is not (the suite compares `type` with "object" alone).
    expect(hasKeyword({ type: "object", properties: { not: { type: "string" } } }, "not")).toBe(false)
    expect(hasKeyword(stream.json_schema, "allOf")).toBe(true)
    expect(valuesOfKey(stream.json_schema, "additionalProperties")).toEqual([false])
    expect(typesOf(fieldAt(stream, ["id"]) as JsonObject)).toContain("object")
    expect(fieldAt(stream, ["nested", "missing"])).toBeUndefined()
    expect(fieldAt(stream, ["nested", "allOf"])).toEqual({ type: "string" })
  })
})

/** The last STATE of each stream, in the form the platform hands back (the messages' `state` parts). */
const lastStates = (messages: ReadonlyArray<Message>): ReadonlyArray<Json> => {
  const byStream = new Map<string, Json>()
  for (const message of ofType(messages, "STATE")) {
    const state = message.state
    const stream = isObject(state) ? state.stream : undefined
    const descriptor = isObject(stream) ? stream.stream_descriptor : undefined
    if (isObject(descriptor) && typeof descriptor.name === "string")
      byStream.set(descriptor.name, state as Json)
  }
  return [...byStream.values()]
}

const recordsOf = (messages: ReadonlyArray<Message>) =>
  ofType(messages, "RECORD").map(
    (message) => message.record as JsonObject & { stream: string; data: JsonObject },
  )

/** The suite's _validate_schema and _validate_primary_keys_data_type, over every record. */
const expectRecordsFit = (streams: ReadonlyArray<Stream>, messages: ReadonlyArray<Message>) => {
  const ajv = draft07()
  const validators = new Map(streams.map((stream) => [stream.name, ajv.compile(stream.json_schema)]))
  const byName = new Map(streams.map((stream) => [stream.name, stream]))
  for (const record of recordsOf(messages)) {
    const validate = validators.get(record.stream)
    const stream = byName.get(record.stream)
    expect(validate, `a record of ${record.stream}, which the catalog does not configure`).toBeDefined()
    if (validate === undefined || stream === undefined) continue
    expect(validate(record.data), `${record.stream}: ${JSON.stringify(validate.errors)}`).toBe(true)
    const known = Object.keys(record.data).filter((field) => field in stream.json_schema.properties)
    expect(known.length, `${record.stream}: a record with no field of its schema`).toBeGreaterThan(0)
    const keys = (stream.source_defined_primary_key ?? []).map((path) =>
      path.reduce<Json | undefined>((data, name) => (isObject(data) ? data[name] : undefined), record.data),
    )
    for (const value of keys) expect(typeof value === "object" && value !== null, record.stream).toBe(false)
    if (keys.length > 0)
      expect(
        keys.some((value) => value !== undefined && value !== null),
        record.stream,
      ).toBe(true)
  }
}

/** The suite's _validate_state_messages, and the stream statuses' order where the source emits them. */
const expectStatesAndStatuses = (streams: ReadonlyArray<Stream>, messages: ReadonlyArray<Message>) => {
  const states = ofType(messages, "STATE").map((message) => message.state as JsonObject)
  expect(states.length).toBeGreaterThanOrEqual(streams.length)
  for (const state of states) {
    expect(state.type).toBe("STREAM")
    expect(isObject(state.sourceStats), JSON.stringify(state)).toBe(true)
  }
  const named = lastStates(messages).map((state) => {
    const stream = isObject(state) ? state.stream : undefined
    return isObject(stream) && isObject(stream.stream_descriptor) ? stream.stream_descriptor.name : undefined
  })
  expect([...named].sort()).toEqual(streams.map((stream) => stream.name).sort())
  const statuses = new Map<string, Array<Json>>()
  for (const message of ofType(messages, "TRACE")) {
    const trace = message.trace
    const status = isObject(trace) && isObject(trace.stream_status) ? trace.stream_status : undefined
    const descriptor =
      status !== undefined && isObject(status.stream_descriptor) ? status.stream_descriptor : undefined
    if (status === undefined || descriptor === undefined) continue
    const list = statuses.get(String(descriptor.name)) ?? []
    list.push(status.status as Json)
    statuses.set(String(descriptor.name), list)
  }
  for (const [stream, list] of statuses) {
    expect(list[0], stream).toBe("STARTED")
    expect(list.at(-1), stream).toBe("COMPLETE")
    for (const status of list.slice(1, -1)) expect(status, stream).toBe("RUNNING")
  }
}

describe("read (TestBasicRead)", () => {
  it("reads every configured stream; every record fits its schema; a STREAM state with stats for each", async () => {
    const { streams } = await discover()
    const selected = streams.filter((stream) => readStreams.includes(stream.name))
    const key = sandbox.key()
    const ran = await read(key, configured(selected))
    expect(ran.code, ran.stderr).toBe(0)
    const messages = messagesOf(ran)
    expect(traceErrors(messages)).toEqual([])
    const records = recordsOf(messages)
    for (const stream of selected)
      expect(records.filter((record) => record.stream === stream.name).length, stream.name).toBeGreaterThan(0)
    expectRecordsFit(selected, messages)
    expectStatesAndStatuses(selected, messages)
    expect(sandbox.charged(key)).toBeGreaterThan(0)
  }, 180_000)

  it.each([
    ["the suite's catalog: a stream that does not exist, sync modes INVALID", "INVALID", "INVALID"],
    ["a stream that does not exist, with valid sync modes", "full_refresh", "overwrite"],
  ])(
    "%s: a TRACE error, a non-zero exit, nothing bought",
    async (_name, syncMode, destinationSyncMode) => {
      const key = sandbox.key()
      const catalog = {
        streams: [
          {
            stream: {
              name: "__AIRBYTE__stream_that_does_not_exist",
              json_schema: { type: "object", properties: { f1: { type: "string" } } },
              supported_sync_modes: ["full_refresh"],
            },
            sync_mode: syncMode,
            destination_sync_mode: destinationSyncMode,
          },
        ],
      }
      const ran = await read(key, catalog)
      expect(ran.code).not.toBe(0)
      const messages = messagesOf(ran)
      expect(traceErrors(messages).length).toBeGreaterThanOrEqual(1)
      expect(recordsOf(messages)).toEqual([])
      expect(sandbox.charged(key)).toBe(0)
    },
    60_000,
  )
})

describe("two reads in a row (TestIncremental.test_two_sequential_reads)", () => {
  it("the second, given the first's last states, buys nothing", async () => {
    const { streams } = await discover()
    const catalog = configured(streams.filter((stream) => ["contacts", "companies"].includes(stream.name)))
    const key = sandbox.key()
    const first = await read(key, catalog)
    expect(first.code, first.stderr).toBe(0)
    const firstMessages = messagesOf(first)
    expect(traceErrors(firstMessages)).toEqual([])
    const bought = sandbox.charged(key)
    expect(bought).toBeGreaterThan(0)
    const states = lastStates(firstMessages)
    expect(states).toHaveLength(2)

    const second = await read(key, catalog, states)
    expect(second.code, second.stderr).toBe(0)
    const secondMessages = messagesOf(second)
    expect(traceErrors(secondMessages)).toEqual([])
    expect(lastStates(secondMessages)).toHaveLength(2)
    expect(sandbox.charged(key) - bought).toBe(0)
    firstStates = states
  }, 180_000)
})

/** The last states of the two reads' first: what the abnormal state is made from. */
let firstStates: ReadonlyArray<Json> | undefined

/** Days far ahead (day 99,999 is in 2243), one for each day a set holds, counting down. */
const farAhead = (value: Json): Json => {
  if (!isObject(value)) return value
  const days = Object.keys(value)
  if (days.length === 0 || !days.every((day) => /^\d+$/.test(day))) return value
  return Object.fromEntries(days.map((day, index) => [String(99_999 - index), value[day] ?? null]))
}

/** A STATE message whose stream state's every bought set (an object keyed by day) is moved far ahead. */
const abnormal = (state: Json): Json => {
  const stream = isObject(state) ? state.stream : undefined
  const inner = isObject(stream) ? stream.stream_state : undefined
  if (!isObject(state) || !isObject(stream) || !isObject(inner)) return state
  const moved = Object.fromEntries(Object.entries(inner).map(([field, value]) => [field, farAhead(value)]))
  return { ...state, stream: { ...stream, stream_state: moved } }
}

describe("a state with abnormally large values (TestIncremental.test_state_with_abnormally_large_values)", () => {
  it("no record, at least one STATE, exit 0, nothing bought, and a WARN naming the path and the day", async () => {
    if (firstStates === undefined) throw new Error("the two reads in a row did not run")
    const { streams } = await discover()
    const catalog = configured(streams.filter((stream) => ["contacts", "companies"].includes(stream.name)))
    const key = sandbox.key()
    const ran = await read(key, catalog, firstStates.map(abnormal))
    expect(ran.code, ran.stderr).toBe(0)
    const messages = messagesOf(ran)
    expect(traceErrors(messages)).toEqual([])
    expect(recordsOf(messages)).toEqual([])
    expect(ofType(messages, "STATE").length).toBeGreaterThanOrEqual(1)
    expect(sandbox.charged(key)).toBe(0)
    const warnings = ofType(messages, "LOG")
      .map((m) => (isObject(m.log) && m.log.level === "WARN" ? String(m.log.message) : ""))
      .filter((text) => text.includes("99999 is dated 2243-10-16, after today"))
    expect(warnings.length).toBeGreaterThanOrEqual(2)
  }, 180_000)
})
