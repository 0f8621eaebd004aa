/**
 * The SPEC message: the config's JSON Schema, rendered from the same Schema that decodes configs
 * (Config.ts) and shaped for Airbyte's config form and its connector tests: definitions inlined
 * (the form does not follow $ref), refinements' allOf merged into their field, objects left open
 * (additionalProperties is never false; the decoder still refuses unknown keys with the key's
 * path), the Schema's generated titles ("positive", "lessThanOrEqualTo(50)") replaced by the
 * human title and description of every field (SpecText.ts), defaults taken from the Schema, and
 * the key marked airbyte_secret so that Airbyte masks and encrypts it.
 */
import { JsonSchema, type Message } from "@salesintel/airbyte"
import * as JSONSchema from "effect/JSONSchema"
import * as Schema from "effect/Schema"
import { excludableFields, SourceConfig } from "./Config.ts"
import { fieldTexts } from "./SpecText.ts"

/** Where the form's "documentation" link points: the provider's API documentation. */
export const documentationUrl = "https://api.salesintel.io/"

type Json = JsonSchema.Json
type JsonObject = { readonly [key: string]: Json }

const isObject = (node: Json | undefined): node is JsonObject =>
  node !== undefined && node !== null && typeof node === "object" && !Array.isArray(node)

/** A field's node without the Schema's generated words, its refinements' allOf merged in. */
const mergeAllOf = (node: JsonObject): JsonObject => {
  const { allOf, title: _title, description: _description, ...rest } = node
  const parts = Array.isArray(allOf) ? allOf.filter(isObject).map(mergeAllOf) : []
  return Object.assign({}, ...parts, rest) as JsonObject
}

/** A value the Schema fills in when the field is left out, if it is a plain one (not a list). */
const defaultAt = (defaults: unknown, name: string): Json | undefined => {
  if (typeof defaults !== "object" || defaults === null) return undefined
  const value = (defaults as Record<string, unknown>)[name]
  return typeof value === "string" || typeof value === "number" || typeof value === "boolean"
    ? value
    : undefined
}

/** A missing text is a bug the spec test reports: the field is named rather than left bare. */
const textOf = (path: string) =>
  fieldTexts[path] ?? { title: path, description: `(no description for ${path})` }

const shape = (node: Json, path: string, defaults: unknown): Json => {
  if (Array.isArray(node)) return node.map((item) => shape(item, path, defaults))
  if (!isObject(node)) return node
  const merged = mergeAllOf(node)
  const result: Record<string, Json> = {}
  for (const [key, value] of Object.entries(merged)) {
    if (key === "properties" && isObject(value)) {
      const properties: Record<string, Json> = {}
      for (const [order, [name, property]] of Object.entries(value).entries()) {
        const fieldPath = path === "" ? name : `${path}.${name}`
        const inner = defaults === undefined ? undefined : (defaults as Record<string, unknown>)[name]
        const fallback = defaultAt(defaults, name)
        properties[name] = {
          ...(shape(property, fieldPath, inner) as JsonObject),
          ...textOf(fieldPath),
          order,
          ...(fallback === undefined ? {} : { default: fallback }),
        }
      }
      result[key] = properties
    } else if (key === "items") {
      result[key] = shape(value, path, undefined)
    } else if (key === "additionalProperties") {
      result[key] = true
    } else if (key === "required" && Array.isArray(value) && value.length === 0) {
      // An empty list says nothing.
    } else {
      result[key] = value
    }
  }
  return result
}

/** The defaults the Schema fills into a config with every section present and nothing set. */
const schemaDefaults = (): unknown => {
  const filled = Schema.decodeUnknownSync(SourceConfig)({
    api_key: "-",
    credit_budget: 0,
    contacts: {},
    companies: {},
    taxonomy: {},
  })
  // The key is Redacted: not a default to show, and never one to print.
  const { api_key: _, credit_budget: __, ...rest } = filled
  return rest
}

export const connectionSpecification = (): Record<string, unknown> => {
  const rendered = JsonSchema.inlineDefinitions(
    JSONSchema.make(SourceConfig) as unknown as { readonly [key: string]: JsonSchema.Json },
  )
  const shaped = shape(rendered, "", schemaDefaults()) as JsonObject
  const properties = { ...(shaped.properties as Readonly<Record<string, JsonObject>>) }
  properties.api_key = { ...properties.api_key, airbyte_secret: true }
  // The form offers the names exclude_fields accepts (a multi-select), the decoder's own list.
  for (const stream of ["contacts", "companies"] as const) {
    const section = properties[stream] as JsonObject
    const sectionProperties = section.properties as Readonly<Record<string, JsonObject>>
    const excluded = sectionProperties.exclude_fields as JsonObject
    properties[stream] = {
      ...section,
      properties: {
        ...sectionProperties,
        exclude_fields: {
          ...excluded,
          items: { type: "string", enum: excludableFields(stream) },
        },
      },
    }
  }
  return { ...shaped, title: "SalesIntel source", properties }
}

export const spec = (): Message.SpecMessage => ({
  type: "SPEC",
  spec: {
    documentationUrl,
    connectionSpecification: connectionSpecification(),
    supportsIncremental: true,
    supported_destination_sync_modes: ["append", "overwrite", "append_dedup"],
  },
})
