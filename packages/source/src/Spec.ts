/**
 * The SPEC message: the config's JSON Schema, rendered from the same Schema that decodes configs
 * (Config.ts), with definitions inlined (Airbyte's config form does not follow $ref) and the key
 * marked airbyte_secret so that Airbyte masks and encrypts it.
 */
import { JsonSchema, type Message } from "@salesintel/airbyte"
import { JSONSchema } from "effect"
import { SourceConfig } from "./Config.ts"

const descriptions: Record<string, string> = {
  api_key: "Your SalesIntel API key (sent as the X-CB-ApiKey header).",
  base_url: "The API's address. Default https://api.salesintel.io.",
  credit_budget: "The most credits one run may spend, all streams together. The run stops before passing it.",
  page_size: "Records per page, 1 to 50.",
  concurrency:
    "The most pages in flight at once, 1 to 256. The connector keeps as many in flight as the measured latency of the provider needs to hold requests_per_minute (rate x latency, with headroom), fewer after a 429, never more than this. Default 64 (enough for 2 s of latency at 1,800 a minute). Pages in flight are paid for before they are checkpointed: a run killed without warning may buy them again.",
  timeout_ms: "Per-request timeout in milliseconds, for free requests (previews, taxonomy).",
  credited_timeout_ms:
    "Timeout in milliseconds of a credited request (search, append). A credited request that times out may have been charged: it counts as spent and is retried only with a new reservation. Default 60000.",
  requests_per_minute: "Client-side request rate ceiling; the provider allows 1,800 a minute per user.",
  contacts: "The contacts stream: named searches, emails to enrich, and when to re-buy stale contacts.",
  companies: "The companies stream: technographics appended to companies by domain or name.",
  taxonomy: "The taxonomy streams: product and vendor terms, or a full crawl of the product taxonomy.",
}

export const connectionSpecification = (): Record<string, unknown> => {
  const schema = JsonSchema.inlineDefinitions(
    JSONSchema.make(SourceConfig) as unknown as { readonly [key: string]: JsonSchema.Json },
  )
  const properties = { ...(schema.properties as Record<string, Record<string, JsonSchema.Json>>) }
  for (const [key, description] of Object.entries(descriptions)) {
    const property = properties[key]
    if (property !== undefined) properties[key] = { ...property, description }
  }
  properties.api_key = { ...properties.api_key, airbyte_secret: true, title: "API key" }
  return { ...schema, title: "SalesIntel source", properties }
}

export const spec = (): Message.SpecMessage => ({
  type: "SPEC",
  spec: {
    connectionSpecification: connectionSpecification(),
    supportsIncremental: true,
    supported_destination_sync_modes: ["append", "overwrite", "append_dedup"],
  },
})
