/**
 * JSON Schemas rendered from the Effect Schemas, shaped for Airbyte: definitions inlined (its
 * config form and many destinations do not follow $ref) and, for records, every object left open
 * (additionalProperties: true), since records carry every key the provider sends.
 */
import * as JSONSchema from "effect/JSONSchema"
import * as Schema from "effect/Schema"

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

/**
 * Sets additionalProperties: true on every object schema, and drops the title and description
 * Effect derives from refinements ("minLength(1)", "an integer"): names for a developer, not for
 * a catalog's reader.
 */
const openObjects = (node: Json): Json => {
  if (Array.isArray(node)) return node.map(openObjects)
  if (!isObject(node)) return node
  const result: Record<string, Json> = {}
  // A string: a field named "title" (under properties) has a schema object for its value.
  for (const [key, value] of Object.entries(node))
    if (!((key === "title" || key === "description") && typeof value === "string"))
      result[key] = openObjects(value)
  if (node.type === "object") result.additionalProperties = true
  return result
}

/** The one non-null JSON type a node declares, if it declares exactly one. */
const singleType = (node: JsonObject): string | undefined => {
  const types = Array.isArray(node.type) ? node.type : [node.type]
  const named = types.filter((type): type is string => typeof type === "string" && type !== "null")
  return named.length === 1 ? named[0] : undefined
}

/**
 * Airbyte's typing convention, which typed destinations map to columns: one JSON type per field,
 * plus "null" where it can be missing, as a type array (`{"type": ["string", "null"]}`). An
 * `anyOf` whose branches are null and one type (the same type more than once counts once: a loose
 * number is a number) becomes that type array. Anything else is a schema no destination can map,
 * so it is refused when the registry is built rather than shipped.
 */
export const typeArrays = (node: Json, path = "$"): Json => {
  if (Array.isArray(node)) return node.map((item, index) => typeArrays(item, `${path}[${index}]`))
  if (!isObject(node)) return node
  const result: Record<string, Json> = {}
  for (const [key, value] of Object.entries(node))
    if (key !== "anyOf") result[key] = typeArrays(value, `${path}.${key}`)
  const branches = node.anyOf
  if (branches === undefined) return result
  const members = (Array.isArray(branches) ? branches : []).map((branch) => typeArrays(branch, path))
  const typed = members.filter(isObject).filter((member) => member.type !== "null")
  const nullable = members.some((member) => isObject(member) && member.type === "null")
  const type = typed[0] === undefined ? undefined : singleType(typed[0])
  if (type === undefined || typed.some((member) => singleType(member) !== type))
    throw new Error(`${path}: a union of several types (${JSON.stringify(node)}) has no one column type`)
  const [first] = typed
  return { ...result, ...first, type: nullable ? [type, "null"] : type }
}

/**
 * The JSON Schema of records as emitted: the decoded (type) side of `schema`, since the source
 * writes every loosely sent value in its declared type (Conform.ts: a count sent as "12" goes out
 * as 12), plus the connector's own `_salesintel_*` fields; in type arrays, never anyOf.
 */
export const recordSchema = <A, I>(
  schema: Schema.Schema<A, I>,
  extraProperties: Readonly<Record<string, Json>> = {},
): Record<string, unknown> => {
  const generated = JSONSchema.make(Schema.typeSchema(schema)) as unknown as JsonObject
  const { $schema, ...body } = inlineDefinitions(generated)
  const opened = typeArrays(openObjects(body)) as JsonObject
  const properties = { ...((opened.properties ?? {}) as JsonObject), ...extraProperties }
  return { $schema: $schema ?? "http://json-schema.org/draft-07/schema#", ...opened, properties }
}
