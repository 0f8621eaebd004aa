/**
 * A keyed purchase: keys not bought yet (match ids, domains, names) are bought in batches, each
 * batch reserving exactly one credit per key it asks for (page_size = its keys), so a budget
 * smaller than page_size still buys what it can. The reservation is taken when the batch is
 * formed, in key order: the first batch the budget cannot cover in full is cut to what it can,
 * and every later key is reported unbought (counted, not scattered).
 *
 * Every batch is one credited request through CreditedRequest (settle, release or forfeit; a
 * retry after an unknown outcome takes a new reservation). A batch whose keys can match more
 * records than keys (a domain can return several companies) reads its further pages through the
 * Pager at the same page size.
 *
 * Given `matches`, a batch read to its end also says which of its keys no record returned matched
 * (an `Unmatched` event, before the batch's records): a domain or name the provider knows no
 * company by returns nothing, and costs nothing, where a match id always returns its contact. A
 * batch with a record that did not decode says nothing of the kind: that record may be any key's.
 */
import {
  AdaptiveConcurrency,
  type ApiError,
  type Client,
  type Connection,
  CreditBudget,
  CreditedRequest,
  Page,
  Pager,
} from "@salesintel/core"
import * as Chunk from "effect/Chunk"
import * as Effect from "effect/Effect"
import * as Option from "effect/Option"
import * as Ref from "effect/Ref"
import * as Stream from "effect/Stream"

export interface Options<K, A, E, R> {
  /** Keys to buy, each once, already diffed against what was bought. */
  readonly keys: Stream.Stream<K, E, R>
  readonly pageSize: number
  /** Batches in flight at once, at most (each also takes a permit of the InFlight gate, if any). */
  readonly concurrency: number
  readonly retry: Connection.RetrySettings
  /** One page of the credited request for `keys`. */
  readonly fetch: (
    keys: ReadonlyArray<K>,
    paging: Client.Paging,
  ) => Effect.Effect<Page.Page<A>, ApiError.ApiError>
  /** Each key matches at most one record (match ids): one page per batch, never more. */
  readonly oneRecordPerKey: boolean
  /** Whether a record returned matched `key`: given, each batch read to its end says its keys that none matched. */
  readonly matches?: ((key: K, item: Page.Item<A>) => boolean) | undefined
}

export type Event<K, A> =
  | {
      readonly _tag: "Bought"
      readonly keys: ReadonlyArray<K>
      readonly items: ReadonlyArray<Page.Item<A>>
      /** The page's records that did not decode: paid for, kept apart (Page.ts). */
      readonly rejected: ReadonlyArray<Page.Rejected>
    }
  | { readonly _tag: "Unbought"; readonly keys: ReadonlyArray<K> }
  | { readonly _tag: "DepthLimitReached"; readonly keys: ReadonlyArray<K> }
  /** A batch read to its end (every page): of its `keys`, those no record matched (maybe none). */
  | { readonly _tag: "Unmatched"; readonly keys: ReadonlyArray<K>; readonly unmatched: ReadonlyArray<K> }

interface Batch<K> {
  readonly keys: ReadonlyArray<K>
  readonly reservation: Option.Option<CreditBudget.Reservation>
  readonly unbought: ReadonlyArray<K>
}

/** One purchase's shared parts: its options, the budget and gate, and what stopped it. */
interface Purchase<K, A, E, R> {
  readonly options: Options<K, A, E, R>
  readonly budget: CreditBudget.CreditBudgetService
  readonly gate: Option.Option<AdaptiveConcurrency.InFlight["Type"]>
  /** A batch was cut short by the budget: every later key is unbought. */
  readonly refused: Ref.Ref<boolean>
  /** The first definite failure: no new batch is sent, and it is raised after those in flight. */
  readonly failure: Ref.Ref<Option.Option<ApiError.ApiError>>
}

/** Formed one at a time, in key order: the budget decides each batch's size before the next. */
const form =
  <K, A, E, R>(purchase: Purchase<K, A, E, R>) =>
  (chunk: Chunk.Chunk<K>): Effect.Effect<Batch<K>> =>
    Effect.gen(function* () {
      const keys = Chunk.toReadonlyArray(chunk)
      if (yield* Ref.get(purchase.refused)) return { keys: [], reservation: Option.none(), unbought: keys }
      const reservation = yield* purchase.budget.reserveUpTo(keys.length)
      const granted = Option.match(reservation, { onNone: () => 0, onSome: (held) => held.credits })
      if (granted < keys.length) yield* Ref.set(purchase.refused, true)
      return { keys: keys.slice(0, granted), reservation, unbought: keys.slice(granted) }
    })

/** A batch that matched more records than keys: the rest of its pages, budgeted by the Pager. */
const morePages = <K, A, E, R>(purchase: Purchase<K, A, E, R>, keys: ReadonlyArray<K>, pageSize: number) =>
  Pager.stream({
    fetch: (paging) => purchase.options.fetch(keys, paging),
    credited: true,
    pageSize,
    startPage: 2,
    retry: purchase.options.retry,
  }).pipe(
    Stream.map((event): Event<K, A> => {
      switch (event._tag) {
        case "PageFetched":
          return { _tag: "Bought", keys, items: event.page.items, rejected: event.page.rejected }
        case "BudgetExhausted":
          return { _tag: "Unbought", keys }
        default: // DepthLimitReached
          return { _tag: "DepthLimitReached", keys }
      }
    }),
    Stream.provideService(CreditBudget.CreditBudget, purchase.budget),
  )

