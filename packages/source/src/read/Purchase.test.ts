import { describe, expect, it } from "@effect/vitest"
import { Streams } from "@salesintel/airbyte"
import { ApiError, Contact, CreditBudget, type Page } from "@salesintel/core"
import * as Chunk from "effect/Chunk"
import * as Effect from "effect/Effect"
import * as Either from "effect/Either"
import * as Ref from "effect/Ref"
import * as Schema from "effect/Schema"
import * as Stream from "effect/Stream"
import { contact } from "../../../core/src/testing/Records.ts"
import { LedgerError } from "../bought/BoughtLedger.ts"
import { BoughtSet } from "../bought/BoughtSet.ts"
import type * as KeyedPurchase from "../components/KeyedPurchase.ts"
import type * as PagedQuery from "../components/PagedQuery.ts"
import { memoryLedger } from "../testing/MemoryLedger.ts"
import * as Output from "./Output.ts"
import * as Purchase from "./Purchase.ts"

const decode = Schema.decodeUnknownSync(Contact.Contact)
const item = (id: number): Page.Item<Contact.Contact> => {
  const raw = contact(id)
  return { record: decode(raw), raw }
}
/**
 * A page of the contacts `ids`; those in `bad` sent with `job_level` a number (rejected, their
 * match_id and all), and `-1` one without its match_id.
 */
const page = (
  number: number,
  ids: ReadonlyArray<number>,
  bad: ReadonlyArray<number> = [],
): Page.Page<Contact.Contact> => ({
  page: number,
  pageSize: ids.length,
  resultCount: undefined,
  isPreview: false,
  rejected: ids
    .filter((id) => bad.includes(id))
    .map((id) => {
      const { match_id, ...rest } = contact(Math.max(id, 1))
      const raw = id < 0 ? rest : { ...rest, match_id, job_level: 3 }
      return { raw, path: "search_results[0].job_level", description: "Expected string, actual 3" }
    }),
  items: ids.filter((id) => !bad.includes(id)).map(item),
})
const keyOfRejected = (raw: unknown) => Streams.keyOfRaw(Streams.streams.contacts, raw)
const pageEvent = (part: string, number: number, ids: ReadonlyArray<number>, afterGap = false) =>
  ({ _tag: "Page", part, page: page(number, ids), afterGap, holdsUnemitted: true }) as const

const today = 20_000
/** A bought set, and the checkpoint of it: the keys it holds when the checkpoint is taken. */
const setUp = () => {
  const bought = BoughtSet.fromJson({}, today, undefined)
  const checkpoint = Effect.sync(() => Output.checkpoint({ held: bought.size }))
  return { bought, checkpoint }
}
const paymentRequired: Stream.Stream<never, ApiError.ApiError> = Stream.fail(
  new ApiError.PaymentRequired({ endpoint: "people.search" }),
)

/** The tallies of `work`, summed. */
const tallied = (outputs: ReadonlyArray<Output.Output<Contact.Contact>>, work: string) =>
  outputs.reduce<Record<string, number>>((sum, output) => {
    if (output._tag !== "Tally" || output.work !== work) return sum
    for (const [name, n] of Object.entries(output.counts)) sum[name] = (sum[name] ?? 0) + (n ?? 0)
    return sum
  }, {})

const record = (item: Page.Item<Contact.Contact>) => Output.record(Streams.streams.contacts, item)

/** The outputs in a compact form: R:<match id>, C:<ids held>, S:<records>:<detail>, W:<message>. */
const brief = (outputs: ReadonlyArray<Output.Output<Contact.Contact>>) =>
  outputs.flatMap((output) => {
    switch (output._tag) {
      case "Record":
        return [`R:${output.decoded.value.match_id}`]
      case "Checkpoint":
        return [`C:${output.state.held}`]
      case "Shortfall":
        return [`S:${output.records}:${output.detail}`]
      case "Log":
        return [`W:${output.message}`]
      default:
        return []
    }
  })

/** The outputs, then the failure that ended the stream, if one did. */
const collect = <E>(stream: Stream.Stream<Output.Output<Contact.Contact>, E>) =>
  Effect.map(Stream.runCollect(Stream.either(stream)), (all) => {
    const elements = Chunk.toReadonlyArray(all)
    return {
      outputs: elements.flatMap((element) => (Either.isRight(element) ? [element.right] : [])),
      failure: elements.flatMap((element) => (Either.isLeft(element) ? [element.left] : []))[0],
    }
  })

