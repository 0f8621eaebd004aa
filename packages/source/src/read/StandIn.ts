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
 *
 * When a stream reads another's records (a substream: the companies of the contacts bought), the
 * contacts answered carry their company's domains as the free preview shows them: a purchase by
 * match_ids asks the preview for the same ids (one free request a batch), a direct read's page
 * keeps them from the preview's page; in `quick` mode the made-up contacts have made-up companies,
 * as many new ones as `newCompanies` says the first n contacts due bring (CostPlan.ts: from the
 * contacts and companies the target holds), or one each (an upper bound) without it.
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
  rejected: [],
})

const contact = (match_id: string): Contact.Contact => ({ match_id })

const strings = (value: unknown): ReadonlyArray<string> | undefined =>
  Array.isArray(value) && value.every((item) => typeof item === "string") ? value : undefined

/** A listed contact as a purchase would return it, as far as the preview tells: its id and company domains. */
const listedContact = (item: Page.Item<Contact.PreviewContact>): Contact.Contact => {
  const company = item.raw.company
  const domains =
    strings(item.raw.company_domains) ??
    (typeof company === "object" && company !== null
      ? strings((company as { domains?: unknown }).domains)
      : undefined)
  return domains === undefined
    ? contact(item.record.match_id)
    : { match_id: item.record.match_id, company_domains: domains }
}

const madeUpPrefix = "planned:"

/** Ids made up for the records of `paging` of a query of `count` matches. */
const madeUpIds = (query: string, paging: Client.Paging, count: number): ReadonlyArray<string> => {
  const first = (paging.page - 1) * paging.pageSize
  const size = Math.max(0, Math.min(paging.pageSize, count - first))
  return Array.from({ length: size }, (_, i) => `${madeUpPrefix}${query}:${first + i}`)
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

export interface StandInOptions {
  /** A stream reads the contacts' records: they carry what the preview shows of their company. */
  readonly records: boolean
  /**
   * Quick mode: how many companies not held the first n contacts due work at (non-decreasing, at
   * most n), what the made-up contacts' companies are drawn at; one each when undefined.
   */
  readonly newCompanies?: ((contacts: number) => number) | undefined
}

/** The contacts of `ids` as the preview shows them (one free request), one per id, in the order asked. */
const previewedContacts = (real: Client.SalesIntelClientService, ids: ReadonlyArray<string>) =>
  Effect.map(real.previewPeople({ match_ids: ids }, { page: 1, pageSize: ids.length }), (page) => {
    const listed = new Map(page.items.map((item) => [item.record.match_id, listedContact(item)]))
    return ids.map((id) => listed.get(id) ?? contact(id))
  })

export const standIn = (
  real: Client.SalesIntelClientService,
  mode: Mode,
  options: StandInOptions = { records: false },
): Client.SalesIntelClientService => {
  const count = countsOf(real)
  const newCompanies = options.newCompanies
  // The made-up contacts in the order bought: the n-th works at the newCompanies(n)-th company.
  let contacts = 0
  const madeUp = (id: string): Contact.Contact => {
    if (!options.records) return contact(id)
    contacts += 1
    const company =
      newCompanies === undefined ? id : `${madeUpPrefix}company:${Math.ceil(newCompanies(contacts))}`
    return { match_id: id, company_domains: [`${company}.planned`] }
  }
  const madeUpPage = (filters: Filters.PeopleFilters, paging: Client.Paging) =>
    Effect.map(count(filters), (n) =>
      pageOf(paging, madeUpIds(canonicalJson(filters), paging, n).map(madeUp), n),
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
      if (ids !== undefined) {
        const answered = (contacts: ReadonlyArray<Contact.Contact>) => pageOf(paging, contacts, ids.length)
        if (!options.records) return Effect.succeed(answered(ids.map(contact)))
        // Made-up ids (quick mode) are unknown to the preview.
        return ids.every((id) => id.startsWith(madeUpPrefix))
          ? Effect.succeed(answered(ids.map(madeUp)))
          : Effect.map(previewedContacts(real, ids), answered)
      }
      if (mode === "quick") return madeUpPage(filters, paging)
      return Effect.map(real.previewPeople(filters, paging), (listed) =>
        pageOf(
          paging,
          listed.items.map((item) => (options.records ? listedContact(item) : contact(item.record.match_id))),
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
