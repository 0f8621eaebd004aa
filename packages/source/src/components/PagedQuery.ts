/**
 * A partitioned, resumable paged query: one contacts search read page by page through its
 * partitions (just itself when it fits in the 10,000-record paging depth), sized with the free
 * preview. Credited (the search itself, for full_refresh) or free (the preview, to list match
 * ids); either way every page goes through the Pager, so the budget and a stop request apply.
 *
 * Resumable: given the parts already read and the page reached in the current one, it starts
 * there. Events carry the part's key, so the caller's checkpoint can record the position.
 */
import type { ApiError, Client, Connection, Filters, Page } from "@salesintel/core"
import { CreditBudget, Pager, Partitioner } from "@salesintel/core"
import * as Chunk from "effect/Chunk"
import * as Deferred from "effect/Deferred"
import * as Effect from "effect/Effect"
import * as Fiber from "effect/Fiber"
import * as Queue from "effect/Queue"
import * as Ref from "effect/Ref"
import type * as Scope from "effect/Scope"
import * as Stream from "effect/Stream"
import * as Take from "effect/Take"
import { canonicalJson } from "../CanonicalJson.ts"

export interface Position {
  /** Keys of the parts read to the end. */
  readonly completed: ReadonlyArray<string>
  /**
   * The part being read, the next page to ask for, and the page size its pages were read at (absent
   * in a state saved before it was kept: then the page size of the read that resumes it).
   */
  readonly current:
    | { readonly part: string; readonly next_page: number; readonly page_size?: number | undefined }
    | undefined
}

/** Where a part's pages begin, and at what page size. */
export interface PartStart {
  readonly startPage: number
  readonly pageSize: number
}

/**
 * Where the part `key` resumes when read at `pageSize`. A position saved at another page size is
 * converted when its offset falls on a page boundary of the new size; otherwise the part is read
 * to its end at the size it was begun with. Either way no record before the offset is asked for
 * again (bought twice) and none after it is skipped (which a full refresh would then delete as not
 * found again).
 */
export const partStart = (position: Position | undefined, key: string, pageSize: number): PartStart => {
  const current = position?.current
  if (current?.part !== key) return { startPage: 1, pageSize }
  const savedSize = current.page_size ?? pageSize
  const offset = (current.next_page - 1) * savedSize
  return offset % pageSize === 0
    ? { startPage: offset / pageSize + 1, pageSize }
    : { startPage: current.next_page, pageSize: savedSize }
}

/** Records of the part `key` read before `position` (0 when it is not the part being read). */
export const recordsRead = (position: Position | undefined, key: string, pageSize: number): number => {
  const start = partStart(position, key, pageSize)
  return (start.startPage - 1) * start.pageSize
}

export interface Options<A> {
  readonly client: Client.SalesIntelClientService
  /** Names the parts' keys (the search's name). */
  readonly name: string
  readonly filters: Filters.PeopleFilters
  readonly fetch: (
    filters: Filters.PeopleFilters,
    paging: Client.Paging,
  ) => Effect.Effect<Page.Page<A>, ApiError.ApiError>
  readonly credited: boolean
  readonly pageSize: number
  readonly concurrency: number
  readonly position?: Position | undefined
  /** Attempts of a credited page after an unknown outcome, each under a new reservation. */
  readonly retry: Connection.RetrySettings
  /** The partition plan, when the caller made it already (see `plan`); else it is made here. */
  readonly plan?: Partitioner.Plan | undefined
  /** On a failure, the pages in flight land and are emitted before it (Pager.landInFlightOnFailure). */
  readonly landInFlightOnFailure?: boolean | undefined
  /**
   * Run once every planned page of the query has its reservation (its pages may still be in
   * flight): from then on the query reserves nothing more, so the caller may let other spending
   * begin (read/Purchase.ts hands a stream's turn over with it). Not run when the query fails
   * first. A part that grows past its plan may still reserve its extra pages after it.
   */
  readonly onAllReserved?: Effect.Effect<void> | undefined
}

/** The search's partitions, sized with the free preview (`partition`, below, of the options). */
export const plan = (
  options: Pick<Options<unknown>, "client" | "filters" | "concurrency">,
): Effect.Effect<Partitioner.Plan, ApiError.ApiError> =>
  partition(options.client, options.filters, options.concurrency)

