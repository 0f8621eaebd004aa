/**
 * Where text stops being JSON, and why, in a user's words: what JsonFile says when JSON.parse
 * refuses a file. V8's own message points at the character where it noticed, which is often not
 * the one to fix (a trailing comma before `}` is reported at the `}`, on the next line), its
 * wording changes between Node versions, and some of its messages give no position at all. So a
 * small scanner of the JSON grammar (RFC 8259) finds the first problem itself: a trailing comma at
 * the comma, a string left open at its opening quote, a bracket never closed where the file ends
 * (naming the bracket), a wrong closing bracket at itself.
 */

/** A place in the text as an editor shows it: line and column from 1, columns in characters. */
export interface Position {
  readonly line: number
  readonly column: number
}

/** The first problem of a text that is not JSON: where it is (UTF-16 offset) and what it is. */
export interface Problem {
  readonly offset: number
  readonly description: string
}

/** The line and column of `offset` in `text`, counting characters (code points), not UTF-16 units. */
export const positionOf = (text: string, offset: number): Position => {
  const lines = text.slice(0, offset).split("\n")
  return { line: lines.length, column: [...(lines.at(-1) ?? "")].length + 1 }
}

const at = (position: Position) => `line ${position.line}, column ${position.column}`

/** Thrown inside the scan only, caught by firstProblem: the first problem ends the scan. */
class Stop {
  constructor(readonly problem: Problem) {}
}

/** The text and how far the scan has read: each function below reads one part of the grammar. */
interface Scan {
  readonly text: string
  offset: number
}

const whitespace = new Set([" ", "\t", "\n", "\r"])
const closerOf = { "{": "}", "[": "]" } as const
const aValue = "a value: a string in double quotes, a number, true, false, null, an object or an array"

const stop = (offset: number, description: string): never => {
  throw new Stop({ offset, description })
}

const skipSpace = (scan: Scan) => {
  while (scan.offset < scan.text.length && whitespace.has(scan.text[scan.offset] ?? "")) scan.offset++
}

const shown = (scan: Scan) => {
  const char = String.fromCodePoint(scan.text.codePointAt(scan.offset) ?? 0)
  return char === "'" ? `"'"` : `'${char}'`
}

/** What is wrong with the character at the scan's offset, where `expected` should be. */
const unexpected = (scan: Scan, expected: string): never => {
  const char = scan.text[scan.offset]
  if (char === "/") return stop(scan.offset, "a comment: JSON allows none")
  if (char === "'") return stop(scan.offset, `${shown(scan)}: JSON strings and names take double quotes (")`)
  const word = /^[A-Za-z_$][\w$]*/.exec(scan.text.slice(scan.offset))?.[0]
  return stop(scan.offset, `unexpected ${word ?? shown(scan)}: expected ${expected}`)
}

/**
 * The file ended inside the bracket at `opener`: said after the last character that is not
 * whitespace, where the missing closing bracket goes.
 */
const unclosed = (scan: Scan, opener: number): never => {
  const bracket = scan.text[opener] as "{" | "["
  return stop(
    scan.text.trimEnd().length,
    `the file ends before the ${bracket} at ${at(positionOf(scan.text, opener))} is closed (expected ${closerOf[bracket]})`,
  )
}

const controlCharacter = (char: string) =>
  `a control character (U+${char.charCodeAt(0).toString(16).toUpperCase().padStart(4, "0")}) inside a string: write it as an escape (\\t, \\n, \\u0000)`

