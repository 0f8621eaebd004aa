/**
 * A contacts search, read one of three ways, each through the purchase engine:
 * - full refresh: the credited search, page by page, its position kept so a killed run resumes at
 *   the next page;
 * - the free listing: the preview lists the search's match ids, and only those not bought (or
 *   stale) are bought by match_ids (Context.buyNew);
 * - directly: a search of which nothing bought is fresh, with the budget to read it whole, would
 *   buy every contact the listing returns, so it is read through the credited search instead, for
 *   the same credits in about half the requests.
 * Every way records what it bought in the one bought set.
 */
import {
  ApiError,
  type Contact,
  CreditBudget,
  type Filters,
  type Page,
  type Partitioner,
} from "@salesintel/core"
import * as Chunk from "effect/Chunk"
import * as Effect from "effect/Effect"
import * as Ref from "effect/Ref"
import * as Stream from "effect/Stream"
import { canonicalJson } from "../../CanonicalJson.ts"
import type { ContactSearch } from "../../Config.ts"
import type * as PagedQuery from "../../components/PagedQuery.ts"
import * as Output from "../../read/Output.ts"
import * as Purchase from "../../read/Purchase.ts"
import {
  type ContactError,
  type ContactOutput,
  type Context,
  contactRecord,
  describeSearch as describe,
  matchId,
  rejectedMatchId,
  searchWork,
} from "./Context.ts"
import { listedSearch } from "./Listing.ts"

/** A search read through the credited search, page by page: as full refresh and a direct read do. */
const searchQuery = (context: Context, search: ContactSearch): PagedQuery.Options<Contact.Contact> => ({
  client: context.client,
  name: search.name,
  filters: search.filters,
  fetch: context.client.searchPeople,
  credited: true,
  pageSize: context.config.page_size,
  concurrency: context.config.concurrency,
  retry: context.config.retry,
})

/** The position of a full refresh, kept in `position`; `unfinished` once a page is refused. */
const resumeIn = (position: Ref.Ref<PagedQuery.Position>, unfinished: Ref.Ref<boolean>): Purchase.Resume => ({
  page: (part, page, pageSize) =>
    Ref.update(position, (p) => ({ ...p, current: { part, next_page: page + 1, page_size: pageSize } })),
  // The next run resumes at the refused page, even if later pages landed after it; the first
  // refusal is the earliest page refused (events come in page order), so a later one leaves it.
  refused: (part, nextPage, pageSize) =>
    Effect.flatMap(Ref.getAndSet(unfinished, true), (already) =>
      already
        ? Effect.void
        : Ref.update(position, (p) => ({
            ...p,
            current: { part, next_page: nextPage, page_size: pageSize },
          })),
    ),
  partDone: (part) =>
    Ref.update(position, (p) => ({ completed: [...p.completed, part], current: undefined })),
})

/**
 * The searches of a full refresh, read in turn (Purchase.queriesInTurn: a search begins while the
 * last pages of the one before are in flight), each as `each` wraps it, their pages bought in search
 * order; the position moves as pages are passed on, so it is always the next page to ask for.
 */
export const fullRefreshSearches = (
  context: Context,
  searches: ReadonlyArray<ContactSearch>,
  plans: ReadonlyMap<string, Partitioner.Plan>,
  position: Ref.Ref<PagedQuery.Position>,
  unfinished: Ref.Ref<boolean>,
  each: (
    search: ContactSearch,
    outputs: Stream.Stream<ContactOutput, ContactError, CreditBudget.CreditBudget>,
  ) => Stream.Stream<ContactOutput, ContactError, CreditBudget.CreditBudget>,
): Stream.Stream<ContactOutput, ContactError, CreditBudget.CreditBudget> =>
  Stream.unwrapScoped(
    Effect.gen(function* () {
      const start = yield* Ref.get(position)
      const queries = searches.map((search) => ({
        ...searchQuery(context, search),
        position: start,
        plan: plans.get(search.name),
      }))
      const events = yield* Purchase.queriesInTurn(queries)
      const read = searches.map((search, index) =>
        each(
          search,
          Purchase.creditedPages({
            events: events[index] ?? Stream.empty,
            keyOf: matchId,
            keyOfRejected: rejectedMatchId,
            resume: resumeIn(position, unfinished),
            checkpoint: context.checkpoint,
            bought: context.known,
            alongside: context.alsoInState,
            record: contactRecord(context, search.name),
            detail: describe(search),
            work: searchWork(search),
            endpoint: "people.search",
          }),
        ),
      )
      return Stream.concatAll(Chunk.fromIterable(read))
    }),
  )

/** The field of the InvalidRequest a direct read stops its own requests with once its results shift. */
const shiftedField = "results shifted"