describe("Purchase.creditedPages", () => {
  it.effect(
    "a page whose ledger lookup fails still lets its paid records out, counted as new, and says so",
    () =>
      Effect.gen(function* () {
        const failing = {
          ...memoryLedger([["m-1", today]]).ledger,
          lookup: () => Effect.fail(new LedgerError({ description: "connection lost" })),
        }
        const bought = yield* BoughtSet.fromLedger(undefined, failing, "contacts", today, undefined)
        const outputs = yield* collect(
          Purchase.creditedPages({
            events: Stream.make(pageEvent("a", 1, [1, 2])),
            keyOf: (value) => value.match_id,
            keyOfRejected,
            checkpoint: Effect.sync(() => Output.checkpoint({ held: bought.size })),
            bought,
            record,
            detail: "search s",
            work: "search s",
            endpoint: "people.search",
          }),
        )
        expect(outputs.failure).toBeUndefined()
        expect(brief(outputs.outputs).slice(0, 3)).toEqual([
          "W:search s: the ledger of what was bought could not be used: connection lost; this page's contacts are counted as new",
          "R:m-1",
          "R:m-2",
        ])
        expect(tallied(outputs.outputs, "search s")).toMatchObject({ bought: 2, new: 2, stale: 0 })
        expect(bought.boughtThisRun("m-2")).toBe(true)
      }),
  )

  it.effect("holds the key of a record bought that did not decode: it is not due again", () =>
    Effect.gen(function* () {
      const { bought, checkpoint } = setUp()
      const outputs = yield* collect(
        Purchase.creditedPages({
          events: Stream.make({
            _tag: "Page",
            part: "a",
            page: page(1, [1, 2, -1], [2, -1]),
            afterGap: false,
            holdsUnemitted: true,
          } as const),
          keyOf: (value) => value.match_id,
          keyOfRejected,
          checkpoint,
          bought,
          record,
          detail: "search s",
          work: "search s",
          endpoint: "people.search",
        }),
      )
      expect(outputs.failure).toBeUndefined()
      // Three records charged; m-1 a record, m-2 rejected with its key (held), one without a key.
      expect(tallied(outputs.outputs, "search s")).toMatchObject({ bought: 3, new: 1 })
      expect(bought.boughtThisRun("m-2")).toBe(true)
      expect(bought.due("m-2")).toBe(false)
      expect(bought.size).toBe(2)
    }),
  )

  it.effect(
    "records every page in the bought set before its records, and moves a full refresh's position",
    () =>
      Effect.gen(function* () {
        const { bought, checkpoint } = setUp()
        const moves = yield* Ref.make<ReadonlyArray<string>>([])
        const note = (entry: string) => Ref.update(moves, (all) => [...all, entry])
        const events: ReadonlyArray<PagedQuery.Event<Contact.Contact>> = [
          pageEvent("a", 1, [1, 2]),
          { _tag: "PartDone", part: "a" },
          pageEvent("b", 1, [3]),
          { _tag: "Refused", part: "b", nextPage: 2, pageSize: 2, records: 4 },
          pageEvent("b", 3, [5], true),
          { _tag: "Skipped", part: "c", records: 7 },
        ]
        const outputs = yield* collect(
          Purchase.creditedPages({
            events: Stream.fromIterable(events),
            keyOf: (value) => value.match_id,
            keyOfRejected,
            resume: {
              page: (part, number) => note(`page ${part}${number}`),
              refused: (part, next) => note(`refused ${part}${next}`),
              partDone: (part) => note(`done ${part}`),
            },
            checkpoint,
            bought,
            record,
            detail: "search s",
            work: "search s",
            endpoint: "people.search",
          }),
        )
        expect(brief(outputs.outputs)).toEqual([
          "R:m-1",
          "R:m-2",
          "C:2",
          "C:2",
          "R:m-3",
          "C:3",
          "S:4:search s",
          "R:m-5",
          "C:4",
          "S:7:search s (parts not begun)",
        ])
        // The page that landed after the refused one does not move the position past it.
        expect(yield* Ref.get(moves)).toEqual(["page a1", "done a", "page b1", "refused b2"])
        expect(bought.size).toBe(4)
        // Three credited pages, four records bought, all of them new to the set.
        expect(tallied(outputs.outputs, "search s")).toEqual({
          creditedRequests: 3,
          bought: 4,
          new: 4,
          stale: 0,
        })
      }),
  )

  it.effect("without a position (a direct read) it ends with a checkpoint of the bought set", () =>
    Effect.gen(function* () {
      const { bought, checkpoint } = setUp()
      const outputs = yield* collect(
        Purchase.creditedPages({
          events: Stream.make(pageEvent("a", 1, [1]), { _tag: "PartDone", part: "a" } as const),
          keyOf: (value) => value.match_id,
          keyOfRejected,
          checkpoint,
          bought,
          record,
          detail: "search s",
          work: "search s",
          endpoint: "people.search",
        }),
      )
      expect(brief(outputs.outputs)).toEqual(["R:m-1", "C:1", "C:1"])
    }),
  )

  it.effect(
    "checkpoints a large bought set every 1/50 of it, and saves it before a failure is reported",
    () =>
      Effect.gen(function* () {
        const { bought, checkpoint } = setUp()
        bought.record(Array.from({ length: 500 }, (_, i) => `held-${i}`))
        const pages = Array.from({ length: 7 }, (_, i) => pageEvent("a", i + 1, [2 * i, 2 * i + 1]))
        const outputs = yield* collect(
          Purchase.creditedPages({
            events: Stream.concat(Stream.fromIterable(pages), paymentRequired),
            keyOf: (value) => value.match_id,
            keyOfRejected,
            checkpoint,
            bought,
            record,
            detail: "search s",
            work: "search s",
            endpoint: "people.search",
          }),
        )
        // 500 held: one checkpoint per 10 records, so after pages 5 (10 records); then the failure's.
        expect(brief(outputs.outputs).filter((entry) => entry.startsWith("C:"))).toEqual(["C:510", "C:514"])
        expect(brief(outputs.outputs).at(-1)).toBe("C:514")
        expect(outputs.failure?._tag).toBe("PaymentRequired")
      }),
  )
})

