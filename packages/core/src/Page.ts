/**
 * One page of results: the envelope the provider wraps records in, and the decoded records each
 * kept with its raw JSON. Decoding a record that does not fit its schema fails the page with the
 * path of the bad value (e.g. `search_results[3].company.id`): nothing is dropped silently.
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

export interface Page<A> {
  /** The page number we asked for (1-based). */
  readonly page: number
  readonly pageSize: number
  /** The query's total match count, when the provider sent one. */
  readonly resultCount: number | undefined
  readonly isPreview: boolean
  readonly items: ReadonlyArray<Item<A>>
}

/** Decodes each record of an envelope with `decoder` (its fast path, else its Schema), keeping its raw object. */
export const decodeItems = <A, I>(
  decoder: Decoder<A, I>,
  rawRecords: ReadonlyArray<unknown>,
): Either.Either<ReadonlyArray<Item<A>>, ParseIssue> => {
  const items: Array<Item<A>> = []
  for (const [index, raw] of rawRecords.entries()) {
    const at = `search_results[${index}]`
    if (typeof raw !== "object" || raw === null || Array.isArray(raw))
      return Either.left({ path: at, description: "Expected a JSON object" })
    const decoded = decoder.decode(raw)
    if (Either.isLeft(decoded)) {
      const { path, description } = decoded.left
      return Either.left({ path: path === "(root)" ? at : `${at}.${path}`, description })
    }
    // A JSON object (checked above), as parsed from the body.
    items.push({ record: decoded.right, raw: raw as Readonly<Record<string, unknown>> })
  }
  return Either.right(items)
}
