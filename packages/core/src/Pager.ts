/**
 * A paginated query as a Stream of page events, spending credits only as the budget allows.
 *
 * - The first page (1, or `startPage` when resuming) is fetched alone; its result_count says how
 *   many pages exist, and no page past that (or past what `maxRecords` allows) is ever reserved
 *   or requested.
 * - Each credited page reserves its worst-case cost (page_size records, or fewer when
 *   `maxRecords` bounds the query) before it is requested, in page order, and is sent through
 *   CreditedRequest: settled to the records it returned (decoded or rejected: each is charged), released on a definite refusal,
 *   forfeited (counted as spent) when its outcome is unknown, and retried only under a new
 *   reservation. The first page the budget cannot cover ends the stream with a
 *   BudgetExhausted event saying what was left: no later page is requested, so no record is
 *   skipped and the caller can resume from `nextPage`. Pages already in flight then still land
 *   and follow it (paid for, so never dropped).
 * - Up to `concurrency` pages are in flight at once; events still come in page order. When the
 *   program provides an InFlight gate (AdaptiveConcurrency.ts; Client.layerFetch does), each page
 *   also takes one of its permits, in page order, before it reserves: the gate keeps as many pages
 *   in flight as the measured latency needs for the rate limit, shared by every query of the run,
 *   so `concurrency` is then only the upper bound.
 * - No page deeper than 10,000 records is requested. A result set larger than that ends with a
 *   DepthLimitReached event: the query must be partitioned (Partitioner.ts) to be read whole.
 */
import * as Data from "effect/Data"
import * as Deferred from "effect/Deferred"
import * as Effect from "effect/Effect"
import * as Exit from "effect/Exit"
import * as FiberId from "effect/FiberId"
import * as Option from "effect/Option"
import * as Ref from "effect/Ref"
import * as Stream from "effect/Stream"
import { InFlight } from "./AdaptiveConcurrency.ts"
import type { ApiError } from "./ApiError.ts"
import type { Paging } from "./Client.ts"
import { RetrySettings } from "./Connection.ts"
import { CreditBudget, type Reservation } from "./CreditBudget.ts"
import * as CreditedRequest from "./CreditedRequest.ts"
import { lastReachablePage, maxPageSize } from "./Limits.ts"
import { type Page, recordsOn } from "./Page.ts"

export interface Options<A> {
  readonly fetch: (paging: Paging) => Effect.Effect<Page<A>, ApiError>
  /** Records per page, 1 to 50 (larger values are capped at 50). Default 50. */
  readonly pageSize?: number | undefined
  /** A credited endpoint: reserve before each page, settle to the records it returned. */
  readonly credited: boolean
  /** A known ceiling on the query's records, e.g. the number of match_ids it names. */
  readonly maxRecords?: number | undefined
  /** Pages in flight at once after the first, at most (see the InFlight gate above). Default 1. */
  readonly concurrency?: number | undefined
  /** The page to start from, to resume a query read part-way before. Default 1. */
  readonly startPage?: number | undefined
  /**
   * The query's record count when the caller already knows it (a partition plan sized it with
   * the free preview): every page then goes through the concurrent stage from the start, instead
   * of the first page alone. If the provider counts more by the time the pages come back, the
   * read continues past the planned pages.
   */
  readonly expectedRecords?: number | undefined
  /**
   * How often a credited page is tried again after an unknown outcome (a transport fault), each
   * time under a new reservation (CreditedRequest.ts). Default: the client's defaults.
   */
  readonly retry?: RetrySettings | undefined
  /**
   * On a page's failure, let the pages already in flight land and be emitted (they are paid for),
   * request no later page, and fail the stream after them. Default false: the failure ends the
   * stream at once and the pages in flight are cut off (counted as possibly charged).
   */
  readonly landInFlightOnFailure?: boolean | undefined
  /**
   * With expectedRecords: completed once the last planned page has had its turn at the budget,
   * true if every planned page got its reservation. From then on this query reserves nothing more
   * (unless it grew), so the caller may start the next query while these pages are in flight,
   * without breaking the order in which credits are reserved.
   */
  readonly plannedReserved?: Deferred.Deferred<boolean> | undefined
  /**
   * Pages paid for and not yet taken by the caller, bounded across the queries that share it: each
   * page takes one permit in its turn, before it reserves; a page that lands (PageFetched) keeps it
   * until the caller, having passed the page on, gives it back (`release(1)`); any other outcome
   * gives it back at once. Queries that run ahead of the one being read (a partitioned search's
   * next parts) then cannot pile up landed pages: what a kill can lose stays this many pages. The
   * pages of a query that grew past `expectedRecords` are read outside it (see `plannedPages`).
   */
  readonly unemitted?: Effect.Semaphore | undefined
}

