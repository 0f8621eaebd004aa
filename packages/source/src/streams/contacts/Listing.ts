/**
 * A search read through its free listing: the preview lists the search's match ids, page by page
 * through its partitions, and only those not bought (or stale) are bought, by match ids
 * (Context.buyNew). The listing's pages are tallied as the free requests they are.
 */
import type { Client, Contact, CreditBudget, Partitioner } from "@salesintel/core"
import { Limits } from "@salesintel/core"
import * as Effect from "effect/Effect"
import * as Ref from "effect/Ref"
import * as Stream from "effect/Stream"
import type { ContactSearch, SourceConfig } from "../../Config.ts"
import * as PagedQuery from "../../components/PagedQuery.ts"
import * as Output from "../../read/Output.ts"
import {
  buyNew,
  type ContactError,
  type ContactOutput,
  type Context,
  describeSearch,
  searchWork,
} from "./Context.ts"

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
      const ids = PagedQuery.run({ ...previewQuery(context.client, context.config, search), plan }).pipe(
        Stream.mapEffect((event) => {
          switch (event._tag) {
            case "Page":
              // A listed page at a time: the purchase looks each page up in the bought set.
              return Effect.as(
                Ref.update(pages, (n) => n + 1),
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
        Effect.map(Effect.zip(Ref.get(warnings), Ref.get(pages)), ([all, free]) =>
          Stream.fromIterable<ContactOutput>([
            ...all.map((message) => Output.log("WARN", message)),
            Output.tally(searchWork(search), { freeRequests: free }),
          ]),
        ),
      )
      const where = { search: search.name, detail: describeSearch(search), work: searchWork(search) }
      return Stream.concat(buyNew(context, ids, where, Ref.get(listingStopped)), after)
    }),
  )
