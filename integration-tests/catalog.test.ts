/**
 * The catalog declares every field a record carries: each record the source reads from the
 * sandbox (every stream, the connector's added fields included) has every key, at every depth,
 * declared in its stream's JSON schema, typed, and validates against it; objects stay open to
 * keys the provider adds later.
 */
import { type Message, Streams } from "@salesintel/airbyte"
import { Commands } from "@salesintel/source"
import { Ajv } from "ajv"
import addFormats from "ajv-formats"
import * as Chunk from "effect/Chunk"
import * as Effect from "effect/Effect"
import * as Stream from "effect/Stream"
import { describe, expect, it } from "vitest"
import { fastPace, sandboxForFile } from "./sandbox.ts"

type JsonSchemaNode = { readonly [key: string]: unknown }

const isNode = (value: unknown): value is JsonSchemaNode =>
  typeof value === "object" && value !== null && !Array.isArray(value)

/** The alternatives a node stands for (anyOf branches, flattened). */
const alternatives = (node: JsonSchemaNode): ReadonlyArray<JsonSchemaNode> =>
  Array.isArray(node.anyOf) ? node.anyOf.filter(isNode).flatMap(alternatives) : [node]

/**
 * The paths of `value` that `schema` does not declare: an object key with no `properties` entry,
 * or a value with no `type` anywhere in its schema.
 */
const undeclared = (schema: JsonSchemaNode, value: unknown, path: string): ReadonlyArray<string> => {
  const options = alternatives(schema)
  if (!options.some((option) => option.type !== undefined)) return [`${path} (no type)`]
  if (Array.isArray(value)) {
    const items = options.find((option) => isNode(option.items))?.items
    if (!isNode(items)) return value.length === 0 ? [] : [`${path}[] (no items)`]
    return value.flatMap((item, index) => undeclared(items, item, `${path}[${index}]`))
  }
  if (isNode(value)) {
    const properties = options.find((option) => isNode(option.properties))?.properties
    if (!isNode(properties)) return Object.keys(value).length === 0 ? [] : [`${path} (no properties)`]
    return Object.entries(value).flatMap(([key, field]) => {
      const declared = properties[key]
      const fieldPath = path === "" ? key : `${path}.${key}`
      return isNode(declared) ? undeclared(declared, field, fieldPath) : [fieldPath]
    })
  }
  return []
}

/** Whether any object schema in `node` closes itself to extra keys. */
const closesObjects = (node: unknown): boolean => {
  if (Array.isArray(node)) return node.some(closesObjects)
  if (!isNode(node)) return false
  if (node.additionalProperties === false) return true
  return Object.values(node).some(closesObjects)
}

const sandbox = sandboxForFile({ seed: 11, contacts: 20_000, companies: 2_000 })

describe("discover's catalog against the records read", () => {
  it("declares, types and validates every field of every stream's records", { timeout: 60_000 }, async () => {
    const config = {
      api_key: "sandbox-full",
      requests_per_minute: fastPace,
      base_url: sandbox.url,
      credit_budget: 5_000,
      retry: { initial_delay_ms: 5, max_delay_ms: 50 },
      contacts: { searches: [{ name: "it", filters: { job_departments: ["it_is"], job_levels: ["dir"] } }] },
      companies: { domains: sandbox.dataset.companies.slice(0, 20).map((company) => company.domain) },
      taxonomy: { products: ["cloud"] },
    }
    const catalog = {
      streams: Streams.names.map((name) => ({
        stream: { name },
        sync_mode: "full_refresh",
        destination_sync_mode: "overwrite",
      })),
    }
    const messages = Chunk.toReadonlyArray(
      await Effect.runPromise(Stream.runCollect(Commands.read({ config, catalog }))),
    )
    const ajv = new Ajv({ strict: false, allErrors: true })
    addFormats.default(ajv)
    for (const entry of Streams.all) {
      const records = messages.flatMap((message: Message.Message) =>
        message.type === "RECORD" && message.record.stream === entry.name ? [message.record.data] : [],
      )
      expect(records.length, entry.name).toBeGreaterThan(0)
      const schema = entry.jsonSchema
      expect(closesObjects(schema), entry.name).toBe(false)
      const validate = ajv.compile(schema)
      for (const record of records) {
        expect(undeclared(schema, record, ""), entry.name).toEqual([])
        expect(validate(record) ? [] : validate.errors, entry.name).toEqual([])
      }
    }
    // The fields the issue names, declared now.
    const contactFields = Object.keys(Streams.streams.contacts.jsonSchema.properties as object)
    expect(contactFields).toEqual(
      expect.arrayContaining(["_score", "cds_batch_id", "company_revenue", "company_size_range"]),
    )
    const companyFields = Object.keys(Streams.streams.companies.jsonSchema.properties as object)
    expect(companyFields).toEqual(expect.arrayContaining(["is_international", "verified"]))
  })

  it("finds an undeclared field (the check can fail)", () => {
    const schema = Streams.streams.companies.jsonSchema
    expect(undeclared(schema, { company_id: 1, surprise: true, company: { id: 1, odd: 2 } }, "")).toEqual([
      "surprise",
      "company.odd",
    ])
  })
})
