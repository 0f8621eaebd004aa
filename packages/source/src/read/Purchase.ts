/**
 * What a stream's purchases become, written once for every buying path: the components' events
 * (credited pages of a search, keyed batches) turned into outputs. Every record bought goes into
 * the bought set before it is emitted; a checkpoint follows when the set's cadence says one is due
 * (or after every batch, where a batch's keys are marked done); what the budget or a stop left is
 * one shortfall at the end; and whatever ends the read, what it bought is saved (a checkpoint)
 * before the failure is reported.
 */
import { type ApiError, type CreditBudget, Page } from "@salesintel/core"
import * as Chunk from "effect/Chunk"
import * as Effect from "effect/Effect"
import * as Either from "effect/Either"
import * as Option from "effect/Option"
import * as Ref from "effect/Ref"
import type * as Scope from "effect/Scope"
import * as Stream from "effect/Stream"
import type { LedgerError } from "../bought/BoughtLedger.ts"
import type { BoughtSet } from "../bought/BoughtSet.ts"
import * as KeyedPurchase from "../components/KeyedPurchase.ts"
import * as PagedQuery from "../components/PagedQuery.ts"
import type * as Checkpoints from "./Checkpoints.ts"
import * as Output from "./Output.ts"
import * as Rejections from "./Rejections.ts"
import { HandOver } from "./Turns.ts"

// ---------------------------------------------------------------------------------------------
// The order a stream's purchases spend in

/**
 * A stream's purchases, one after the other, in the order they spend: only the last may hand the
 * stream's turn over before it ends (Turns.HandOver), so no later credited stream spends before
 * the purchases after an earlier one have.
 */
export const inOrder = <A, E, R>(purchases: ReadonlyArray<Stream.Stream<A, E, R>>): Stream.Stream<A, E, R> =>
  Stream.concatAll(
    Chunk.fromIterable(
      purchases.map((purchase, index) =>
        index === purchases.length - 1 ? purchase : Stream.provideService(purchase, HandOver, Effect.void),
      ),
    ),
  )

/** What the queries of a stream's last purchase run once they will reserve no more (nothing else's). */
const handOver = Effect.map(Effect.serviceOption(HandOver), Option.getOrUndefined)

/** A paged query's events; the stream's turn is handed over once its planned pages are all reserved. */
export const queryEvents = <A>(
  query: PagedQuery.Options<A>,
): Stream.Stream<PagedQuery.Event<A>, ApiError.ApiError, CreditBudget.CreditBudget> =>
  Stream.unwrap(Effect.map(handOver, (onAllReserved) => PagedQuery.run({ ...query, onAllReserved })))

/**
 * Paged queries read in turn (PagedQuery.inTurn: each begins once the one before has reserved its
 * last planned page); the stream's turn is handed over once the last one's are all reserved.
 */
export const queriesInTurn = <A>(
  queries: ReadonlyArray<PagedQuery.Options<A>>,
): Effect.Effect<
  ReadonlyArray<Stream.Stream<PagedQuery.Event<A>, ApiError.ApiError>>,
  never,
  Scope.Scope | CreditBudget.CreditBudget
> =>
  Effect.flatMap(handOver, (onAllReserved) =>
    PagedQuery.inTurn(
      queries.map((query, index) => (index === queries.length - 1 ? { ...query, onAllReserved } : query)),
    ),
  )

interface Common<A> {
  /** The stream's state now. */
  readonly checkpoint: Effect.Effect<Output.Checkpoint>
  /** The one bought set of what is bought this way (its cadence times the checkpoints). */
  readonly bought: BoughtSet
  /**
   * Entries of the other sets each checkpoint carries in the state (the contacts' identities
   * looked up): counted into the cadence, so the state written stays proportional to the records
   * and not to their square. None by default.
   */
  readonly alongside?: (() => number) | undefined
  readonly record: (item: Page.Item<A>) => Output.RecordOutput<A>
  /** Names the work in logs and shortfalls, such as `contacts search "it-vps"`. */
  readonly detail: string
  /** The work its tallies count under, such as `search it-vps`. */
  readonly work: string
  /** The credited endpoint it buys from: named when its records stop decoding (Rejections.ts). */
  readonly endpoint: ApiError.Endpoint
}