export type Event<A> =
  /** The search's partition plan, sized with the free preview: first, before any page. */
  | { readonly _tag: "Planned"; readonly plan: Partitioner.Plan }
  | { readonly _tag: "Warning"; readonly message: string }
  /**
   * A page of records. `afterGap`: it is passed on after a refusal (it was in flight, and is paid
   * for), so the position must not move past the refused page. Decided where the caller takes the
   * events (`passedOn`), in their order: a part that runs ahead may be refused while the pages of
   * the parts before it still wait to be passed on, and those are not after the gap.
   */
  | {
      readonly _tag: "Page"
      readonly part: string
      readonly page: Page.Page<A>
      readonly afterGap: boolean
      /** It holds a permit of `Shared.unemitted` (a part's pages past its plan do not). */
      readonly holdsUnemitted: boolean
    }
  /**
   * The budget (or a stop request) refused the part's page `nextPage` (of `pageSize` records);
   * `records` left when known.
   */
  | {
      readonly _tag: "Refused"
      readonly part: string
      readonly nextPage: number
      readonly pageSize: number
      readonly records: number | undefined
    }
  | { readonly _tag: "PartDone"; readonly part: string }
  /** A part not begun because an earlier one was refused: `records` it holds, all unread. */
  | { readonly _tag: "Skipped"; readonly part: string; readonly records: number }

/**
 * What the parts of a search share, and the searches read in turn (`inTurn`) share with each other.
 */
interface Shared {
  /** Once a part is refused, no later part is begun (its pages in flight still land). */
  readonly refused: Ref.Ref<boolean>
  /** A refusal has been passed on to the caller: what comes after it is after the gap. */
  readonly refusalPassedOn: Ref.Ref<boolean>
  /**
   * Pages paid for and not yet passed to the caller, across every part (Pager's `unemitted`): at
   * most `concurrency`, given back as the caller takes each page (`passedOn`).
   */
  readonly unemitted: Effect.Semaphore
}

const makeShared = (concurrency: number): Effect.Effect<Shared> =>
  Effect.all({
    refused: Ref.make(false),
    refusalPassedOn: Ref.make(false),
    unemitted: Effect.makeSemaphore(Math.max(1, Math.floor(concurrency))),
  })

/** One part read through the Pager, from the saved position when it is the current part. */
const partEvents = <A>(
  options: Options<A>,
  shared: Shared,
  part: Partitioner.Part,
  plannedReserved: Deferred.Deferred<boolean>,
  /** This part's own refusal: a later part's does not make it unfinished. */
  refusedHere: Ref.Ref<boolean>,
): Stream.Stream<Event<A>, ApiError.ApiError, CreditBudget.CreditBudget> => {
  const key = partKey(options.name, part.filters)
  const start = partStart(options.position, key, options.pageSize)
  const pages = Pager.stream({
    fetch: (paging) => options.fetch(part.filters, paging),
    credited: options.credited,
    pageSize: start.pageSize,
    concurrency: options.concurrency,
    startPage: start.startPage,
    expectedRecords: part.count,
    retry: options.retry,
    landInFlightOnFailure: options.landInFlightOnFailure,
    plannedReserved,
    unemitted: shared.unemitted,
  }).pipe(
    Stream.mapEffect((event): Effect.Effect<Event<A>> => {
      switch (event._tag) {
        case "PageFetched":
          return Effect.succeed({
            _tag: "Page",
            part: key,
            page: event.page,
            afterGap: false,
            holdsUnemitted: event.holdsUnemitted,
          })
        case "BudgetExhausted":
          return Effect.as(Effect.zipRight(Ref.set(refusedHere, true), Ref.set(shared.refused, true)), {
            _tag: "Refused",
            part: key,
            nextPage: event.nextPage,
            pageSize: start.pageSize,
            records:
              event.recordsRemaining ?? Math.max(0, part.count - (event.nextPage - 1) * start.pageSize),
          })
        default: // DepthLimitReached
          return Effect.succeed({
            _tag: "Warning",
            message: `contacts search "${options.name}": a partition grew past the paging depth while it was read (${event.resultCount ?? "?"} records, ${event.recordsReachable} reachable); the rest is read on the next run.`,
          })
      }
    }),
  )
  // A part refused part-way is not done: the next run resumes it.
  const done = Stream.unwrap(
    Effect.map(Ref.get(refusedHere), (refused) =>
      refused ? Stream.empty : Stream.make<Array<Event<A>>>({ _tag: "PartDone", part: key }),
    ),
  )
  return Stream.concat(pages, done)
}

/**
 * Waits until a part has reserved its last page (true), or was refused or ended (false), then
 * until it ended if it did not reserve them all, so that the next part knows what happened.
 */
const handOver = (reserved: Deferred.Deferred<boolean>, ended: Effect.Effect<unknown>) =>
  Effect.flatMap(Effect.raceFirst(Deferred.await(reserved), Effect.as(ended, false)), (allReserved) =>
    allReserved ? Effect.void : Effect.asVoid(ended),
  )

