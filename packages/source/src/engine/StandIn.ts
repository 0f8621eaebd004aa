/**
 * The client a cost plan runs the read with: the free endpoints are the provider's own, the
 * credited ones are answered here, so the read runs exactly as a sync would (the same paths, the
 * same budget, the same dedupe) and nothing is bought. A credited answer holds a record for each
 * key asked for (a match id, a domain, a name), so the budget is charged what the provider would
 * charge, one credit per record:
 * - a purchase by match_ids: one contact per id;
 * - a page of a credited search (a direct read): the contacts of the same page of the free
 *   preview, so the ids a later search or email meets are the real ones (in `quick` mode, made-up
 *   ids, as many as the search's count leaves on that page);
 * - technologies appended: one company per domain or name, carrying it (a key may match none, or
 *   several: the plan counts one, an upper bound for the keys not known to match a company).
 * In `quick` mode a search's free listing is answered here too, from its free count (asked once
 * per query): every id is new, so its credits are an upper bound.
 */
import {
  type ApiError,
  type Client,
  type Contact,
  type Filters,
  type Page,
  Partitioner,
} from "@salesintel/core"
import * as Effect from "effect/Effect"
import { canonicalJson } from "../CanonicalJson.ts"

export type Mode = "exact" | "quick"

const pageOf = <A extends Readonly<Record<string, unknown>>>(
  paging: Client.Paging,
  records: ReadonlyArray<A>,
  resultCount: number,
): Page.Page<A> => ({
  page: paging.page,
  pageSize: paging.pageSize,
  resultCount,
  isPreview: false,
  items: records.map((record) => ({ record, raw: { ...record } })),
})

const contact = (match_id: string) => ({ match_id })

/** Ids made up for the records of `paging` of a query of `count` matches. */
const madeUpIds = (query: string, paging: Client.Paging, count: number): ReadonlyArray<string> => {
  const first = (paging.page - 1) * paging.pageSize
  const size = Math.max(0, Math.min(paging.pageSize, count - first))
  return Array.from({ length: size }, (_, i) => `planned:${query}:${first + i}`)
}

/** A query's free count, asked of the provider once per query. */
const countsOf = (real: Client.SalesIntelClientService) => {
  const counts = new Map<string, number>()
  const count = Partitioner.previewCount(real)
  return (filters: Filters.PeopleFilters): Effect.Effect<number, ApiError.ApiError> => {
    const key = canonicalJson(filters)
    const known = counts.get(key)
    if (known !== undefined) return Effect.succeed(known)
    return Effect.tap(count(filters), (n) => Effect.sync(() => counts.set(key, n)))
  }
}

export const standIn = (real: Client.SalesIntelClientService, mode: Mode): Client.SalesIntelClientService => {
  const count = countsOf(real)
  const madeUpPage = (filters: Filters.PeopleFilters, paging: Client.Paging) =>
    Effect.map(count(filters), (n) =>
      pageOf(paging, madeUpIds(canonicalJson(filters), paging, n).map(contact), n),
    )
  return {
    ...real,
    previewPeople:
      mode === "exact"
        ? real.previewPeople
        : (filters, paging) => {
            // The emails' lookups are real; a count is asked once, the partitioning's reused.
            if (filters.email !== undefined) return real.previewPeople(filters, paging)
            if (paging.page === 1 && paging.pageSize === 1)
              return Effect.map(count(filters), (n) => pageOf<Contact.Contact>(paging, [], n))
            return madeUpPage(filters, paging)
          },
    searchPeople: (filters, paging) => {
      const ids = filters.match_ids
      if (ids !== undefined) return Effect.succeed(pageOf(paging, ids.map(contact), ids.length))
      if (mode === "quick") return madeUpPage(filters, paging)
      return Effect.map(real.previewPeople(filters, paging), (listed) =>
        pageOf(
          paging,
          listed.items.map((item) => contact(item.record.match_id)),
          listed.resultCount ?? listed.items.length,
        ),
      )
    },
    appendTechnologies: (filters, paging) => {
      const domains = filters.company_domain
      const keys = domains ?? filters.company_name ?? []
      const companies = keys.map((key, i) => ({
        company_id: (paging.page - 1) * paging.pageSize + i + 1,
        ...(domains === undefined ? { company_name: key } : { company_domains: [key] }),
      }))
      return Effect.succeed(pageOf(paging, companies, keys.length))
    },
  }
}