/** `event`'s page counted against its rejected records (Rejections.ts), if it carries one. */
const counted = <A>(watch: Rejections.Watch, event: PagedQuery.Event<A> | KeyedPurchase.Event<unknown, A>) =>
  event._tag === "Page" ? watch.after(event.page) : event._tag === "Bought" ? watch.after(event) : Effect.void

/** A shortfall, said after the purchase stopped buying on its rejected records, with why. */
const shortfallOf = (
  watch: Rejections.Watch,
  records: number | undefined,
  detail: string,
): Effect.Effect<Output.Shortfall> =>
  Effect.map(watch.tipped, (tipped) =>
    Output.shortfall(records, records, detail, Option.isSome(tipped) ? Rejections.because : undefined),
  )

/** `outputs`, then a checkpoint if one is due after `records` more records. */
const withCheckpointWhenDue = <A>(
  checkpoint: Effect.Effect<Output.Checkpoint>,
  cadence: Checkpoints.Amortized,
  records: number,
  outputs: ReadonlyArray<Output.Output<A>>,
): Effect.Effect<ReadonlyArray<Output.Output<A>>> =>
  Effect.flatMap(cadence.due(records), (due) =>
    due ? Effect.map(checkpoint, (state) => [...outputs, state]) : Effect.succeed(outputs),
  )

/** Whatever ends the stream, what was bought is saved before the failure is reported. */
const savedBeforeFailure =
  (checkpoint: Effect.Effect<Output.Checkpoint>) =>
  <O, E, R>(outputs: Stream.Stream<O, E, R>): Stream.Stream<O | Output.Checkpoint, E, R> =>
    Stream.catchAll(outputs, (error) => Stream.concat(Stream.fromEffect(checkpoint), Stream.fail(error)))

// ---------------------------------------------------------------------------------------------
// Credited pages of a search

/**
 * Where a full refresh stands in its search, moved as its pages land, so a killed run resumes at
 * the next page instead of buying again. A read that is not resumable (a direct first read) has
 * none: the bought set alone says what it holds.
 */
export interface Resume {
  /**
   * A page (of `pageSize` records) landed in order (not after a refused one): the part's next page
   * is the one after it.
   */
  readonly page: (part: string, page: number, pageSize: number) => Effect.Effect<void>
  /** The part's `nextPage` (of `pageSize` records) was refused: the next run resumes there. */
  readonly refused: (part: string, nextPage: number, pageSize: number) => Effect.Effect<void>
  /** The part is read to the end. */
  readonly partDone: (part: string) => Effect.Effect<void>
}

export interface PagesOptions<A, E, R> extends Common<A> {
  readonly events: Stream.Stream<PagedQuery.Event<A>, E, R>
  /** The key the bought set records for a record. */
  readonly keyOf: (record: A) => string
  /** The key it records for a record bought that did not decode, read from its raw JSON (if it has one). */
  readonly keyOfRejected: (raw: unknown) => string | undefined
  readonly resume?: Resume | undefined
}

/**
 * The keys of the records a page carried that did not decode but carry their key: bought (the page
 * was paid for), so held like any record bought, and not bought again until due (the loader keeps
 * them in `_rejected`, which holds them there).
 */
const rejectedKeys = (
  keyOfRejected: (raw: unknown) => string | undefined,
  rejected: ReadonlyArray<Page.Rejected>,
): ReadonlyArray<string> =>
  rejected.flatMap((record) => {
    const key = keyOfRejected(record.raw)
    return key === undefined ? [] : [key]
  })