describe("Purchase.keyedBatches", () => {
  const batch = (ids: ReadonlyArray<number>): KeyedPurchase.Event<string, Contact.Contact> => ({
    _tag: "Bought",
    keys: ids.map((id) => `m-${id}`),
    items: ids.map(item),
    rejected: [],
  })

  it.effect(
    "sums the keys left into one shortfall, warns of a batch past the paging depth, ends with a checkpoint",
    () =>
      Effect.gen(function* () {
        const { bought, checkpoint } = setUp()
        const events: ReadonlyArray<KeyedPurchase.Event<string, Contact.Contact>> = [
          batch([1, 2]),
          { _tag: "DepthLimitReached", keys: ["m-9"] },
          { _tag: "Unbought", keys: ["m-3", "m-4"] },
          { _tag: "Unbought", keys: ["m-5"] },
        ]
        const outputs = yield* collect(
          Purchase.keyedBatches({
            events: Stream.fromIterable(events),
            recordBought: (event) => bought.record(event.keys),
            everyBatch: true,
            shortfall: (left) =>
              Effect.succeed(left === 0 ? undefined : Output.shortfall(left, left, "emails")),
            checkpoint,
            bought,
            record,
            detail: "emails",
            work: "emails",
            endpoint: "people.search",
          }),
        )
        expect(brief(outputs.outputs)).toEqual([
          "R:m-1",
          "R:m-2",
          "C:2",
          "W:emails: a batch of 1 keys matched more records than paging reaches",
          "S:3:emails",
          "C:2",
        ])
        expect(outputs.failure).toBeUndefined()
      }),
  )

  it.effect(
    "a failure after some batches: what they bought is checkpointed, then the failure is raised",
    () =>
      Effect.gen(function* () {
        const { bought, checkpoint } = setUp()
        const outputs = yield* collect(
          Purchase.keyedBatches({
            events: Stream.concat(Stream.make(batch([1]), batch([2])), paymentRequired),
            recordBought: (event) => bought.record(event.items.map((each) => each.record.match_id)),
            everyBatch: false,
            shortfall: () => Effect.succeed(undefined),
            checkpoint,
            bought,
            record,
            detail: "search s",
            work: "search s",
            endpoint: "people.search",
          }),
        )
        expect(brief(outputs.outputs)).toEqual(["R:m-1", "C:1", "R:m-2", "C:2", "C:2"])
        expect(outputs.failure?._tag).toBe("PaymentRequired")
      }),
  )
})

