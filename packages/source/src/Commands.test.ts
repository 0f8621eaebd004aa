import { type Message, Streams } from "@salesintel/airbyte"
import * as Effect from "effect/Effect"
import * as Stream from "effect/Stream"
import { describe, expect, it } from "vitest"
import { messageProblems } from "../../airbyte/src/testing/AirbyteSchema.ts"
import * as Commands from "./Commands.ts"
import { definitions } from "./Definitions.ts"

const collect = (stream: Stream.Stream<Message.Message>) =>
  Effect.runPromise(Stream.runCollect(stream)).then((chunk) => [...chunk])

describe("the commands' messages validate against the official Airbyte schema", () => {
  it("SPEC", async () => {
    const [spec] = await collect(Commands.spec())
    expect(messageProblems(spec)).toEqual([])
    const properties = (spec as Message.SpecMessage).spec.connectionSpecification.properties as Record<
      string,
      Record<string, unknown>
    >
    expect(properties.api_key?.airbyte_secret).toBe(true)
    expect(JSON.stringify(spec)).not.toContain("$ref")
  })

  it("CATALOG, with primary keys and cursors declared", async () => {
    const [catalog] = await collect(Commands.discover({ api_key: "k", credit_budget: 1 }))
    expect(messageProblems(catalog)).toEqual([])
    const streams = (catalog as Message.CatalogMessage).catalog.streams
    expect(streams.map((s) => s.name)).toEqual([
      "taxonomy_categories",
      "taxonomy_products",
      "contacts",
      "companies",
      "_rejected",
    ])
    const contacts = streams.find((s) => s.name === "contacts")
    expect(contacts?.source_defined_primary_key).toEqual([["match_id"]])
    expect(contacts?.default_cursor_field).toEqual(["_salesintel_fetched_at"])
    expect(contacts?.supported_sync_modes).toEqual(["full_refresh", "incremental"])
  })

  it("CONNECTION_STATUS for a bad config", async () => {
    const [status] = await collect(Commands.check({ api_key: "k" }))
    expect(messageProblems(status)).toEqual([])
    expect((status as Message.ConnectionStatusMessage).connectionStatus.status).toBe("FAILED")
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
      expect((messages[0] as Message.TraceErrorMessage).trace.error.failure_type).toBe("config_error")
    }
  })

  it("has a definition for every stream of the registry, and each reads its own entry", () => {
    for (const entry of Streams.all) expect(definitions[entry.name].stream).toBe(entry)
  })
})