/**
 * The parts are read one after the other, but a part begins as soon as the one before has
 * reserved its last page, while that one's last pages are still in flight: no pause of one
 * latency between parts. The first part streams straight to the caller; each later one runs ahead
 * into a queue of one event, read in part order. Credits are still reserved in part order, page by
 * page. Parts that run ahead share one bound with the part being read (`Shared.unemitted`): the
 * pages paid for and not yet passed on (what a kill without warning may buy again) are at most
 * `concurrency` however many parts have begun, where before a chain of small parts, each begun
 * once the one before had reserved its last page, could land hundreds of pages ahead of the reader.
 */
const pipelined = <A>(
  options: Options<A>,
  shared: Shared,
  toRead: ReadonlyArray<Partitioner.Part>,
  allReserved: Deferred.Deferred<boolean>,
) =>
  Effect.gen(function* () {
    const scope = yield* Effect.scope
    const failed = yield* Ref.make(false)
    const eventsOf = (part: Partitioner.Part, plannedReserved: Deferred.Deferred<boolean>) =>
      Stream.unwrap(
        Effect.map(Ref.get(shared.refused), (stop) =>
          stop
            ? Stream.make<Array<Event<A>>>({
                _tag: "Skipped",
                part: partKey(options.name, part.filters),
                records: part.count,
              })
            : Stream.unwrap(
                Effect.map(Ref.make(false), (refusedHere) =>
                  partEvents(options, shared, part, plannedReserved, refusedHere),
                ),
              ),
        ),
      ).pipe(Stream.tapErrorCause(() => Ref.set(failed, true)))
    const [firstPart, ...laterParts] = toRead
    if (firstPart === undefined) {
      yield* Deferred.succeed(allReserved, true)
      return Stream.empty
    }
    const firstReserved = yield* Deferred.make<boolean>()
    const firstEnded = yield* Deferred.make<void>()
    const first = eventsOf(firstPart, firstReserved).pipe(
      Stream.ensuring(Deferred.succeed(firstEnded, undefined)),
    )
    const queues = yield* Effect.forEach(laterParts, () =>
      Queue.bounded<Take.Take<Event<A>, ApiError.ApiError>>(1),
    )
    const startLaterParts = Effect.gen(function* () {
      yield* handOver(firstReserved, Deferred.await(firstEnded))
      for (const [index, part] of laterParts.entries()) {
        const queue = queues[index]
        if (queue === undefined || (yield* Ref.get(failed))) return
        const reserved = yield* Deferred.make<boolean>()
        const reading = yield* Effect.forkIn(Stream.runIntoQueue(eventsOf(part, reserved), queue), scope)
        yield* handOver(reserved, Fiber.await(reading))
      }
      // Every part has reserved its planned pages (or ended): a search read in turn after this one may begin.
      yield* Deferred.succeed(allReserved, true)
    })
    yield* Effect.forkIn(startLaterParts, scope)
    return Stream.concat(
      first,
      Stream.concatAll(
        Chunk.fromIterable(queues.map((queue) => Stream.flattenTake(Stream.fromQueue(queue)))),
      ),
    )
  })

/**
 * The search's events, the pages among them still holding their permit of `shared.unemitted` (the
 * reader gives it back: `passedOn`). `allReserved` is completed once no planned page is left to
 * reserve.
 */
const events = <A>(
  options: Options<A>,
  shared: Shared,
  allReserved: Deferred.Deferred<boolean>,
): Stream.Stream<Event<A>, ApiError.ApiError, CreditBudget.CreditBudget> =>
  Stream.unwrapScoped(
    Effect.gen(function* () {
      const budget = yield* CreditBudget.CreditBudget
      // Stopped before the search began: not even its free previews are asked for.
      if ((yield* budget.snapshot).closed) {
        yield* Deferred.succeed(allReserved, true)
        if (options.onAllReserved !== undefined) yield* options.onAllReserved
        return Stream.make<Array<Event<A>>>({
          _tag: "Refused",
          part: options.name,
          nextPage: 1,
          pageSize: options.pageSize,
          records: undefined,
        })
      }
      const parts = options.plan ?? (yield* plan(options))
      const warnings = parts.unsplittable.map(
        (part): Event<A> => ({
          _tag: "Warning",
          message: `contacts search "${options.name}": ${part.count} records cannot be reached (${part.reason}); filters ${canonicalJson(part.filters)}. Narrow the search to read them.`,
        }),
      )
      // The plan first (what a caller estimates from), then the warnings, then the pages.
      const opening: ReadonlyArray<Event<A>> = [{ _tag: "Planned", plan: parts }, ...warnings]
      const completed = new Set(options.position?.completed ?? [])
      const toRead = parts.parts.filter((part) => !completed.has(partKey(options.name, part.filters)))
      const pages = yield* pipelined(options, shared, toRead, allReserved)
      if (options.onAllReserved !== undefined)
        yield* Effect.forkScoped(Effect.zipRight(Deferred.await(allReserved), options.onAllReserved))
      return Stream.concat(Stream.fromIterable(opening), pages)
    }),
  )