const pageOutputs = <A, E, R>(
  options: PagesOptions<A, E, R>,
  cadence: Checkpoints.Amortized,
  skipped: Ref.Ref<number>,
  watch: Rejections.Watch,
  event: PagedQuery.Event<A>,
): Effect.Effect<ReadonlyArray<Output.Output<A>>> => {
  const { resume, detail } = options
  switch (event._tag) {
    case "Planned":
      return Effect.succeed([])
    case "Warning":
      return Effect.succeed([Output.log("WARN", event.message)])
    case "Page": {
      const keys = event.page.items.map((item) => options.keyOf(item.record))
      const all = [...keys, ...rejectedKeys(options.keyOfRejected, event.page.rejected)]
      // The page is paid for: a lookup that fails (it only sorts new from stale for the tally)
      // still lets its records out, counted as new, and says so.
      return Effect.flatMap(Effect.either(options.bought.resolve(all)), (looked) => {
        const stale = Either.isLeft(looked) ? 0 : keys.filter((key) => options.bought.has(key)).length
        const said = Either.isLeft(looked)
          ? [Output.log("WARN", `${detail}: ${looked.left.message}; this page's contacts are counted as new`)]
          : []
        options.bought.record(all)
        // Recorded as bought by this run: what the lookup said of them is no longer needed.
        if (Either.isRight(looked)) options.bought.settle(all)
        // Bought: one credit a record on the page, rejected or sent twice included.
        const charged = Page.recordsOn(event.page)
        const tally = Output.tally(options.work, {
          creditedRequests: 1,
          bought: charged,
          new: keys.length - stale,
          stale,
        })
        const outputs = [...said, Output.pageRead, tally, ...Output.pageRecords(event.page, options.record)]
        const moved =
          resume === undefined || event.afterGap
            ? Effect.void
            : resume.page(event.part, event.page.page, event.page.pageSize)
        return Effect.zipRight(
          moved,
          withCheckpointWhenDue(options.checkpoint, cadence, event.page.items.length, outputs),
        )
      })
    }
    case "Refused":
      return Effect.zipRight(
        resume === undefined ? Effect.void : resume.refused(event.part, event.nextPage, event.pageSize),
        Effect.map(shortfallOf(watch, event.records, detail), (said) => [said]),
      )
    case "Skipped":
      return Effect.as(
        Ref.update(skipped, (records) => records + event.records),
        [],
      )
    case "PartDone":
      return resume === undefined
        ? Effect.succeed([])
        : Effect.zipRight(
            resume.partDone(event.part),
            Effect.map(options.checkpoint, (state) => [state]),
          )
  }
}

/**
 * A search read through its credited pages (a full refresh, or a direct first read): the records,
 * each recorded as bought; the parts not begun after a refusal summed into one shortfall; and, where
 * the read does not keep a position, a closing checkpoint of the bought set.
 */
export const creditedPages = <A, E, R>(
  options: PagesOptions<A, E, R>,
): Stream.Stream<Output.Output<A>, E | ApiError.Decode, R> =>
  Stream.unwrap(
    Effect.gen(function* () {
      const cadence = yield* options.bought.cadence(options.alongside)
      const skipped = yield* Ref.make(0)
      const watch = yield* Rejections.watch(options.endpoint)
      const pages = options.events.pipe(
        Stream.mapEffect((event) =>
          Effect.zipLeft(pageOutputs(options, cadence, skipped, watch, event), counted(watch, event)),
        ),
        Stream.flattenIterables,
        savedBeforeFailure(options.checkpoint),
      )
      const closing = Stream.unwrap(
        Effect.gen(function* () {
          const records = yield* Ref.get(skipped)
          const outputs: Array<Output.Output<A>> = []
          if (records > 0)
            outputs.push(yield* shortfallOf(watch, records, `${options.detail} (parts not begun)`))
          if (options.resume === undefined) outputs.push(yield* options.checkpoint)
          return Stream.fromIterable(outputs)
        }),
      )
      // Stopped on its rejected records: it fails once what was in flight has landed and is saved.
      return Stream.concat(
        Stream.concat(pages, closing),
        savedBeforeFailure(options.checkpoint)(watch.raised),
      )
    }),
  )

// ---------------------------------------------------------------------------------------------
// Keyed batches

type Bought<Event> = Extract<Event, { readonly _tag: "Bought" }>
type Unmatched<Event> = Extract<Event, { readonly _tag: "Unmatched" }>

export interface BatchesOptions<A, Event extends KeyedPurchase.Event<unknown, A>, E, R> extends Common<A> {
  readonly events: Stream.Stream<Event, E, R>
  /** Records what a batch bought in the bought set (its records' keys, or the keys it asked for). */
  readonly recordBought: (event: Bought<Event>) => void
  /**
   * A checkpoint after every batch (its keys are done once it is read), instead of at the bought
   * set's cadence (the set records each record as it comes).
   */
  readonly everyBatch: boolean
  /** The closing shortfall for `keys` left unbought, if one is due. */
  readonly shortfall: (keys: number) => Effect.Effect<Output.Shortfall | undefined>
  /** A batch read to its end said which of its keys matched nothing: recorded before its records. */
  readonly recordUnmatched?: ((event: Unmatched<Event>) => Effect.Effect<void>) | undefined
  /**
   * What is said, at the end (or before a failure is reported), when keys this read looked up
   * matched nothing: every batch read to its end, in key order.
   */
  readonly unmatchedWarnings?:
    | ((events: ReadonlyArray<Unmatched<Event>>) => ReadonlyArray<Output.Log>)
    | undefined
}

