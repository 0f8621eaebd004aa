/**
 * The message Schemas against the official Airbyte protocol schema (spec/airbyte/, verbatim):
 * every message the constructors build is a valid AirbyteMessage, it survives the trip through a
 * JSON line unchanged, and the Schemas refuse what the official schema refuses.
 */
import * as Either from "effect/Either"
import * as Schema from "effect/Schema"
import fc from "fast-check"
import { describe, expect, it } from "vitest"
import * as Catalog from "./Catalog.ts"
import * as Message from "./Message.ts"
import * as Ndjson from "./Ndjson.ts"
import * as Streams from "./Streams.ts"
import { configuredCatalogProblems, messageProblems } from "./testing/AirbyteSchema.ts"

const json = fc.jsonValue({ maxDepth: 3 })
const data = fc.dictionary(fc.string(), json, { maxKeys: 5 })
const text = fc.string({ maxLength: 40 })
const streamName = fc.oneof(fc.constantFrom(...Streams.names), text)

const messages: fc.Arbitrary<Message.Message> = fc.oneof(
  fc
    .tuple(streamName, data, fc.integer({ min: 0, max: 2 ** 45 }))
    .map(([stream, record, at]) => Message.record(stream, record, at)),
  fc
    .tuple(streamName, data, fc.nat())
    .map(([stream, state, count]) => Message.streamState(stream, state, count)),
  fc
    .tuple(fc.constantFrom("FATAL", "ERROR", "WARN", "INFO", "DEBUG", "TRACE" as const), text)
    .map(([level, line]) => Message.log(level, line)),
  fc
    .tuple(
      fc.constantFrom("system_error", "config_error", "transient_error" as const),
      text,
      fc.option(text, { nil: undefined }),
      fc.option(streamName, { nil: undefined }),
    )
    .map(([failure, line, internal, stream]) =>
      Message.traceError(failure, line, 1_700_000_000_000, {
        ...(internal === undefined ? {} : { internal }),
        ...(stream === undefined ? {} : { stream }),
      }),
    ),
  fc
    .tuple(fc.boolean(), fc.option(text, { nil: undefined }))
    .map(([ok, line]) => Message.connectionStatus(ok, line)),
  fc
    .tuple(streamName, fc.nat(), fc.option(fc.nat(), { nil: undefined }))
    .map(([stream, rows, bytes]) => Message.estimate(stream, rows, bytes, 1_700_000_000_000)),
)

/** A message as JSON would carry it (the STATE default filled in, as the Schema decodes it). */
const asRead = (message: Message.Message) => JSON.parse(JSON.stringify(message))