const defaultRetry = RetrySettings.make({})
const noRetry = RetrySettings.make({ max_attempts: 1 })

/** A page arrived; `creditsCharged` is what it cost (0 on free endpoints). */
export class PageFetched<A> extends Data.TaggedClass("PageFetched")<{
  readonly page: Page<A>
  readonly creditsCharged: number
  /** It holds a permit of `unemitted`, for the caller to give back once it has passed it on. */
  readonly holdsUnemitted: boolean
}> {}

/** The budget could not cover `nextPage`; nothing from it on was requested. */
export class BudgetExhausted extends Data.TaggedClass("BudgetExhausted")<{
  readonly nextPage: number
  /** Records the query still had past the pages read, when the result count is known. */
  readonly recordsRemaining: number | undefined
  /** What the next page would have reserved, and what the budget had left. */
  readonly creditsNeeded: number
  readonly creditsAvailable: number
}> {}

/** The query matched more records than paging can reach; read it through partitions. */
export class DepthLimitReached extends Data.TaggedClass("DepthLimitReached")<{
  readonly resultCount: number | undefined
  readonly recordsReachable: number
}> {}

export type Event<A> = PageFetched<A> | BudgetExhausted | DepthLimitReached

/**
 * After the first refusal, only pages that landed pass: they were in flight when a page before
 * them was refused (a retry after an unknown outcome that the budget could no longer cover), and
 * they are paid for, so they are emitted, after the refusal, never dropped.
 */
const landedAfterRefusal = <A, E, R>(events: Stream.Stream<Event<A>, E, R>): Stream.Stream<Event<A>, E, R> =>
  events.pipe(
    Stream.mapAccum(false, (refused, event): [boolean, Option.Option<Event<A>>] =>
      event._tag === "BudgetExhausted"
        ? [true, refused ? Option.none() : Option.some(event)]
        : [refused, Option.some(event)],
    ),
    Stream.filterMap((event) => event),
  )

/** One query's paging: its settings, its budget, and what has happened to it so far. */
interface Paged<A> {
  readonly options: Options<A>
  readonly budget: CreditBudget["Type"]
  readonly withPermit: <X, E>(effect: Effect.Effect<X, E>) => Effect.Effect<X, E>
  readonly pageSize: number
  readonly deepestPage: number
  /** The page whose reservation completes `plannedReserved`. */
  readonly plannedLastPage: number | undefined
  /**
   * Reservations are made strictly in page order, even with pages in flight concurrently: page p
   * waits for page p - 1's decision (its turn). Once one page is refused, no later page reserves.
   */
  readonly turnOf: (page: number) => Deferred.Deferred<void>
  readonly refusal: Ref.Ref<Option.Option<BudgetExhausted>>
  /** With landInFlightOnFailure: the first failure, raised once the pages in flight have landed. */
  readonly failed: Ref.Ref<Option.Option<ApiError>>
  /** The query's records, once known (planned, or counted by its first page). */
  readonly knownTotal: Ref.Ref<number | undefined>
}

const recordsBefore = (paged: Paged<unknown>, page: number) => (page - 1) * paged.pageSize