/**
 * Why a page of a direct read says the search's results moved under its offsets (contacts added or
 * removed at the provider while it reads: every later record shifts by one, and a page boundary
 * repeats a record or skips one), or undefined: its part's count is not the one planned, or it
 * holds contacts this read bought already.
 */
const shiftIn = (
  context: Context,
  planned: ReadonlyMap<string, number>,
  filters: Filters.PeopleFilters,
  page: Page.Page<Contact.Contact>,
): string | undefined => {
  const count = planned.get(canonicalJson(filters))
  // A count equal to the page's own size says nothing: the provider's result_count is read as the
  // query's total (upstream-api-notes.md marks that meaning inferred).
  const total = page.resultCount
  if (count !== undefined && total !== undefined && total !== count && total !== page.items.length)
    return `its results changed at the provider while it was read (${total} matches where ${count} were counted)`
  const again = page.items.filter((item) => context.known.boughtThisRun(item.record.match_id)).length
  return again > 0 ? `a page returned ${again} contacts this read had bought already` : undefined
}

/**
 * Read straight through the credited search; its parts are disjoint, so no part buys what another
 * bought, as long as the results hold still. Offset paging over results that move buys records
 * twice, so once a page shows they moved, the read asks for no more pages (those in flight land:
 * they are paid for) and reads the rest through the free listing, buying only what it has not
 * bought: the waste is the pages in flight then.
 */
const directSearch = (context: Context, search: ContactSearch, plan: Partitioner.Plan) =>
  Stream.unwrap(
    Effect.gen(function* () {
      const reachable = plan.parts.reduce((sum, part) => sum + part.count, 0)
      const said = Output.log(
        "INFO",
        `${describe(search)}: none of its ${reachable} contacts bought yet (or every contact bought is due for refresh), read directly through the credited search`,
      )
      const planned = new Map(plan.parts.map((part) => [canonicalJson(part.filters), part.count]))
      const shifted = yield* Ref.make<string | undefined>(undefined)
      const fetch: PagedQuery.Options<Contact.Contact>["fetch"] = (filters, paging) =>
        Effect.flatMap(Ref.get(shifted), (why) =>
          why !== undefined
            ? Effect.fail(
                new ApiError.InvalidRequest({
                  endpoint: "people.search",
                  field: shiftedField,
                  description: why,
                }),
              )
            : Effect.tap(context.client.searchPeople(filters, paging), (page) =>
                Ref.update(shifted, (before) => before ?? shiftIn(context, planned, filters, page)),
              ),
        )
      // A failure lets the pages in flight land first (they are paid for); the next run lists the rest.
      const pages = Purchase.creditedPages({
        events: Purchase.queryEvents({
          ...searchQuery(context, search),
          fetch,
          plan,
          landInFlightOnFailure: true,
        }),
        keyOf: matchId,
        keyOfRejected: rejectedMatchId,
        checkpoint: context.checkpoint,
        bought: context.known,
        alongside: context.alsoInState,
        record: contactRecord(context, search.name),
        detail: describe(search),
        work: searchWork(search),
        endpoint: "people.search",
      })
      const switched = (error: ContactError) =>
        error._tag === "InvalidRequest" && error.field === shiftedField
          ? Stream.concat(
              Stream.make<Array<ContactOutput>>(
                Output.log(
                  "WARN",
                  `${describe(search)}: ${error.description}; the rest is read through the free listing, buying only contacts not bought yet`,
                ),
              ),
              listedSearch(context, search, plan),
            )
          : Stream.fail(error)
      return Stream.concat(Stream.make(said), Stream.catchAll(pages, switched))
    }),
  )

/**
 * Whichever way costs fewer requests for the same credits: directly when no contact bought is fresh
 * and the budget covers the whole search (plus the last page of each part, which reserves a full
 * page); else the free listing, which buys contact by contact.
 */
export const incrementalSearch = (
  context: Context,
  search: ContactSearch,
  plan: Partitioner.Plan | undefined,
): Stream.Stream<ContactOutput, ContactError, CreditBudget.CreditBudget> =>
  Stream.unwrap(
    Effect.gen(function* () {
      const { available, closed } = yield* (yield* CreditBudget.CreditBudget).snapshot
      // Forgotten people: only the free listing lets them be passed over before anything is paid.
      if (plan === undefined || closed || context.known.hasFresh() || !context.suppressions.empty)
        return listedSearch(context, search, plan)
      const reachable = plan.parts.reduce((sum, part) => sum + part.count, 0)
      return reachable + plan.parts.length * context.config.page_size <= available
        ? directSearch(context, search, plan)
        : listedSearch(context, search, plan)
    }),
  )
