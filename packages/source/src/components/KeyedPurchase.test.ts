import { describe, expect, it } from "@effect/vitest"
import { ApiError, type Client, Connection, CreditBudget, type Page } from "@salesintel/core"
import * as Chunk from "effect/Chunk"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Random from "effect/Random"
import * as Stream from "effect/Stream"
import * as KeyedPurchase from "./KeyedPurchase.ts"

const retry = Connection.RetrySettings.make({ max_attempts: 2, initial_delay_ms: 1, max_delay_ms: 1 })

/** A provider that returns one record per key asked for, in a scrambled completion order. */
const fakeFetch = (options: { failOn?: string } = {}) => {
  const requested: Array<ReadonlyArray<string>> = []
  const fetch = (keys: ReadonlyArray<string>, paging: Client.Paging) =>
    Effect.gen(function* () {
      requested.push(keys)
      const yields = yield* Random.nextIntBetween(0, 20)
      for (let i = 0; i < yields; i++) yield* Effect.yieldNow()
      if (options.failOn !== undefined && keys.includes(options.failOn))
        return yield* new ApiError.PaymentRequired({ endpoint: "people.search" })
      const page: Page.Page<string> = {
        page: paging.page,
        pageSize: paging.pageSize,
        resultCount: keys.length,
        isPreview: false,
        rejected: [],
        items: keys.map((key) => ({ record: key, raw: { key } })),
      }
      return page
    })
  return { fetch, requested }
}

const keys = Array.from({ length: 23 }, (_, i) => `k-${i}`)

const run = (limit: number, fake: ReturnType<typeof fakeFetch>, concurrency = 3) =>
  Effect.gen(function* () {
    const budget = yield* CreditBudget.make(limit)
    const events = yield* KeyedPurchase.run({
      keys: Stream.fromIterable(keys),
      pageSize: 5,
      concurrency,
      retry,
      fetch: fake.fetch,
      oneRecordPerKey: true,
    }).pipe(
      Stream.runCollect,
      Effect.either,
      Effect.provide(Layer.succeed(CreditBudget.CreditBudget, budget)),
    )
    return { events, snapshot: yield* budget.snapshot }
  })

describe("KeyedPurchase", () => {
  it.effect("buys every key once, in key order, each batch asking for exactly its keys", () =>
    Effect.gen(function* () {
      const fake = fakeFetch()
      const { events, snapshot } = yield* run(1_000, fake)
      const bought = Chunk.toReadonlyArray(events._tag === "Right" ? events.right : Chunk.empty()).flatMap(
        (event) => (event._tag === "Bought" ? event.items.map((item) => item.record) : []),
      )
      expect(bought).toEqual(keys)
      expect(fake.requested.map((batch) => batch.length)).toEqual([5, 5, 5, 5, 3])
      expect(snapshot.spent).toBe(23)
      expect(snapshot.reserved).toBe(0)
    }),
  )

  it.effect("a budget below the batch size buys what it can, and reports the rest unbought", () =>
    Effect.gen(function* () {
      const fake = fakeFetch()
      const { events, snapshot } = yield* run(7, fake)
      const all = Chunk.toReadonlyArray(events._tag === "Right" ? events.right : Chunk.empty())
      const bought = all.flatMap((event) => (event._tag === "Bought" ? event.keys : []))
      const unbought = all.flatMap((event) => (event._tag === "Unbought" ? event.keys : []))
      expect(bought).toEqual(keys.slice(0, 7))
      expect(unbought).toEqual(keys.slice(7))
      expect(snapshot.spent).toBe(7)
    }),
  )

  it.effect("a definite failure lets the batches in flight land, then is raised", () =>
    Effect.gen(function* () {
      const fake = fakeFetch({ failOn: "k-7" })
      const { events, snapshot } = yield* run(1_000, fake, 4)
      expect(events._tag === "Left" && events.left._tag).toBe("PaymentRequired")
      // Whatever was delivered was settled, nothing is left held, nothing counted as unknown.
      expect(snapshot.uncertain).toBe(0)
      expect(snapshot.reserved).toBe(0)
      expect(snapshot.spent).toBe(fake.requested.filter((batch) => !batch.includes("k-7")).flat().length)
    }),
  )

  it.effect("a batch with a record that did not decode does not say which keys matched nothing", () =>
    Effect.gen(function* () {
      const budget = yield* CreditBudget.make(100)
      // k-0 and k-7 match nothing; k-3's record comes back without its key (rejected).
      const fetch = (asked: ReadonlyArray<string>, paging: Client.Paging) =>
        Effect.succeed<Page.Page<string>>({
          page: paging.page,
          pageSize: paging.pageSize,
          resultCount: undefined,
          isPreview: false,
          items: asked
            .filter((key) => key !== "k-0" && key !== "k-7" && key !== "k-3")
            .map((key) => ({ record: key, raw: { key } })),
          rejected: asked.includes("k-3")
            ? [{ raw: {}, path: "search_results[2].key", description: "is missing" }]
            : [],
        })
      const events = yield* KeyedPurchase.run({
        keys: Stream.fromIterable(keys.slice(0, 10)),
        pageSize: 5,
        concurrency: 1,
        retry,
        fetch,
        oneRecordPerKey: false,
        matches: (key, item) => item.record === key,
      }).pipe(Stream.runCollect, Effect.provide(Layer.succeed(CreditBudget.CreditBudget, budget)))
      const unmatched = Chunk.toReadonlyArray(events).flatMap((event) =>
        event._tag === "Unmatched" ? [[...event.keys]] : [],
      )
      // The batch of k-0..k-4 holds k-3's rejected record: no Unmatched (though k-0 matched
      // nothing); the next batch says k-7 matched nothing.
      expect(unmatched).toEqual([["k-5", "k-6", "k-7", "k-8", "k-9"]])
      const said = Chunk.toReadonlyArray(events).flatMap((event) =>
        event._tag === "Unmatched" ? event.unmatched : [],
      )
      expect(said).toEqual(["k-7"])
      // Charged every record on the pages, the rejected one included: 3 + 1, then 4.
      expect((yield* budget.snapshot).spent).toBe(8)
    }),
  )
})
