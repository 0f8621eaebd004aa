/**
 * A search read through its free listing: the preview lists the search's match ids, page by page
 * through its partitions, and only those not bought (or stale) are bought, by match ids
 * (Context.buyNew). The listing's pages are tallied as the free requests they are.
 */
import type { Client, Contact, CreditBudget, Partitioner } from "@salesintel/core"
import { Limits, Page } from "@salesintel/core"
import * as Effect from "effect/Effect"
import * as Option from "effect/Option"
import * as Ref from "effect/Ref"
import * as Stream from "effect/Stream"
import type { ContactSearch, SourceConfig } from "../../Config.ts"
import * as PagedQuery from "../../components/PagedQuery.ts"
import * as Output from "../../read/Output.ts"
import { MadeUpListing } from "../../read/Quick.ts"
import {
  buyNew,
  type ContactError,
  type ContactOutput,
  type Context,
  describeSearch,
  searchWork,
} from "./Context.ts"
import { estimateTally, heldEstimate, madeUpLess } from "./LastRead.ts"

/** The free listing of a search's match ids, as an incremental read walks it. */
const previewQuery = (
  client: Client.SalesIntelClientService,
  config: SourceConfig,
  search: ContactSearch,
): PagedQuery.Options<Contact.PreviewContact> => ({
  client,
  name: search.name,
  filters: search.filters,
  fetch: client.previewPeople,
  credited: false,
  pageSize: Limits.maxPageSize,
  concurrency: config.concurrency,
  retry: config.retry,
})

/** What the listing passed over so far, with a page's rejected records added. */
const unlistedAfter = (
  seen: { readonly count: number; readonly first?: string },
  rejected: ReadonlyArray<Page.Rejected>,
): { readonly count: number; readonly first?: string } => {
  const first = seen.first ?? (rejected[0] === undefined ? undefined : Page.reasonOf(rejected[0]))
  return { count: seen.count + rejected.length, ...(first === undefined ? {} : { first }) }
}

/** The free listing's ids, then the purchase of those not bought; its warnings after them. */
export const listedSearch = (
  context: Context,
  search: ContactSearch,
  plan: Partitioner.Plan | undefined,
): Stream.Stream<ContactOutput, ContactError, CreditBudget.CreditBudget> =>
  Stream.unwrap(
    Effect.gen(function* () {
      const listingStopped = yield* Ref.make(false)
      const pages = yield* Ref.make(0)
      const warnings = yield* Ref.make<ReadonlyArray<string>>([])
      // Listed records that did not decode (free, so nothing is lost but the chance to buy them):
      // one without its match_id can never be bought by it, so it is said and passed over.
      const unlisted = yield* Ref.make<{ readonly count: number; readonly first?: string }>({ count: 0 })
      const ids = PagedQuery.run({ ...previewQuery(context.client, context.config, search), plan }).pipe(
        Stream.mapEffect((event) => {
          switch (event._tag) {
            case "Page":
              // A listed page at a time: the purchase looks each page up in the bought set.
              return Effect.as(
                Effect.zipRight(
                  Ref.update(pages, (n) => n + 1),
                  Ref.update(unlisted, (seen) => unlistedAfter(seen, event.page.rejected)),
                ),
                [event.page.items.map((item) => item.record.match_id)],
              )
            case "Refused":
            case "Skipped":
              return Effect.as(Ref.set(listingStopped, true), [])
            case "Warning":
              return Effect.as(
                Ref.update(warnings, (all) => [...all, event.message]),
                [],
              )
            case "Planned":
            case "PartDone":
              return Effect.succeed([])
          }
        }),
        Stream.flattenIterables,
      )
      const after = Stream.unwrap(
        Effect.map(
          Effect.all([Ref.get(warnings), Ref.get(pages), Ref.get(unlisted)]),
          ([all, free, passed]) =>
            Stream.fromIterable<ContactOutput>([
              ...all.map((message) => Output.log("WARN", message)),
              ...(passed.count === 0
                ? []
                : [
                    Output.log(
                      "WARN",
                      `${describeSearch(search)}: ${passed.count} listed contacts did not decode (${passed.first}) and are not bought: the free listing cannot name them to buy`,
                    ),
                  ]),
              Output.tally(searchWork(search), { freeRequests: free }),
            ]),
        ),
      )
      const where = { search: search.name, detail: describeSearch(search), work: searchWork(search) }
      // A quick plan's listing is made up, every id new: what its last read left held is passed over.
      const quick = Option.isSome(yield* Effect.serviceOption(MadeUpListing))
      if (!quick) return Stream.concat(buyNew(context, ids, where, Ref.get(listingStopped)), after)
      const reachable = plan?.parts.reduce((sum, part) => sum + part.count, 0) ?? 0
      const estimate = heldEstimate(context.lastReads[search.name], search, reachable, context.heldAtStart)
      const listed = madeUpLess(ids, (estimate?.fresh ?? 0) + (estimate?.earlier ?? 0))
      return Stream.concat(
        Stream.make(estimateTally(search, estimate)),
        Stream.concat(buyNew(context, listed, where, Ref.get(listingStopped)), after),
      )
    }),
  )