/** What a page reserves: a full page, or what `maxRecords` leaves (nothing on a free endpoint). */
const worstCase = (paged: Paged<unknown>, page: number) => {
  const { credited, maxRecords } = paged.options
  if (!credited) return 0
  return Math.min(
    paged.pageSize,
    maxRecords === undefined ? paged.pageSize : Math.max(0, maxRecords - recordsBefore(paged, page)),
  )
}

/** Refusing a page also refuses every later one: the shortfall is counted, not scattered. */
const reserveFor = <A>(paged: Paged<A>, page: number): Effect.Effect<Option.Option<Reservation>> =>
  Effect.gen(function* () {
    if (Option.isSome(yield* Ref.get(paged.refusal)) || Option.isSome(yield* Ref.get(paged.failed)))
      return Option.none()
    const needed = worstCase(paged, page)
    const reservation = yield* paged.budget.reserve(needed)
    if (Option.isNone(reservation)) {
      const { available } = yield* paged.budget.snapshot
      const total = yield* Ref.get(paged.knownTotal)
      const recordsRemaining = total === undefined ? undefined : total - recordsBefore(paged, page)
      const refused = new BudgetExhausted({
        nextPage: page,
        recordsRemaining,
        creditsNeeded: needed,
        creditsAvailable: available,
      })
      yield* Ref.set(paged.refusal, Option.some(refused))
    }
    return reservation
  })

/** A page's first reservation, taken in its turn; the next page's turn follows it. */
const decide = <A>(paged: Paged<A>, page: number): Effect.Effect<Option.Option<Reservation>> =>
  reserveFor(paged, page).pipe(
    Effect.tap((reservation) =>
      page === paged.plannedLastPage && paged.options.plannedReserved !== undefined
        ? Deferred.succeed(paged.options.plannedReserved, Option.isSome(reservation))
        : Effect.void,
    ),
    Effect.ensuring(Deferred.succeed(paged.turnOf(page + 1), undefined)),
  )

/** A page, in its turn: its event, or none when it was not sent after a failure. */
const fetchPage = <A>(paged: Paged<A>, page: number): Effect.Effect<Option.Option<Event<A>>, ApiError> => {
  const { options, budget, pageSize } = paged
  const credited = options.credited
  // The permit before the reservation: credits are held only for pages about to be sent.
  const sent = paged.withPermit(
    CreditedRequest.send({
      budget,
      firstReservation: decide(paged, page),
      reserve: reserveFor(paged, page),
      request: () => options.fetch({ page, pageSize }),
      charged: (fetched) => (credited ? recordsOn(fetched) : 0),
      // A free page's transport faults are retried by the client; a credited page's here.
      retry: credited ? (options.retry ?? defaultRetry) : noRetry,
    }),
  )
  const outcome = Effect.catchAll(
    sent,
    (error): Effect.Effect<Option.Option<CreditedRequest.Delivered<Page<A>>>, ApiError> =>
      options.landInFlightOnFailure === true
        ? Effect.as(
            Ref.update(paged.failed, (first) => (Option.isSome(first) ? first : Option.some(error))),
            Option.none(),
          )
        : Effect.fail(error),
  ).pipe(
    Effect.flatMap(
      Option.match({
        // Not sent: refused (the budget's event), or after a failure (nothing to say).
        onNone: () =>
          Effect.map(
            Ref.get(paged.refusal),
            Option.map((refused): Event<A> => refused),
          ),
        onSome: ({ value }) =>
          Effect.succeed(
            Option.some(
              new PageFetched({
                page: value,
                creditsCharged: credited ? recordsOn(value) : 0,
                holdsUnemitted: options.unemitted !== undefined,
              }) as Event<A>,
            ),
          ),
      }),
    ),
  )
  return Deferred.await(paged.turnOf(page)).pipe(
    Effect.zipRight(holdingUnemitted(options.unemitted, outcome)),
    // A page interrupted while waiting for its turn must still pass the turn on.
    Effect.ensuring(Deferred.succeed(paged.turnOf(page + 1), undefined)),
  )
}