/**
 * A batch's events once its first page landed: that page, its further pages (when it has more
 * records than keys), and, when every page was read and `matches` is given, the keys none matched
 * (first, so whatever records a batch's keys as done knows their standing by then).
 */
const pagesOf = <K, A, E, R>(
  purchase: Purchase<K, A, E, R>,
  keys: ReadonlyArray<K>,
  page: Page.Page<A>,
): Effect.Effect<ReadonlyArray<Event<K, A>>, ApiError.ApiError> => {
  const { options } = purchase
  const pageSize = keys.length
  const more =
    options.oneRecordPerKey || Page.recordsOn(page) < pageSize || (page.resultCount ?? 0) <= pageSize
      ? Effect.succeed(Chunk.empty<Event<K, A>>())
      : Stream.runCollect(morePages(purchase, keys, pageSize))
  return Effect.map(more, (further) => {
    const events: ReadonlyArray<Event<K, A>> = [
      { _tag: "Bought", keys, items: page.items, rejected: page.rejected },
      ...Chunk.toReadonlyArray(further),
    ]
    const matches = options.matches
    // A batch with a record that did not decode cannot say which of its keys matched nothing (the
    // rejected record may be any key's): it says none, and its keys are done as bought.
    if (matches === undefined || events.some((event) => event._tag !== "Bought" || event.rejected.length > 0))
      return events
    const items = events.flatMap((event) => (event._tag === "Bought" ? event.items : []))
    const unmatched = keys.filter((key) => !items.some((item) => matches(key, item)))
    return [{ _tag: "Unmatched", keys, unmatched }, ...events]
  })
}

/** The batch's one credited request (then its further pages, if it has more records than keys). */
const buy = <K, A, E, R>(
  purchase: Purchase<K, A, E, R>,
  batch: Batch<K>,
): Effect.Effect<ReadonlyArray<Event<K, A>>, ApiError.ApiError> => {
  const { budget, options, gate } = purchase
  const unbought: ReadonlyArray<Event<K, A>> =
    batch.unbought.length === 0 ? [] : [{ _tag: "Unbought", keys: batch.unbought }]
  if (Option.isNone(batch.reservation) || batch.keys.length === 0) return Effect.succeed(unbought)
  const pageSize = batch.keys.length
  const request = CreditedRequest.send({
    budget,
    // A stop requested, or a definite failure met, while the batch waited its turn: not sent.
    firstReservation: Effect.flatMap(
      Effect.zip(budget.snapshot, Ref.get(purchase.failure)),
      ([snapshot, failed]) =>
        snapshot.closed || Option.isSome(failed)
          ? Effect.as(budget.release(Option.getOrThrow(batch.reservation)), Option.none())
          : Effect.succeed(batch.reservation),
    ),
    reserve: budget.reserve(pageSize),
    request: () => options.fetch(batch.keys, { page: 1, pageSize }),
    charged: Page.recordsOn,
    retry: options.retry,
  })
  // A permit around the one request only (morePages takes its own per page): never nested.
  const first = Option.isSome(gate) ? gate.value.withPermit(request) : request
  return Effect.flatMap(first, (delivered) =>
    Option.isNone(delivered)
      ? Effect.succeed<ReadonlyArray<Event<K, A>>>([{ _tag: "Unbought", keys: batch.keys }, ...unbought])
      : Effect.map(pagesOf(purchase, batch.keys, delivered.value.value), (events) => [
          ...events,
          ...unbought,
        ]),
  )
}

export const run = <K, A, E, R>(
  options: Options<K, A, E, R>,
): Stream.Stream<Event<K, A>, E | ApiError.ApiError, R | CreditBudget.CreditBudget> =>
  Stream.unwrap(
    Effect.gen(function* () {
      const purchase: Purchase<K, A, E, R> = {
        options,
        budget: yield* CreditBudget.CreditBudget,
        gate: yield* Effect.serviceOption(AdaptiveConcurrency.InFlight),
        refused: yield* Ref.make(false),
        failure: yield* Ref.make(Option.none<ApiError.ApiError>()),
      }
      // A definite failure (a 402, say) does not cut the other batches in flight short: they land
      // and are emitted (and accounted as delivered, not as unknown), no new batch is sent, and
      // the failure is raised after them.
      const landed = (batch: Batch<K>) =>
        buy(purchase, batch).pipe(
          Effect.catchAll((error) =>
            Effect.as(
              Effect.zipRight(Ref.set(purchase.failure, Option.some(error)), Ref.set(purchase.refused, true)),
              [] as ReadonlyArray<Event<K, A>>,
            ),
          ),
        )
      const raised = Stream.unwrap(
        Effect.map(
          Ref.get(purchase.failure),
          Option.match({ onNone: () => Stream.empty, onSome: Stream.fail }),
        ),
      )
      return options.keys.pipe(
        Stream.takeUntilEffect(() => Effect.map(Ref.get(purchase.failure), Option.isSome)),
        Stream.grouped(options.pageSize),
        Stream.mapEffect(form(purchase)),
        Stream.mapEffect(landed, { concurrency: options.concurrency }),
        Stream.flattenIterables,
        Stream.concat(raised),
      )
    }),
  )