/**
 * Events as the caller takes them: a page taken gives its permit back, so a page further on can be
 * sent. Once a refusal is passed on, the pages after it are after the gap and the parts that end
 * after it are not done: the position stays at the refused page, the earliest the caller met.
 */
const passedOn =
  (shared: Shared) =>
  <A, E, R>(taken: Stream.Stream<Event<A>, E, R>): Stream.Stream<Event<A>, E, R> =>
    Stream.mapConcatEffect(taken, (event): Effect.Effect<ReadonlyArray<Event<A>>> => {
      switch (event._tag) {
        case "Page":
          return Effect.zipRight(
            event.holdsUnemitted ? shared.unemitted.release(1) : Effect.void,
            Effect.map(Ref.get(shared.refusalPassedOn), (afterGap) => [
              afterGap ? { ...event, afterGap } : event,
            ]),
          )
        case "Refused":
          return Effect.as(Ref.set(shared.refusalPassedOn, true), [event])
        case "PartDone":
          return Effect.map(Ref.get(shared.refusalPassedOn), (after) => (after ? [] : [event]))
        default:
          return Effect.succeed([event])
      }
    })

export const run = <A>(
  options: Options<A>,
): Stream.Stream<Event<A>, ApiError.ApiError, CreditBudget.CreditBudget> =>
  Stream.unwrap(
    Effect.map(
      Effect.zip(makeShared(options.concurrency), Deferred.make<boolean>()),
      ([shared, allReserved]) => passedOn(shared)(events(options, shared, allReserved)),
    ),
  )

/**
 * Several searches read in turn, as the parts of one search are: a search begins as soon as the
 * one before has reserved its last planned page (or ended), while that one's last pages are still
 * in flight, so no latency is paid between searches; credits are still reserved in search order.
 * The streams are for the caller to read in order: each but the one being read runs ahead into a
 * queue of one event. They share one bound of pages paid for and not passed on (`concurrency`, the
 * first query's), and one refusal: once a search is refused, the searches after it read nothing
 * (`Skipped`), as a search's later parts do, so a full refresh's one resume position stays where
 * the budget stopped it. A search is not begun after one before it failed.
 */
export const inTurn = <A>(
  queries: ReadonlyArray<Options<A>>,
): Effect.Effect<
  ReadonlyArray<Stream.Stream<Event<A>, ApiError.ApiError>>,
  never,
  Scope.Scope | CreditBudget.CreditBudget
> =>
  Effect.gen(function* () {
    const scope = yield* Effect.scope
    const shared = yield* makeShared(queries[0]?.concurrency ?? 1)
    const failed = yield* Ref.make(false)
    const runs = yield* Effect.forEach(queries, (query) =>
      Effect.map(Queue.bounded<Take.Take<Event<A>, ApiError.ApiError>>(1), (queue) => ({ query, queue })),
    )
    const beginInTurn = Effect.forEach(
      runs,
      ({ query, queue }) =>
        Effect.gen(function* () {
          if (yield* Ref.get(failed)) return yield* Queue.offer(queue, Take.end)
          const allReserved = yield* Deferred.make<boolean>()
          const read = events(query, shared, allReserved).pipe(
            Stream.tapErrorCause(() => Ref.set(failed, true)),
          )
          const reading = yield* Effect.forkIn(Stream.runIntoQueue(read, queue), scope)
          yield* handOver(allReserved, Fiber.await(reading))
        }),
      { discard: true },
    )
    yield* Effect.forkIn(beginInTurn, scope)
    return runs.map(({ queue }) => passedOn(shared)(Stream.flattenTake(Stream.fromQueue(queue))))
  })

/**
 * The search's partitions, sized with the free preview's counts: what `run` reads, and what a
 * read's estimate sizes itself with.
 */
export const partition = (
  client: Pick<Client.SalesIntelClientService, "previewPeople">,
  filters: Filters.PeopleFilters,
  concurrency: number,
): Effect.Effect<Partitioner.Plan, ApiError.ApiError> =>
  Partitioner.plan(filters, { count: Partitioner.previewCount(client), concurrency })

/** A part's key in the state: the search's name and the part's filters, canonically. */
export const partKey = (name: string, filters: Filters.PeopleFilters): string =>
  `${name}:${canonicalJson(filters)}`
