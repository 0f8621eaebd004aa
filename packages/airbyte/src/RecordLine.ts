/**
 * The RECORD line: how the writer lays one out, and the fast path that reads one back (checked by
 * hand instead of through the Schema, which would cost a fifth of a load's CPU). They sit together
 * because the reader reuses the data's text only when the line is laid out exactly as `write` lays
 * it out: `{"type":"RECORD","record":{"stream":...,"data":{...},"emitted_at":N}}`. Only text that
 * jsonb takes as it is is kept: exactly one JSON object, with no `\u0000` or surrogate escape (the
 * NUL and lone surrogate policy needs the parsed value; such records are stringified and cleaned).
 */
import type { JsonObject, RecordMessage } from "./Message.ts"

const prefixes = new Map<string, string>()
const prefixOf = (stream: string): string => {
  let prefix = prefixes.get(stream)
  if (prefix === undefined) {
    prefix = `{"type":"RECORD","record":{"stream":${JSON.stringify(stream)},"data":`
    // Bounded: stream names come from the input, which could hold any number of them.
    if (prefixes.size < 100) prefixes.set(stream, prefix)
  }
  return prefix
}

const suffixOf = (emittedAt: number): string => `,"emitted_at":${JSON.stringify(emittedAt)}}}`

/** A RECORD as one line (without the newline): only the protocol's fields, never the extras. */
export const write = (message: RecordMessage): string => {
  const { namespace, stream, data, emitted_at } = message.record
  if (namespace !== undefined) return JSON.stringify({ type: "RECORD", record: message.record })
  return `${prefixOf(stream)}${message.dataText ?? JSON.stringify(data)}${suffixOf(emitted_at)}`
}

const backslash = 92
const quote = 34
const openBrace = 123
const closeBrace = 125
const openBracket = 91
const closeBracket = 93

/** Whether the character at `at` is escaped: an odd number of backslashes before it. */
const isEscaped = (text: string, at: number): boolean => {
  let slashes = 0
  for (let index = at - 1; index >= 0 && text.charCodeAt(index) === backslash; index--) slashes++
  return slashes % 2 === 1
}

/**
 * Whether `text` (from a line JSON.parse accepted) is exactly one object, with no `\u0000` and
 * no `\uD800`-`\uDFFF` escape. Strings are skipped with indexOf rather than walked character by
 * character: most of a record is string content, and this runs once per record (the walk cost
 * about as much as JSON.parse itself, measured).
 */
export const isCleanObject = (text: string): boolean => {
  if (text.charCodeAt(0) !== openBrace) return false
  // A `\u` escape can only sit inside a string (the text is valid JSON); most records have none.
  for (let at = text.indexOf("\\u"); at !== -1; at = text.indexOf("\\u", at + 2)) {
    if (isEscaped(text, at)) continue // an escaped backslash followed by a plain "u"
    // Lower-cased by setting bit 5 (digits already have it): "d" then 8, 9 or a-f is a surrogate.
    const first = text.charCodeAt(at + 2) | 0x20
    const second = text.charCodeAt(at + 3) | 0x20
    if (first === 100 && second >= 56) return false
    if (text.startsWith("0000", at + 2)) return false
  }
  let depth = 0
  const end = text.length
  for (let index = 0; index < end; index++) {
    const code = text.charCodeAt(index)
    if (code === quote) {
      let close = text.indexOf('"', index + 1)
      while (close !== -1 && isEscaped(text, close)) close = text.indexOf('"', close + 1)
      if (close === -1) return false
      index = close
    } else if (code === openBrace || code === openBracket) depth++
    else if (code === closeBrace || code === closeBracket) {
      depth--
      if (depth === 0) return index === end - 1
    }
  }
  return false
}

const isObject = (value: unknown): value is JsonObject =>
  typeof value === "object" && value !== null && !Array.isArray(value)

/**
 * A parsed line as a RECORD when it has the expected shape (the same checks as Message.RecordMessage,
 * without the Schema's cost), with its data's text when the line is laid out as `write` does and
 * that text is clean; `undefined` for anything else, which the Schemas then decode.
 */
export const read = (json: unknown, line: string): RecordMessage | undefined => {
  if (!isObject(json) || json.type !== "RECORD") return undefined
  const record = json.record
  if (!isObject(record) || record.namespace !== undefined) return undefined
  const { stream, data, emitted_at } = record
  if (typeof stream !== "string" || !isObject(data) || typeof emitted_at !== "number") return undefined
  const fields = { stream, data, emitted_at }
  const dataText = textOfData(line, stream, emitted_at)
  return dataText === undefined
    ? { type: "RECORD", record: fields }
    : { type: "RECORD", record: fields, dataText }
}

/** The data's text on a line laid out as `write` lays it out, when it is clean; else undefined. */
const textOfData = (line: string, stream: string, emittedAt: number): string | undefined => {
  const prefix = prefixOf(stream)
  const suffix = suffixOf(emittedAt)
  if (line.length <= prefix.length + suffix.length || !line.startsWith(prefix) || !line.endsWith(suffix))
    return undefined
  const text = line.slice(prefix.length, line.length - suffix.length)
  return isCleanObject(text) ? text : undefined
}