/**
 * `outcome` under a permit of `unemitted` (taken in the page's turn, so in page order): kept when
 * the page landed, for the caller to give back once it has taken the page; given back otherwise.
 */
const holdingUnemitted = <A, E>(
  unemitted: Effect.Semaphore | undefined,
  outcome: Effect.Effect<Option.Option<Event<A>>, E>,
): Effect.Effect<Option.Option<Event<A>>, E> =>
  unemitted === undefined
    ? outcome
    : Effect.uninterruptibleMask((restore) =>
        Effect.zipRight(
          restore(unemitted.take(1)),
          restore(outcome).pipe(
            Effect.onExit((exit) =>
              Exit.isSuccess(exit) && Option.isSome(exit.value) && exit.value.value._tag === "PageFetched"
                ? Effect.void
                : unemitted.release(1),
            ),
          ),
        ),
      )

const raiseFailure = <A>(paged: Paged<A>): Stream.Stream<never, ApiError> =>
  Stream.unwrap(
    Effect.map(Ref.get(paged.failed), Option.match({ onNone: () => Stream.empty, onSome: Stream.fail })),
  )

/** After the last page: says so if the query held more than paging can reach. */
const trailer = <A>(paged: Paged<A>, total: number | undefined, resultCount: number | undefined) =>
  Stream.unwrap(
    Effect.map(Ref.get(paged.refusal), (refused): Stream.Stream<Event<A>> => {
      const reachable = paged.deepestPage * paged.pageSize
      if (Option.isSome(refused) || total === undefined || total <= reachable) return Stream.empty
      return Stream.make(new DepthLimitReached({ resultCount, recordsReachable: reachable }))
    }),
  )

const capped = (options: Options<unknown>, count: number | undefined) =>
  count === undefined ? options.maxRecords : Math.min(count, options.maxRecords ?? Number.POSITIVE_INFINITY)

const lastPageFor = (paged: Paged<unknown>, total: number) =>
  Math.min(paged.deepestPage, Math.ceil(total / paged.pageSize))

/** A query sized beforehand: every planned page through the concurrent stage from the start. */
const plannedPages = <A>(paged: Paged<A>, startPage: number, concurrency: number, plannedTotal: number) =>
  Effect.gen(function* () {
    const { options } = paged
    yield* Ref.set(paged.knownTotal, plannedTotal)
    const lastPage = lastPageFor(paged, plannedTotal)
    const counted = yield* Ref.make<number | undefined>(undefined)
    const planned = (lastPage < startPage ? Stream.empty : Stream.range(startPage, lastPage)).pipe(
      Stream.mapEffect((page) => fetchPage(paged, page), { concurrency }),
      Stream.filterMap((event) => event),
      Stream.tap((event) =>
        event._tag === "PageFetched" && event.page.resultCount !== undefined
          ? Ref.update(counted, (most) => Math.max(most ?? 0, event.page.resultCount ?? 0))
          : Effect.void,
      ),
      landedAfterRefusal,
    )
    // The query grew since it was sized: read on from the page after the plan.
    const more = Stream.unwrap(
      Effect.map(
        Effect.all([Ref.get(paged.refusal), Ref.get(paged.failed), Ref.get(counted)]),
        ([refused, failure, count]) => {
          const grown = capped(options, count)
          const readOn =
            Option.isNone(refused) &&
            Option.isNone(failure) &&
            grown !== undefined &&
            grown > plannedTotal &&
            lastPage < paged.deepestPage
          // Its extra pages are outside `unemitted`: the queries begun behind it (begun once its
          // planned pages were reserved) may hold every permit with pages the reader takes only
          // after these, so waiting for one would stall the read for good. Outside it they are
          // bounded by this query's own `concurrency`: a query that grew may hold that many more.
          return readOn
            ? stream({
                ...options,
                expectedRecords: undefined,
                startPage: Math.max(startPage, lastPage + 1),
                unemitted: undefined,
              })
            : trailer(paged, grown ?? plannedTotal, count)
        },
      ),
    )
    return Stream.concat(Stream.concat(planned, more), raiseFailure(paged))
  })

