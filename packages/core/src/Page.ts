/**
 * One page of results: the envelope the provider wraps records in, and the decoded records each
 * kept with its raw JSON. A record that does not fit its schema does not fail the page (a credited
 * page is paid for, and its other records are good): it is kept whole among the page's rejected
 * records, with the path of the bad value (e.g. `search_results[3].match_id: is missing`), for the
 * caller to keep and count: nothing is dropped silently.
 */
import * as Either from "effect/Either"
import * as Schema from "effect/Schema"
import type { Decoder } from "./FastDecode.ts"
import type { ParseIssue } from "./ParseIssue.ts"
import { LooseInt, optionalNullable } from "./Values.ts"

export const Envelope = Schema.Struct({
  page: optionalNullable(LooseInt),
  page_size: optionalNullable(LooseInt),
  /** The total number of matches of the query, not of this page. */
  result_count: optionalNullable(LooseInt),
  is_preview: optionalNullable(Schema.Boolean),
  error: optionalNullable(Schema.String),
  // Records are checked one by one by decodeItems; walking each one here as well doubled the cost.
  search_results: Schema.Array(Schema.Unknown),
})
export type Envelope = typeof Envelope.Type

/** A decoded record and the JSON object it came from. */
export interface Item<A> {
  readonly record: A
  readonly raw: Readonly<Record<string, unknown>>
}

/** A record of a page that did not decode: the JSON as sent, and why. */
export interface Rejected {
  /** The record as the provider sent it (a JSON value; an object as a rule). */
  readonly raw: unknown
  /** Where the bad value is, as `search_results[3].match_id`. */
  readonly path: string
  /** What was wrong there, as `is missing`. */
  readonly description: string
}

/** A rejected record's reason, as said to the user: the path and what was wrong there. */
export const reasonOf = (rejected: Rejected): string => `${rejected.path}: ${rejected.description}`

export interface Page<A> {
  /** The page number we asked for (1-based). */
  readonly page: number
  readonly pageSize: number
  /** The query's total match count, when the provider sent one. */
  readonly resultCount: number | undefined
  readonly isPreview: boolean
  readonly items: ReadonlyArray<Item<A>>
  /** The page's records that did not decode, in page order. */
  readonly rejected: ReadonlyArray<Rejected>
}

/** The records on a page, decoded or not: what a credited page is charged (one credit each). */
export const recordsOn = (page: {
  readonly items: ReadonlyArray<unknown>
  readonly rejected: ReadonlyArray<unknown>
}): number => page.items.length + page.rejected.length

/** A page's records sorted into those that decoded and those that did not. */
export interface Decoded<A> {
  readonly items: ReadonlyArray<Item<A>>
  readonly rejected: ReadonlyArray<Rejected>
}

/** Decodes each record of an envelope with `decoder` (its fast path, else its Schema), keeping its raw object; those that do not decode are rejected. */
export const decodeItems = <A, I>(decoder: Decoder<A, I>, rawRecords: ReadonlyArray<unknown>): Decoded<A> => {
  const items: Array<Item<A>> = []
  const rejected: Array<Rejected> = []
  for (const [index, raw] of rawRecords.entries()) {
    const at = `search_results[${index}]`
    if (typeof raw !== "object" || raw === null || Array.isArray(raw)) {
      rejected.push({ raw, path: at, description: "Expected a JSON object" })
      continue
    }
    const decoded = decoder.decode(raw)
    if (Either.isLeft(decoded)) {
      const { path, description } = decoded.left
      rejected.push({ raw, path: path === "(root)" ? at : `${at}.${path}`, description })
      continue
    }
    // A JSON object (checked above), as parsed from the body.
    items.push({ record: decoded.right, raw: raw as Readonly<Record<string, unknown>> })
  }
  return { items, rejected }
}

/** Every record decoded, or the first that did not (where a list must be whole: the taxonomy's categories). */
export const decodeAll = <A, I>(
  decoder: Decoder<A, I>,
  rawRecords: ReadonlyArray<unknown>,
): Either.Either<ReadonlyArray<Item<A>>, ParseIssue> => {
  const { items, rejected } = decodeItems(decoder, rawRecords)
  const first = rejected[0]
  return first === undefined
    ? Either.right(items)
    : Either.left({ path: first.path, description: first.description })
}