/** A string from its opening quote; what it holds (escapes as written). */
const string = (scan: Scan): string => {
  const opening = scan.offset
  scan.offset++
  for (;;) {
    const char = scan.text[scan.offset]
    if (char === undefined || char === "\n" || char === "\r")
      return stop(opening, `the string that starts here is not closed on its line (a closing " is missing)`)
    if (char === '"') {
      scan.offset++
      return scan.text.slice(opening + 1, scan.offset - 1)
    }
    if (char === "\\") {
      const escaped = /^\\(["\\/bfnrt]|u[0-9A-Fa-f]{4})/.exec(scan.text.slice(scan.offset))?.[0]
      if (escaped === undefined)
        stop(
          scan.offset,
          `${scan.text.slice(scan.offset, scan.offset + 2)} is not a JSON escape (\\" \\\\ \\/ \\b \\f \\n \\r \\t \\uXXXX)`,
        )
      scan.offset += escaped?.length ?? 0
      continue
    }
    if (char < " ") stop(scan.offset, controlCharacter(char))
    scan.offset++
  }
}

const number = (scan: Scan) => {
  const found = /^-?(0|[1-9]\d*)(\.\d+)?([eE][+-]?\d+)?/.exec(scan.text.slice(scan.offset))?.[0]
  if (found === undefined) return unexpected(scan, aValue)
  scan.offset += found.length
  if (/^[\d.eE]/.test(scan.text[scan.offset] ?? ""))
    stop(scan.offset, `unexpected ${shown(scan)} in the number ${found}${scan.text[scan.offset] ?? ""}`)
}

const value = (scan: Scan): void => {
  skipSpace(scan)
  const char = scan.text[scan.offset]
  if (char === undefined) stop(scan.text.trimEnd().length, `the file ends where ${aValue} was expected`)
  else if (char === '"') string(scan)
  else if (char === "{") object(scan)
  else if (char === "[") array(scan)
  else if (/^-?\d/.test(scan.text.slice(scan.offset, scan.offset + 2))) number(scan)
  else {
    const word = /^(true|false|null)(?![\w$])/.exec(scan.text.slice(scan.offset))?.[0]
    if (word === undefined) unexpected(scan, aValue)
    scan.offset += word?.length ?? 0
  }
}

/** After an item of the bracket at `opener`: true past its closer, false past a comma. */
const next = (scan: Scan, opener: number, after: string): boolean => {
  skipSpace(scan)
  const bracket = scan.text[opener] as "{" | "["
  const char = scan.text[scan.offset]
  if (char === undefined) return unclosed(scan, opener)
  if (char === closerOf[bracket]) {
    scan.offset++
    return true
  }
  if (char === ",") {
    const comma = scan.offset
    scan.offset++
    skipSpace(scan)
    const following = scan.text[scan.offset]
    if (following === "}" || following === "]")
      stop(comma, `a trailing comma: JSON allows none before ${following}; remove it`)
    return false
  }
  if (char === "}" || char === "]")
    stop(
      scan.offset,
      `the ${bracket} at ${at(positionOf(scan.text, opener))} is closed by ${char}, not ${closerOf[bracket]}`,
    )
  return unexpected(scan, `, or ${closerOf[bracket]} after ${after}`)
}

/** A property's name and its colon. */
const propertyName = (scan: Scan, opener: number): string => {
  skipSpace(scan)
  if (scan.offset >= scan.text.length) unclosed(scan, opener)
  if (scan.text[scan.offset] !== '"') unexpected(scan, "a property name in double quotes")
  const start = scan.offset
  const name = string(scan)
  skipSpace(scan)
  if (scan.offset >= scan.text.length) unclosed(scan, opener)
  if (scan.text[scan.offset] === ":") {
    scan.offset++
    return name
  }
  // `"api_key: "k"`: the name ran on past its colon to the value's opening quote.
  if (name.includes(":"))
    stop(start + 1 + name.indexOf(":"), `a closing " is missing before this ':' (the name reads "${name}")`)
  return unexpected(scan, `: after the property name "${name}"`)
}

const object = (scan: Scan) => {
  const opener = scan.offset
  scan.offset++
  skipSpace(scan)
  if (scan.text[scan.offset] === "}") {
    scan.offset++
    return
  }
  for (;;) {
    const name = propertyName(scan, opener)
    value(scan)
    if (next(scan, opener, `the value of "${name}"`)) return
  }
}

const array = (scan: Scan) => {
  const opener = scan.offset
  scan.offset++
  skipSpace(scan)
  if (scan.text[scan.offset] === "]") {
    scan.offset++
    return
  }
  for (let index = 0; ; index++) {
    value(scan)
    if (next(scan, opener, `item [${index}]`)) return
  }
}

const document = (scan: Scan) => {
  skipSpace(scan)
  if (scan.offset >= scan.text.length) stop(0, `the file is empty: expected ${aValue}`)
  value(scan)
  skipSpace(scan)
  if (scan.offset < scan.text.length)
    unexpected(scan, "the end of the file after the JSON value (a file holds one value)")
}

/**
 * The first problem of `text` as JSON, or undefined when the scanner finds none (then JSON.parse's
 * own message is the one to give). A nesting too deep for the stack ends the scan without one.
 */
export const firstProblem = (text: string): Problem | undefined => {
  try {
    document({ text, offset: 0 })
    return undefined
  } catch (thrown) {
    if (thrown instanceof Stop) return thrown.problem
    if (thrown instanceof RangeError) return undefined
    throw thrown
  }
}