/** A keyed purchase's event as outputs: a batch's records, or what it left unbought or unmatched. */
const batchOutputs = <A, Event extends KeyedPurchase.Event<unknown, A>, E, R>(
  options: BatchesOptions<A, Event, E, R>,
  cadence: Checkpoints.Amortized,
  unbought: Ref.Ref<number>,
  unmatched: Ref.Ref<ReadonlyArray<Unmatched<Event>>>,
  event: Event,
): Effect.Effect<ReadonlyArray<Output.Output<A>>> => {
  if (event._tag === "Unbought")
    return Effect.as(
      Ref.update(unbought, (keys) => keys + event.keys.length),
      [],
    )
  if (event._tag === "DepthLimitReached")
    return Effect.succeed([
      Output.log(
        "WARN",
        `${options.detail}: a batch of ${event.keys.length} keys matched more records than paging reaches`,
      ),
    ])
  if (event._tag === "Unmatched") {
    const looked = event as Unmatched<Event>
    return Effect.as(
      Effect.zipRight(
        options.recordUnmatched?.(looked) ?? Effect.void,
        Ref.update(unmatched, (events) => [...events, looked]),
      ),
      [],
    )
  }
  const bought = event as Bought<Event>
  options.recordBought(bought)
  const tally = Output.tally(options.work, { creditedRequests: 1, bought: Page.recordsOn(bought) })
  const outputs = [Output.pageRead, tally, ...Output.pageRecords(bought, options.record)]
  return options.everyBatch
    ? Effect.map(options.checkpoint, (state) => [...outputs, state])
    : // The keys asked for: a batch whose keys matched nothing is done too, and so is due its checkpoint.
      withCheckpointWhenDue(options.checkpoint, cadence, bought.keys.length, outputs)
}

/**
 * Keyed purchases (match ids, domains, names): each batch's records, recorded as bought; the keys
 * the budget (or a stop) left, summed into one shortfall; and a closing checkpoint.
 */
export const keyedBatches = <A, Event extends KeyedPurchase.Event<unknown, A>, E, R>(
  options: BatchesOptions<A, Event, E, R>,
): Stream.Stream<Output.Output<A>, E | ApiError.Decode, R> =>
  Stream.unwrap(
    Effect.gen(function* () {
      const cadence = yield* options.bought.cadence(options.alongside)
      const unbought = yield* Ref.make(0)
      const unmatched = yield* Ref.make<ReadonlyArray<Unmatched<Event>>>([])
      const warnings = Effect.map(Ref.get(unmatched), (events) =>
        events.every((event) => event.unmatched.length === 0) || options.unmatchedWarnings === undefined
          ? []
          : options.unmatchedWarnings(events),
      )
      const watch = yield* Rejections.watch(options.endpoint)
      const batches = options.events.pipe(
        Stream.mapEffect((event) =>
          Effect.zipLeft(batchOutputs(options, cadence, unbought, unmatched, event), counted(watch, event)),
        ),
        Stream.flattenIterables,
        Stream.catchAll((error) => Stream.concat(Stream.fromIterableEffect(warnings), Stream.fail(error))),
        savedBeforeFailure(options.checkpoint),
      )
      const closing = Stream.unwrap(
        Effect.gen(function* () {
          const said = yield* warnings
          const shortfall = yield* options.shortfall(yield* Ref.get(unbought))
          const state = yield* options.checkpoint
          const tipped = Option.isSome(yield* watch.tipped)
          return Stream.fromIterable<Output.Output<A>>([
            ...said,
            ...(shortfall === undefined
              ? []
              : [tipped ? { ...shortfall, because: Rejections.because } : shortfall]),
            state,
          ])
        }),
      )
      // Stopped on its rejected records: it fails once what was in flight has landed and is saved.
      return Stream.concat(
        Stream.concat(batches, closing),
        savedBeforeFailure(options.checkpoint)(watch.raised),
      )
    }),
  )

