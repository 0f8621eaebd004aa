/**
 * The JSON text of a record's data as it arrived on an input line, kept so that `_raw` can be
 * written from it instead of stringifying the parsed object again. Only text that jsonb takes as
 * it is gets here: exactly one JSON object, and no `\u0000` or surrogate escape (the NUL and lone
 * surrogate policy of Nul.ts needs the parsed value; such records are stringified and cleaned).
 */

/** Data objects (as parsed) and their text on the line. */
const texts = new WeakMap<object, string>()

/** JSON text to write into a jsonb cell as it is. */
export class JsonText {
  constructor(readonly text: string) {}
}

export const textOf = (data: object): JsonText | undefined => {
  const text = texts.get(data)
  return text === undefined ? undefined : new JsonText(text)
}

const prefixes = new Map<string, string>()
const prefixOf = (stream: string): string => {
  let prefix = prefixes.get(stream)
  if (prefix === undefined) {
    prefix = `{"type":"RECORD","record":{"stream":${JSON.stringify(stream)},"data":`
    if (prefixes.size < 100) prefixes.set(stream, prefix)
  }
  return prefix
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

/**
 * Remembers the text of `data` when `line` is the usual serialization of a RECORD message
 * (`{"type":"RECORD","record":{"stream":...,"data":{...},"emitted_at":N}}`) and the data's text
 * is safe for jsonb as it is; otherwise nothing (the record is stringified).
 */
export const remember = (line: string, stream: string, data: object, emittedAt: number): void => {
  const prefix = prefixOf(stream)
  const suffix = `,"emitted_at":${emittedAt}}}`
  if (line.length <= prefix.length + suffix.length || !line.startsWith(prefix) || !line.endsWith(suffix))
    return
  const text = line.slice(prefix.length, line.length - suffix.length)
  if (isCleanObject(text)) texts.set(data, text)
}