describe("Message", () => {
  it("builds only valid AirbyteMessages, which read back from their line unchanged", () => {
    fc.assert(
      fc.property(messages, (message) => {
        expect(messageProblems(JSON.parse(Ndjson.serialize(message)))).toEqual([])
        const read = Ndjson.parseLine(Ndjson.serialize(message).trimEnd(), 1)
        expect(Either.isRight(read)).toBe(true)
        if (Either.isRight(read) && read.right !== undefined) {
          const { dataText: _, ...protocolPart } = read.right as Message.RecordMessage
          expect(asRead(protocolPart)).toEqual(asRead(message))
        }
      }),
      { numRuns: 500 },
    )
  })

  it("offers the registry's streams in a valid CATALOG, keys and cursors declared", () => {
    const catalog = Message.catalog(Catalog.offered())
    expect(messageProblems(catalog)).toEqual([])
    expect(catalog.catalog.streams.map((stream) => stream.name)).toEqual([
      "taxonomy_categories",
      "taxonomy_products",
      "contacts",
      "companies",
      "_rejected",
    ])
    const rejected = catalog.catalog.streams.find((stream) => stream.name === "_rejected")
    expect(rejected?.source_defined_primary_key).toEqual([])
    expect(rejected?.supported_sync_modes).toEqual(["full_refresh", "incremental"])
    const contacts = catalog.catalog.streams.find((stream) => stream.name === "contacts")
    expect(contacts?.source_defined_primary_key).toEqual([["match_id"]])
    expect(contacts?.default_cursor_field).toEqual(["_salesintel_fetched_at"])
    expect(contacts?.supported_sync_modes).toEqual(["full_refresh", "incremental"])
    expect(Schema.decodeUnknownEither(Message.CatalogMessage)(asRead(catalog))._tag).toBe("Right")
  })

  it("configures valid catalogs, and refuses unknown streams and a stream listed twice", () => {
    for (const mode of ["incremental", "full_refresh"] as const) {
      const configured = Catalog.configuredAll(mode)
      const full = {
        streams: configured.streams.map((entry) => ({
          ...entry,
          stream: Catalog.offered().find((stream) => stream.name === entry.stream.name),
        })),
      }
      expect(configuredCatalogProblems(full)).toEqual([])
      expect(Either.isRight(Catalog.decodeConfigured(configured))).toBe(true)
    }
    const unknown = Catalog.decodeConfigured({
      streams: [{ stream: { name: "people" }, sync_mode: "full_refresh", destination_sync_mode: "append" }],
    })
    expect(unknown._tag === "Left" && unknown.left).toContain('no stream "people" (streams: ')
    // A name near a stream's (the rejected records' too) says which.
    for (const [name, meant] of [
      ["contact", "contacts"],
      ["taxonomy-products", "taxonomy_products"],
      ["rejected", "_rejected"],
    ] as const) {
      const near = Catalog.decodeConfigured({
        streams: [{ stream: { name }, sync_mode: "full_refresh", destination_sync_mode: "append" }],
      })
      expect(near._tag === "Left" && near.left).toBe(
        `invalid catalog at streams[0].stream.name: no stream "${name}" (did you mean ${meant}?)`,
      )
    }
    // Clients configure incremental for every stream: accepted, and read in full (syncModeOf).
    const mode = Either.getOrThrow(
      Catalog.decodeConfigured({
        streams: [
          {
            stream: { name: "taxonomy_products" },
            sync_mode: "incremental",
            destination_sync_mode: "append",
          },
          { stream: { name: "contacts" }, sync_mode: "incremental", destination_sync_mode: "append" },
        ],
      }),
    )
    expect(mode.streams.map(Catalog.syncModeOf)).toEqual([
      { syncMode: "full_refresh", downgraded: true },
      { syncMode: "incremental", downgraded: false },
    ])
    const twice = Catalog.decodeConfigured({
      streams: [
        { stream: { name: "contacts" }, sync_mode: "incremental", destination_sync_mode: "append" },
        { stream: { name: "companies" }, sync_mode: "incremental", destination_sync_mode: "append" },
        { stream: { name: "contacts" }, sync_mode: "full_refresh", destination_sync_mode: "overwrite" },
      ],
    })
    expect(Either.isLeft(twice) && twice.left).toBe(
      "invalid catalog at streams[2].stream.name: stream contacts is listed twice (streams[0] and streams[2]); list each stream once",
    )
  })

  it("accepts every destination mode (the destination's); the loader takes those it writes", () => {
    const withModes = (modes: ReadonlyArray<string>) =>
      Either.getOrThrow(
        Catalog.decodeConfigured({
          streams: modes.map((mode, index) => ({
            stream: { name: ["contacts", "companies", "taxonomy_products"][index] },
            sync_mode: index === 2 ? "full_refresh" : "incremental",
            destination_sync_mode: mode,
          })),
        }),
      )
    // Protocol 0.18's update and soft_delete, and a mode from a later protocol: the source reads them.
    const other = withModes(["update", "soft_delete", "some_later_mode"])
    expect(other.streams.map((entry) => entry.destination_sync_mode)).toEqual([
      "update",
      "soft_delete",
      "some_later_mode",
    ])
    const refused = Catalog.loaderModes(other)
    expect(Either.isLeft(refused) && refused.left).toBe(
      'invalid catalog at streams[0].destination_sync_mode: this loader writes append, overwrite or append_dedup, not "update" (a mode of another destination); use append_dedup for contacts',
    )
    expect(Catalog.loaderModes(withModes(["append_dedup", "append", "overwrite"]))).toEqual(
      Either.right({ contacts: "append_dedup", companies: "append", taxonomy_products: "overwrite" }),
    )
    // Incremental into overwrite would delete what earlier runs bought: refused by the loader too.
    const overwritten = Catalog.loaderModes(withModes(["overwrite"]))
    expect(Either.isLeft(overwritten) && overwritten.left).toContain(
      "invalid catalog at streams[0].destination_sync_mode: stream contacts is read incrementally",
    )
  })

  it("reads a catalog as the official models write it: every optional field null", () => {
    const entry = Catalog.offered().find((stream) => stream.name === "contacts")
    const catalog = Either.getOrThrow(
      Catalog.decodeConfigured({
        streams: [
          {
            stream: { ...entry, namespace: null, is_resumable: null },
            sync_mode: "incremental",
            cursor_field: null,
            destination_sync_mode: "overwrite",
            primary_key: null,
            generation_id: null,
            minimum_generation_id: null,
            sync_id: null,
          },
        ],
      }),
    )
    expect(catalog.streams.map((stream) => stream.stream.name)).toEqual(["contacts"])
  })

  it("refuses, as the official schema does, messages missing what the protocol requires", () => {
    const malformed = [
      { type: "RECORD", record: { stream: "contacts" } },
      { type: "RECORD", record: { stream: "contacts", data: [], emitted_at: 1 } },
      { type: "RECORD", record: { stream: 1, data: {}, emitted_at: 1 } },
      { type: "STATE", state: { type: "STREAM", stream: {} } },
      { type: "LOG", log: { level: "LOUD", message: "x" } },
      {
        type: "TRACE",
        trace: { type: "ERROR", emitted_at: 1, error: { message: "x", failure_type: "oops" } },
      },
      { type: "CONNECTION_STATUS", connectionStatus: { status: "MAYBE" } },
      { type: "TRACE", trace: { type: "ESTIMATE", emitted_at: 1, estimate: { name: "contacts" } } },
      {
        type: "TRACE",
        trace: { type: "ESTIMATE", emitted_at: 1, estimate: { name: "contacts", type: "TABLE" } },
      },
      {
        type: "TRACE",
        trace: {
          type: "ESTIMATE",
          emitted_at: 1,
          estimate: { name: "contacts", type: "STREAM", row_estimate: 1.5 },
        },
      },
    ]
    for (const message of malformed) {
      expect(messageProblems(message).length).toBeGreaterThan(0)
      const schema: Schema.Schema.AnyNoContext = Message.schemas[message.type as keyof typeof Message.schemas]
      expect(Either.isLeft(Schema.decodeUnknownEither(schema)(message))).toBe(true)
    }
  })

  it("builds a RUNNING status with the reason RATE_LIMITED the protocol accepts and the Schema reads back", () => {
    const limited = Message.streamRateLimited("contacts", 1_700_000_100_000.4, 1_700_000_000_000)
    expect(messageProblems(limited)).toEqual([])
    expect(limited.trace.stream_status).toEqual({
      stream_descriptor: { name: "contacts" },
      status: "RUNNING",
      reasons: [{ type: "RATE_LIMITED", rate_limited: { quota_reset: 1_700_000_100_001 } }],
    })
    const line = JSON.parse(Ndjson.serialize(limited))
    expect(Schema.decodeUnknownSync(Message.schemas.TRACE)(line)).toEqual(limited)
    const unknownReason = {
      ...line,
      trace: { ...line.trace, stream_status: { ...line.trace.stream_status, reasons: [{ type: "SLOW" }] } },
    }
    expect(messageProblems(unknownReason).length).toBeGreaterThan(0)
    expect(Either.isLeft(Schema.decodeUnknownEither(Message.schemas.TRACE)(unknownReason))).toBe(true)
  })

  it("builds per-stream ESTIMATE traces the protocol accepts, with bytes only when known", () => {
    const withBytes = Message.estimate("contacts", 1_234.4, 987_654.6, 7)
    expect(messageProblems(withBytes)).toEqual([])
    expect(withBytes.trace.estimate).toEqual({
      name: "contacts",
      type: "STREAM",
      row_estimate: 1_234,
      byte_estimate: 987_655,
    })
    const rowsOnly = Message.estimate("companies", 25, undefined, 7)
    expect(messageProblems(rowsOnly)).toEqual([])
    expect("byte_estimate" in rowsOnly.trace.estimate).toBe(false)
  })

  it("never writes what travels beside a RECORD in memory", () => {
    const entry = Streams.streams.taxonomy_categories
    const message = {
      ...Message.record(entry.name, { category: "CRM" }, 5, { stream: entry, value: { category: "CRM" } }),
      dataText: '{"category":"CRM"}',
    }
    expect(JSON.parse(Ndjson.serialize(message))).toEqual({
      type: "RECORD",
      record: { stream: "taxonomy_categories", data: { category: "CRM" }, emitted_at: 5 },
    })
  })
})