/** A query of unknown size: the first page alone, whose count says how many pages follow. */
const countedPages = <A>(paged: Paged<A>, startPage: number, concurrency: number) =>
  Effect.gen(function* () {
    const firstEvent = yield* fetchPage(paged, startPage)
    // Nothing in flight beside the first page: its failure is raised at once.
    if (Option.isNone(firstEvent)) return raiseFailure(paged)
    const first = firstEvent.value
    if (first._tag !== "PageFetched" || recordsOn(first.page) < paged.pageSize) return Stream.make(first)
    const resultCount = first.page.resultCount
    const reachableTotal = capped(paged.options, resultCount)
    yield* Ref.set(paged.knownTotal, reachableTotal)
    const lastPage = reachableTotal === undefined ? paged.deepestPage : lastPageFor(paged, reachableTotal)
    const rest = (lastPage <= startPage ? Stream.empty : Stream.range(startPage + 1, lastPage)).pipe(
      // Without a count, the end is the first short page: one page at a time, so that no page
      // past the end is reserved.
      Stream.mapEffect((page) => fetchPage(paged, page), {
        concurrency: reachableTotal === undefined ? 1 : concurrency,
      }),
      Stream.filterMap((event) => event),
      Stream.takeUntil(
        (event) =>
          reachableTotal === undefined &&
          event._tag === "PageFetched" &&
          recordsOn(event.page) < paged.pageSize,
      ),
      landedAfterRefusal,
    )
    return Stream.concat(
      Stream.make(first),
      Stream.concat(Stream.concat(rest, trailer(paged, reachableTotal, resultCount)), raiseFailure(paged)),
    )
  })

/** The turns of a query's pages, each made on first use by whichever page asks first. */
const turns = () => {
  const made = new Map<number, Deferred.Deferred<void>>()
  return (page: number) => {
    let turn = made.get(page)
    if (turn === undefined) {
      // Synchronous, so no two fibers race to make it.
      turn = Deferred.unsafeMake<void>(FiberId.none)
      made.set(page, turn)
    }
    return turn
  }
}

export const stream = <A>(options: Options<A>): Stream.Stream<Event<A>, ApiError, CreditBudget> =>
  Stream.unwrap(
    Effect.gen(function* () {
      // Optional: without a gate (unit tests, callers that pace elsewhere) `concurrency` is fixed.
      const gate = yield* Effect.serviceOption(InFlight)
      const pageSize = Math.max(1, Math.min(maxPageSize, Math.floor(options.pageSize ?? maxPageSize)))
      const deepestPage = lastReachablePage(pageSize)
      const plannedTotal =
        options.expectedRecords === undefined
          ? undefined
          : (capped(options, options.expectedRecords) ?? options.expectedRecords)
      const paged: Paged<A> = {
        options,
        budget: yield* CreditBudget,
        withPermit: (effect) => (Option.isSome(gate) ? gate.value.withPermit(effect) : effect),
        pageSize,
        deepestPage,
        plannedLastPage:
          plannedTotal === undefined ? undefined : Math.min(deepestPage, Math.ceil(plannedTotal / pageSize)),
        turnOf: turns(),
        refusal: yield* Ref.make(Option.none<BudgetExhausted>()),
        failed: yield* Ref.make(Option.none<ApiError>()),
        knownTotal: yield* Ref.make<number | undefined>(undefined),
      }
      const startPage = Math.max(1, Math.floor(options.startPage ?? 1))
      if (startPage > deepestPage) return Stream.empty
      yield* Deferred.succeed(paged.turnOf(startPage), undefined)
      const concurrency = Math.max(1, Math.floor(options.concurrency ?? 1))
      return plannedTotal === undefined
        ? yield* countedPages(paged, startPage, concurrency)
        : yield* plannedPages(paged, startPage, concurrency, plannedTotal)
    }),
  )