// ---------------------------------------------------------------------------------------------
// Keys diffed against the bought set

/**
 * Where a listed key stands: listed or bought by this run already, never bought, due again, or
 * held (when every key is bought again, as a full refresh does, nothing is held).
 */
type Standing = "earlier" | "new" | "stale" | "held"

/** Whether a listed key is to be bought: due (never bought, or due again); with `again`, anything this run has not bought. */
export const toBuy = (bought: BoughtSet, again: boolean, key: string): boolean =>
  again ? !bought.boughtThisRun(key) : bought.due(key)

const standing = (bought: BoughtSet, again: boolean, queued: ReadonlySet<string>, key: string): Standing => {
  if (queued.has(key) || bought.boughtThisRun(key)) return "earlier"
  if (!bought.has(key)) return "new"
  return again || bought.due(key) ? "stale" : "held"
}

export interface KeysOptions<A, E, R> extends Common<A> {
  /**
   * The keys as they are listed (a free listing's page, a lookup's matches) at a time; a key may come
   * more than once. Each listing is looked up in the bought set as it comes, and what the lookup
   * said is dropped once its keys are sorted.
   */
  readonly keys: Stream.Stream<ReadonlyArray<string>, E, R>
  /** Buy every key this run has not bought (a full refresh), not only those due. */
  readonly again: boolean
  /** The keyed purchase of the keys to buy (KeyedPurchase.Options less its keys). */
  readonly purchase: Omit<KeyedPurchase.Options<string, A, never, never>, "keys">
  /** The key the bought set records for a record bought. */
  readonly keyOf: (record: A) => string
  /** The key it records for a record bought that did not decode, read from its raw JSON (if it has one). */
  readonly keyOfRejected: (raw: unknown) => string | undefined
  /** What the keys are, for the shortfall: `contacts`. */
  readonly noun: string
  /** The listing itself was stopped (a stop request): more keys may remain than were listed. */
  readonly listingStopped: Effect.Effect<boolean>
}

/**
 * Listed keys bought where they are due, each once, in the order listed: the purchase's records,
 * a shortfall for what the budget (or a stop) left, a tally of how the listed keys stood, and a
 * closing checkpoint.
 */
export const keys = <A, E, R>(
  options: KeysOptions<A, E, R>,
): Stream.Stream<Output.Output<A>, E | ApiError.ApiError | LedgerError, R | CreditBudget.CreditBudget> =>
  Stream.suspend(() => {
    const { bought, again } = options
    const queued = new Set<string>()
    const counts: Record<Standing, number> = { earlier: 0, new: 0, stale: 0, held: 0 }
    const due = options.keys.pipe(
      Stream.mapEffect((listed) => Effect.as(bought.resolve(listed), listed)),
      Stream.flattenIterables,
      Stream.filter((key) => {
        const stands = standing(bought, again, queued, key)
        // Sorted: what its lookup said is no longer needed (a key bought later is in the set).
        bought.settle([key])
        counts[stands]++
        if (stands === "new" || stands === "stale") queued.add(key)
        return stands === "new" || stands === "stale"
      }),
    )
    const tallied = Stream.suspend(() =>
      Stream.make(
        Output.tally(options.work, {
          ...counts,
          listed: counts.earlier + counts.new + counts.stale + counts.held,
        }),
      ),
    )
    const batches = keyedBatches({
      ...options,
      events: KeyedPurchase.run({ ...options.purchase, keys: due }),
      recordBought: (event) => {
        const boughtKeys = [
          ...event.items.map((item) => options.keyOf(item.record)),
          ...rejectedKeys(options.keyOfRejected, event.rejected),
        ]
        bought.record(boughtKeys)
        // Bought: the set says "earlier" for it from now on, so the queue need not hold it.
        for (const key of boughtKeys) queued.delete(key)
      },
      everyBatch: false,
      shortfall: (left) =>
        Effect.map(options.listingStopped, (stopped) =>
          left > 0 || stopped
            ? Output.shortfall(
                left,
                left,
                `${options.detail} (new or stale ${options.noun}${stopped ? "; the free listing was stopped too, so more may remain" : ""})`,
              )
            : undefined,
        ),
    })
    return Stream.concat(batches, tallied)
  })
