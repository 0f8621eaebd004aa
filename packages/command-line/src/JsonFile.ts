/**
 * The JSON files the bins take (a config, a catalog, a state), read with errors a user can act on:
 * a file that is not valid JSON says so, what is wrong and where (line and column: JsonSyntax.ts);
 * a whole number too large to be read exactly (past 2^53 - 1, where JSON.parse silently drops
 * digits: 9007199254740993 becomes ...992) is refused with its path instead of being read as
 * another number.
 */
import { readFile } from "node:fs/promises"
import { resolve } from "node:path"
import * as Effect from "effect/Effect"
import * as Either from "effect/Either"
import * as JsonSyntax from "./JsonSyntax.ts"

/** The path of the first whole number in `value` that JSON could not read exactly. */
const inexactNumber = (value: unknown, path: string): string | undefined => {
  if (typeof value === "number")
    return Number.isInteger(value) && !Number.isSafeInteger(value) ? path || "(root)" : undefined
  if (Array.isArray(value)) {
    for (const [index, item] of value.entries()) {
      const found = inexactNumber(item, `${path}[${index}]`)
      if (found !== undefined) return found
    }
    return undefined
  }
  if (value !== null && typeof value === "object")
    for (const [key, item] of Object.entries(value)) {
      const found = inexactNumber(item, path === "" ? key : `${path}.${key}`)
      if (found !== undefined) return found
    }
  return undefined
}

/** `text` as JSON, or what is wrong with it, in words naming `what` (such as "the config file c.json"). */
export const parse = (text: string, what: string): Either.Either<unknown, string> => {
  // RFC 8259 lets a parser ignore a byte order mark, which Windows editors write; JSON.parse does not.
  const json = text.startsWith("\uFEFF") ? text.slice(1) : text
  let value: unknown
  try {
    value = JSON.parse(json)
  } catch (error) {
    // Where the problem is and what it is, from our own scan: V8's position is where it noticed.
    const problem = JsonSyntax.firstProblem(json)
    if (problem === undefined)
      return Either.left(
        `${what} is not valid JSON: ${error instanceof Error ? error.message : String(error)}`,
      )
    const { line, column } = JsonSyntax.positionOf(json, problem.offset)
    return Either.left(`${what} is not valid JSON at line ${line}, column ${column}: ${problem.description}`)
  }
  const inexact = inexactNumber(value, "")
  return inexact === undefined
    ? Either.right(value)
    : Either.left(
        `${what}: ${inexact} is a whole number too large to be read exactly (the largest is 9007199254740991); use a smaller one`,
      )
}

/**
 * The JSON of the file at `path` (relative to `cwd`), or what is wrong with it (unreadable, not
 * JSON, inexact), naming the file as `path` gives it.
 */
export const read = (path: string, role: string, cwd?: string): Effect.Effect<unknown, string> =>
  Effect.flatMap(
    Effect.tryPromise({
      try: () => readFile(cwd === undefined ? path : resolve(cwd, path), "utf8"),
      catch: (error) =>
        `cannot read the ${role} file ${path}: ${error instanceof Error ? error.message : String(error)}`,
    }),
    (text) => parse(text, `the ${role} file ${path}`),
  )