describe("Purchase.keys", () => {
  /** Buys by match id from the contacts 1 to 99, one credit each; `bought` is asked by each listing. */
  const keysOf = (options: {
    readonly bought: BoughtSet
    readonly listings: ReadonlyArray<ReadonlyArray<number>>
    readonly again?: boolean
    readonly stopped?: boolean
    /** Contacts whose record is sent with a field of the wrong type. */
    readonly bad?: ReadonlyArray<number>
  }) => {
    const asked: Array<ReadonlyArray<string>> = []
    const outputs = Purchase.keys({
      keys: Stream.fromIterable(options.listings.map((ids) => ids.map((id) => `m-${id}`))),
      again: options.again ?? false,
      purchase: {
        pageSize: 2,
        concurrency: 1,
        retry: { max_attempts: 1, initial_delay_ms: 1, max_delay_ms: 1, max_retry_after_ms: 1 },
        fetch: (ids, paging) =>
          Effect.sync(() => {
            asked.push(ids)
            return {
              ...page(
                paging.page,
                ids.map((id) => Number(id.slice(2))),
                options.bad,
              ),
              pageSize: paging.pageSize,
            }
          }),
        oneRecordPerKey: true,
      },
      keyOf: (value) => value.match_id,
      keyOfRejected,
      noun: "contacts",
      listingStopped: Effect.succeed(options.stopped ?? false),
      checkpoint: Effect.sync(() => Output.checkpoint({ held: options.bought.size })),
      bought: options.bought,
      record,
      detail: "search s",
      work: "search s",
      endpoint: "people.search",
    })
    return { outputs, asked }
  }

  it.effect("buys each due key once, in the order listed, and tallies how every listed key stood", () =>
    Effect.gen(function* () {
      // m-1 held and fresh, m-2 held and due again (bought 40 days ago, refreshed after 30).
      const bought = BoughtSet.fromJson({ [today]: ["m-1"], [today - 40]: ["m-2"] }, today, 30)
      const { outputs, asked } = keysOf({
        bought,
        listings: [
          [1, 2, 3],
          [3, 4, 1],
        ],
      })
      const read = yield* collect(Stream.provideLayer(outputs, CreditBudget.layer(100)))
      expect(read.failure).toBeUndefined()
      // A checkpoint after each batch (the set is small), and one to close.
      expect(brief(read.outputs)).toEqual(["R:m-2", "R:m-3", "C:3", "R:m-4", "C:4", "C:4"])
      expect(asked).toEqual([["m-2", "m-3"], ["m-4"]])
      expect(tallied(read.outputs, "search s")).toMatchObject({
        listed: 6,
        new: 2,
        stale: 1,
        // m-1 held both times it is listed; m-3 listed again once queued.
        held: 2,
        earlier: 1,
        bought: 3,
      })
    }),
  )

  it.effect("a key bought whose record did not decode is held: listed again, it is not bought again", () =>
    Effect.gen(function* () {
      const bought = BoughtSet.fromJson({}, today, undefined)
      const { outputs, asked } = keysOf({
        bought,
        listings: [
          [1, 2],
          [2, 3],
        ],
        bad: [2],
      })
      const read = yield* collect(Stream.provideLayer(outputs, CreditBudget.layer(100)))
      expect(read.failure).toBeUndefined()
      expect(asked).toEqual([["m-1", "m-2"], ["m-3"]])
      expect(bought.due("m-2")).toBe(false)
      expect(["m-1", "m-2", "m-3"].filter((key) => !bought.boughtThisRun(key))).toEqual([])
      expect(bought.size).toBe(3)
    }),
  )

  it.effect("again (a full refresh): every key not bought by this run is bought, held or not", () =>
    Effect.gen(function* () {
      const bought = BoughtSet.fromJson({ [today]: ["m-1"] }, today, undefined)
      const { outputs } = keysOf({ bought, listings: [[1, 2]], again: true })
      const read = yield* collect(Stream.provideLayer(outputs, CreditBudget.layer(100)))
      expect(brief(read.outputs)).toEqual(["R:m-1", "R:m-2", "C:2", "C:2"])
      expect(tallied(read.outputs, "search s")).toMatchObject({ stale: 1, new: 1, held: 0 })
    }),
  )

  it.effect("what the budget left is one shortfall, said to be more when the listing was stopped", () =>
    Effect.gen(function* () {
      const bought = BoughtSet.fromJson({}, today, undefined)
      const { outputs } = keysOf({ bought, listings: [[1, 2, 3, 4, 5]], stopped: true })
      const read = yield* collect(Stream.provideLayer(outputs, CreditBudget.layer(3)))
      expect(brief(read.outputs)).toEqual([
        "R:m-1",
        "R:m-2",
        "C:2",
        "R:m-3",
        "C:3",
        "S:2:search s (new or stale contacts; the free listing was stopped too, so more may remain)",
        "C:3",
      ])
    }),
  )

  it.effect("looks each listing up in the ledger as it comes, and keeps nothing it said once sorted", () =>
    Effect.gen(function* () {
      const { ledger, asked } = memoryLedger([
        ["m-1", today],
        ["m-2", today],
      ])
      const bought = yield* BoughtSet.fromLedger(undefined, ledger, "contacts", today, undefined)
      const { outputs } = keysOf({
        bought,
        listings: [
          [1, 3],
          [2, 4],
        ],
      })
      const read = yield* collect(Stream.provideLayer(outputs, CreditBudget.layer(100)))
      expect(brief(read.outputs)).toEqual(["R:m-3", "R:m-4", "C:4", "C:4"])
      expect(asked).toEqual([2, 2])
      // Sorted and settled: asked about again, a held key is looked up again, not answered from memory.
      expect(() => bought.has("m-1")).toThrow(/before it was looked up/)
    }),
  )
})
