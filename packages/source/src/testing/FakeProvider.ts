/**
 * Test support: the provider in memory, behind the client's own interface, for fast tests of the
 * buying logic (no HTTP, no sandbox). Every contact matches any search filters; `email` finds the
 * contact of that email; `match_ids` buys those contacts (and the preview shows them). Contact i
 * works at the company of domain `company-<i % 10>.example`. Companies are one per domain, but for the
 * domains `unknownDomains` names, which match none (and so cost nothing). It counts
 * the requests by endpoint and the credits it charged (one per record of a credited answer), and
 * can refuse a credited search page with a 402.
 */
import { ApiError, Client, Contact, type Page } from "@salesintel/core"
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Schema from "effect/Schema"
import { contact } from "../../../core/src/testing/Records.ts"

export interface FakeProviderOptions {
  readonly contacts: number
  /** A credited search page (not a purchase by match ids) that is refused with a 402. */
  readonly paymentRequiredOnPage?: number
  /** How long each request takes (on the Clock, so a TestClock test measures the waits). */
  readonly latency?: Duration.DurationInput
  /** Domains that match no company: append returns nothing for them and charges nothing. */
  readonly unknownDomains?: ReadonlyArray<string>
}

const decode = Schema.decodeUnknownSync(Contact.Contact)

const pageOf = <A>(paging: Client.Paging, matching: ReadonlyArray<Page.Item<A>>): Page.Page<A> => ({
  page: paging.page,
  pageSize: paging.pageSize,
  resultCount: matching.length,
  isPreview: false,
  rejected: [],
  items: matching.slice((paging.page - 1) * paging.pageSize, paging.page * paging.pageSize),
})

export const fakeProvider = (options: FakeProviderOptions) => {
  const items = Array.from({ length: options.contacts }, (_, i) => {
    const raw = { ...contact(i), company_domains: [`company-${i % 10}.example`] }
    return { record: decode(raw), raw }
  })
  const byId = new Map(items.map((item) => [item.record.match_id, item]))
  const requests = { search: 0, preview: 0, append: 0 }
  let charged = 0
  const matching = (filters: {
    readonly email?: ReadonlyArray<string> | undefined
    readonly match_ids?: ReadonlyArray<string> | undefined
  }) =>
    filters.match_ids !== undefined
      ? filters.match_ids.flatMap((id) => byId.get(id) ?? [])
      : filters.email === undefined
        ? items
        : items.filter((item) => filters.email?.includes(item.record.email ?? ""))
  const service: Client.SalesIntelClientService = {
    searchPeople: (filters, paging) =>
      Effect.suspend(() => {
        requests.search++
        const ids = filters.match_ids
        if (ids === undefined && paging.page === options.paymentRequiredOnPage)
          return Effect.fail(new ApiError.PaymentRequired({ endpoint: "people.search" }))
        const page =
          ids === undefined
            ? pageOf(paging, matching(filters))
            : pageOf(
                paging,
                ids.flatMap((id) => byId.get(id) ?? []),
              )
        charged += page.items.length
        return Effect.succeed(page)
      }),
    previewPeople: (filters, paging) =>
      Effect.sync(() => {
        requests.preview++
        return pageOf(paging, matching(filters))
      }),
    appendTechnologies: (filters, paging) =>
      Effect.sync(() => {
        requests.append++
        const unknown = new Set(options.unknownDomains ?? [])
        const keys = (filters.company_domain ?? []).filter((domain) => !unknown.has(domain))
        const companies = keys.map((domain, i) => ({
          record: { company_id: i + 1 },
          raw: { company_id: i + 1, domain },
        }))
        charged += Math.min(paging.pageSize, companies.length)
        return pageOf(paging, companies)
      }),
    taxonomyCategories: Effect.succeed([]),
    taxonomyProducts: (_, paging) => Effect.succeed(pageOf(paging, [])),
  }
  const latency = Duration.decode(options.latency ?? 0)
  const delayed = <A, E>(effect: Effect.Effect<A, E>) =>
    Duration.isZero(latency) ? effect : Effect.delay(effect, latency)
  const slow: Client.SalesIntelClientService = {
    searchPeople: (filters, paging) => delayed(service.searchPeople(filters, paging)),
    previewPeople: (filters, paging) => delayed(service.previewPeople(filters, paging)),
    appendTechnologies: (filters, paging) => delayed(service.appendTechnologies(filters, paging)),
    taxonomyCategories: delayed(service.taxonomyCategories),
    taxonomyProducts: (filters, paging) => delayed(service.taxonomyProducts(filters, paging)),
  }
  return {
    layer: Layer.succeed(Client.SalesIntelClient, slow),
    requests,
    charged: () => charged,
    /** The match id and the email of the contact at `index`. */
    contact: (index: number) => items[index]?.record,
  }
}
