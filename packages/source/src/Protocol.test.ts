import { Effect, Stream } from "effect"
import { describe, expect, it } from "vitest"
import * as Catalog from "./Catalog.ts"
import * as Commands from "./Commands.ts"
import * as Protocol from "./Protocol.ts"
import { configuredCatalogProblems, messageProblems } from "./testing/AirbyteSchema.ts"

const collect = (stream: Stream.Stream<Protocol.Message>) =>
  Effect.runPromise(Stream.runCollect(stream)).then((chunk) => [...chunk])

describe("protocol messages validate against the official Airbyte schema", () => {
  it("SPEC", async () => {
    const [spec] = await collect(Commands.spec())
    expect(messageProblems(spec)).toEqual([])
    const properties = (spec as Protocol.SpecMessage).spec.connectionSpecification.properties as Record<
      string,
      Record<string, unknown>
    >
    expect(properties.api_key?.airbyte_secret).toBe(true)
    expect(JSON.stringify(spec)).not.toContain("$ref")
  })

  it("CATALOG, with primary keys and cursors declared", async () => {
    const [catalog] = await collect(Commands.discover({ api_key: "k", credit_budget: 1 }))
    expect(messageProblems(catalog)).toEqual([])
    const streams = (catalog as Protocol.CatalogMessage).catalog.streams
    expect(streams.map((s) => s.name)).toEqual([
      "taxonomy_categories",
      "taxonomy_products",
      "contacts",
      "companies",
    ])
    const contacts = streams.find((s) => s.name === "contacts")
    expect(contacts?.source_defined_primary_key).toEqual([["match_id"]])
    expect(contacts?.default_cursor_field).toEqual(["_salesintel_fetched_at"])
    expect(contacts?.supported_sync_modes).toEqual(["full_refresh", "incremental"])
  })

  it("CONNECTION_STATUS for a bad config", async () => {
    const [status] = await collect(Commands.check({ api_key: "k" }))
    expect(messageProblems(status)).toEqual([])
    expect((status as Protocol.ConnectionStatusMessage).connectionStatus.status).toBe("FAILED")
  })

  it("TRACE config_error for a bad config on discover and read", async () => {
    for (const messages of [
      await collect(Commands.discover({ credit_budget: "x" })),
      await collect(
        Commands.read({ config: { api_key: "k", credit_budget: 1 }, catalog: { streams: [{}] } }),
      ),
    ]) {
      expect(messages).toHaveLength(1)
      expect(messageProblems(messages[0])).toEqual([])
      expect((messages[0] as Protocol.TraceErrorMessage).trace.error.failure_type).toBe("config_error")
    }
  })

  it("RECORD, STATE and LOG as constructed", () => {
    expect(messageProblems(Protocol.record("contacts", { match_id: "m-1" }, Date.now()))).toEqual([])
    expect(messageProblems(Protocol.streamState("contacts", { known: {} }, 12))).toEqual([])
    expect(messageProblems(Protocol.log("WARN", "careful"))).toEqual([])
  })

  it("the validator catches a malformed message", () => {
    expect(messageProblems({ type: "RECORD", record: { stream: "contacts" } }).length).toBeGreaterThan(0)
    expect(messageProblems({ type: "STATE", state: { type: "STREAM", stream: {} } }).length).toBeGreaterThan(
      0,
    )
  })

  it("the catalogs the source builds for itself are valid configured catalogs", () => {
    const configured = Catalog.configuredAll("incremental")
    const full = {
      streams: configured.streams.map((entry) => ({
        ...entry,
        stream: Catalog.airbyteStream(Catalog.definitions.find((d) => d.name === entry.stream.name)!),
      })),
    }
    expect(configuredCatalogProblems(full)).toEqual([])
  })

  it("refuses a catalog naming an unknown stream or an unsupported mode", () => {
    const unknown = Catalog.decodeConfigured({
      streams: [{ stream: { name: "people" }, sync_mode: "full_refresh", destination_sync_mode: "append" }],
    })
    expect(unknown._tag === "Left" && unknown.left).toContain('no stream "people"')
    const mode = Catalog.decodeConfigured({
      streams: [
        { stream: { name: "taxonomy_products" }, sync_mode: "incremental", destination_sync_mode: "append" },
      ],
    })
    expect(mode._tag === "Left" && mode.left).toContain("supports full_refresh")
  })
})
