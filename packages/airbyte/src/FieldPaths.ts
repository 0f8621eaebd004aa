/**
 * Fields left out of records: the paths a stream's JSON schema declares (the names the provider
 * sends, dotted for nested fields, walking through arrays), and a remover that takes a set of them
 * out of a record before it leaves the source. A RECORD carries its data three ways in process
 * (the JSON `data`, the text of that JSON for `_raw` and the value the source decoded, see
 * Message.ts), so the remover takes the fields out of all three.
 */
import type { RecordMessage } from "./Message.ts"

/** Paths to remove, as a tree of field names: `true` drops the field, a subtree goes inside it. */
export type PathTree = ReadonlyMap<string, PathTree | true>

type JsonNode = Readonly<Record<string, unknown>>

const isObject = (value: unknown): value is JsonNode =>
  typeof value === "object" && value !== null && !Array.isArray(value)

/**
 * Every field path a record JSON schema declares, dotted ("company.revenue"; arrays are walked
 * through, so "addresses.street_1" names the field in every address). Follows properties, items
 * and the branches of anyOf/oneOf/allOf (a nullable field is an anyOf with null).
 */
export const declaredPaths = (jsonSchema: JsonNode): ReadonlySet<string> => {
  const paths = new Set<string>()
  const visit = (node: unknown, prefix: string): void => {
    if (Array.isArray(node)) {
      for (const branch of node) visit(branch, prefix)
      return
    }
    if (!isObject(node)) return
    if (isObject(node.properties))
      for (const [name, child] of Object.entries(node.properties)) {
        const path = prefix === "" ? name : `${prefix}.${name}`
        paths.add(path)
        visit(child, path)
      }
    if (node.items !== undefined) visit(node.items, prefix)
    for (const key of ["anyOf", "oneOf", "allOf"]) if (node[key] !== undefined) visit(node[key], prefix)
  }
  visit(jsonSchema, "")
  return paths
}

type TreeBuilder = Map<string, TreeBuilder | true>

/** The tree of the given dotted paths; a path inside one already dropped adds nothing. */
export const treeOf = (paths: Iterable<string>): PathTree => {
  const root: TreeBuilder = new Map()
  for (const path of paths) {
    const names = path.split(".")
    let level = root
    for (const [index, name] of names.entries()) {
      const existing = level.get(name)
      if (existing === true) break
      if (index === names.length - 1) {
        level.set(name, true)
        break
      }
      const next: TreeBuilder = existing ?? new Map()
      level.set(name, next)
      level = next
    }
  }
  return root
}

/**
 * `value` without the fields of `tree`. Only the objects and arrays on a removed path are copied;
 * everything else is shared, and a value with none of the fields is returned as it is (the same
 * reference), so the caller can tell that nothing changed.
 */
export const remove = (value: unknown, tree: PathTree): unknown => {
  if (Array.isArray(value)) {
    let copy: Array<unknown> | undefined
    for (let index = 0; index < value.length; index++) {
      const item: unknown = value[index]
      const next = remove(item, tree)
      if (next !== item) {
        copy ??= value.slice()
        copy[index] = next
      }
    }
    return copy ?? value
  }
  if (!isObject(value)) return value
  let changed = false
  for (const [name, inner] of tree) {
    if (!Object.hasOwn(value, name)) continue
    if (inner === true || remove(value[name], inner) !== value[name]) {
      changed = true
      break
    }
  }
  if (!changed) return value
  const result: Record<string, unknown> = {}
  for (const [name, field] of Object.entries(value)) {
    const inner = tree.get(name)
    if (inner === true) continue
    result[name] = inner === undefined ? field : remove(field, inner)
  }
  return result
}

/**
 * A record without the fields of `tree`, in all three forms it travels in: `data`, the decoded
 * value (same field names: the record Schemas do not rename) and `dataText`, which is dropped
 * when the data changed (the writer and the loader then render it from `data`).
 */
export const removeFromRecord = (message: RecordMessage, tree: PathTree): RecordMessage => {
  const data = remove(message.record.data, tree) as RecordMessage["record"]["data"]
  const decodedValue = message.decoded === undefined ? undefined : remove(message.decoded.value, tree)
  const decoded =
    message.decoded === undefined || decodedValue === message.decoded.value
      ? message.decoded
      : { ...message.decoded, value: decodedValue }
  if (data === message.record.data && decoded === message.decoded) return message
  const { dataText: _, ...rest } = message
  return { ...rest, record: { ...message.record, data }, decoded }
}
