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
const lowerU = 117

const isHex = (code: number): boolean =>
  (code >= 48 && code <= 57) || (code >= 65 && code <= 70) || (code >= 97 && code <= 102)

/**
 * Whether `text` (from a line JSON.parse accepted) is exactly one object, with no `\u0000` and
 * no `\uD800`-`\uDFFF` escape.
 */
const isCleanObject = (text: string): boolean => {
  if (text.charCodeAt(0) !== openBrace) return false
  let depth = 0
  let inString = false
  const end = text.length
  for (let index = 0; index < end; index++) {
    const code = text.charCodeAt(index)
    if (inString) {
      if (code === quote) inString = false
      else if (code === backslash) {
        index++
        if (text.charCodeAt(index) === lowerU) {
          const hex = text.slice(index + 1, index + 5).toLowerCase()
          if (hex === "0000" || (hex.charCodeAt(0) === 100 && hex.charCodeAt(1) >= 56)) return false
          if (!isHex(hex.charCodeAt(0))) return false
          index += 4
        }
      }
    } else if (code === quote) inString = true
    else if (code === openBrace || code === openBracket) depth++
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
