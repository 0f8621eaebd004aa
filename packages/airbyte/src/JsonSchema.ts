/**
 * JSON Schemas rendered from the Effect Schemas, shaped for Airbyte: definitions inlined (its
 * config form and many destinations do not follow $ref) and, for records, every object left open
 * (additionalProperties: true), since records carry every key the provider sends.
 */
import { JSONSchema, Schema } from "effect"

export type Json = null | boolean | number | string | ReadonlyArray<Json> | { readonly [key: string]: Json }
type JsonObject = { readonly [key: string]: Json }

const isObject = (node: Json): node is JsonObject =>
  node !== null && typeof node === "object" && !Array.isArray(node)

/** Replaces every "$ref": "#/$defs/X" with the definition, and drops $defs. */
export const inlineDefinitions = (root: JsonObject): JsonObject => {
  const definitions = (isObject(root.$defs ?? null) ? root.$defs : {}) as JsonObject
  const visit = (node: Json): Json => {
    if (Array.isArray(node)) return node.map(visit)
    if (!isObject(node)) return node
    const reference = node.$ref
    if (typeof reference === "string" && reference.startsWith("#/$defs/")) {
      const { $ref: _, ...rest } = node
      const target = definitions[reference.slice("#/$defs/".length)]
      return visit({ ...(isObject(target ?? null) ? (target as JsonObject) : {}), ...rest })
    }
    const result: Record<string, Json> = {}
    for (const [key, value] of Object.entries(node)) if (key !== "$defs") result[key] = visit(value)
    return result
  }
  return visit(root) as JsonObject
}

/** Sets additionalProperties: true on every object schema. */
const openObjects = (node: Json): Json => {
  if (Array.isArray(node)) return node.map(openObjects)
  if (!isObject(node)) return node
  const result: Record<string, Json> = {}
  for (const [key, value] of Object.entries(node)) result[key] = openObjects(value)
  if (node.type === "object") result.additionalProperties = true
  return result
}

/**
 * The JSON Schema of records as emitted: the wire (encoded) form of `schema`, since records are
 * the provider's JSON as received, plus the connector's own `_salesintel_*` fields.
 */
export const recordSchema = <A, I>(
  schema: Schema.Schema<A, I>,
  extraProperties: Readonly<Record<string, Json>> = {},
): Record<string, unknown> => {
  const generated = JSONSchema.make(Schema.encodedSchema(schema)) as unknown as JsonObject
  const { $schema, ...body } = inlineDefinitions(generated)
  const opened = openObjects(body) as JsonObject
  const properties = { ...((opened.properties ?? {}) as JsonObject), ...extraProperties }
  return { $schema: $schema ?? "http://json-schema.org/draft-07/schema#", ...opened, properties }
}
