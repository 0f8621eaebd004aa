/**
 * Turns a Schema parse error into the one thing a user needs to fix it: the path of the bad value
 * (`filters.job_levels[1]`, `search_results[3].company.id`) and what was expected there.
 */
import * as ParseResult from "effect/ParseResult"

export interface ParseIssue {
  /** Dotted path with [index] for array positions; "(root)" when the whole value is wrong. */
  readonly path: string
  readonly description: string
}

export const formatPath = (segments: ReadonlyArray<PropertyKey>): string =>
  segments
    .map((segment) => (typeof segment === "number" ? `[${segment}]` : `.${String(segment)}`))
    .join("")
    .replace(/^\./, "")

/** The first issue of a parse error, its path prefixed with where the parsed value sits. */
export const fromParseError = (
  error: ParseResult.ParseError,
  prefix: ReadonlyArray<PropertyKey> = [],
): ParseIssue => {
  const [first] = ParseResult.ArrayFormatter.formatErrorSync(error)
  return {
    path: formatPath([...prefix, ...(first?.path ?? [])]) || "(root)",
    description: first?.message ?? error.message,
  }
}
