import { describe, expect, it } from "@effect/vitest"
import * as Chunk from "effect/Chunk"
import * as Deferred from "effect/Deferred"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Random from "effect/Random"
import * as Stream from "effect/Stream"
import fc from "fast-check"
import * as AdaptiveConcurrency from "./AdaptiveConcurrency.ts"
import { ServerError } from "./ApiError.ts"
import type { Paging } from "./Client.ts"
import { CreditBudget, type CreditBudgetService, make as makeBudget } from "./CreditBudget.ts"
import type { Page } from "./Page.ts"
import * as Pager from "./Pager.ts"

/**
 * A fake query of `total` records (ids 0..total-1) that charges one credit per record returned,
 * like the provider. Pages complete in a scrambled order (random yields) to exercise concurrency.
 */
const fakeQuery = (total: number, options: { failOnPage?: number; resultCount?: boolean } = {}) => {
  const requested: Array<number> = []
  let charged = 0
  const fetch = (paging: Paging) =>
    Effect.gen(function* () {
      requested.push(paging.page)
      const yields = yield* Random.nextIntBetween(0, 20)
      for (let i = 0; i < yields; i++) yield* Effect.yieldNow()
      if (paging.page === options.failOnPage)
        return yield* new ServerError({ endpoint: "people.search", status: 500 })
      const start = (paging.page - 1) * paging.pageSize
      const ids = Array.from(
        { length: Math.max(0, Math.min(paging.pageSize, total - start)) },
        (_, i) => start + i,
      )
      charged += ids.length
      const page: Page<number> = {
        page: paging.page,
        pageSize: paging.pageSize,
        resultCount: options.resultCount === false ? undefined : total,
        isPreview: false,
        rejected: [],
        items: ids.map((id) => ({ record: id, raw: { id } })),
      }
      return page
    })
  return { fetch, requested, charged: () => charged }
}

/** A budget that checks, at every step, that spent + reserved never passes the limit. */
const watchedBudget = (limit: number) =>
  Effect.gen(function* () {
    const inner = yield* makeBudget(limit)
    let worst = 0
    const watch = Effect.tap(inner.snapshot, (s) => {
      worst = Math.max(worst, s.spent + s.reserved)
    })
    const service: CreditBudgetService = {
      ...inner,
      reserve: (credits) => Effect.tap(inner.reserve(credits), () => watch),
      settle: (reservation, charged) => Effect.tap(inner.settle(reservation, charged), () => watch),
    }
    return { service, worst: () => worst }
  })

const collect = <A>(options: Pager.Options<A>, budgetLimit: number) =>
  Effect.gen(function* () {
    const budget = yield* watchedBudget(budgetLimit)
    const events = yield* Stream.runCollect(Pager.stream(options)).pipe(
      Effect.provide(Layer.succeed(CreditBudget, budget.service)),
    )
    const snapshot = yield* budget.service.snapshot
    const list = Chunk.toReadonlyArray(events)
    const records = list.flatMap((event) =>
      event._tag === "PageFetched" ? event.page.items.map((i) => i.record) : [],
    )
    return { events: list, records, snapshot, worst: budget.worst() }
  })

const range = (n: number) => Array.from({ length: n }, (_, i) => i)

describe("Pager", () => {
  it.effect("reads every page of a query once, in order, and stops at the last page", () =>
    Effect.gen(function* () {
      const query = fakeQuery(137)
      const { records, events, snapshot } = yield* collect(
        { fetch: query.fetch, credited: true, pageSize: 50, concurrency: 4 },
        10_000,
      )
      expect(records).toEqual(range(137))
      expect(query.requested.sort((a, b) => a - b)).toEqual([1, 2, 3])
      expect(events.map((e) => e._tag)).toEqual(["PageFetched", "PageFetched", "PageFetched"])
      expect(snapshot).toMatchObject({ spent: 137, reserved: 0 })
    }),
  )

  it.effect("charges a page every record on it, those that did not decode too, and reads on past it", () =>
    Effect.gen(function* () {
      // Three pages of 10 without a count: the first carries 4 records that did not decode, so it
      // holds 6 items but is full (10 records), and is not taken for the last page.
      const fetch = (paging: Paging) =>
        Effect.succeed<Page<number>>({
          page: paging.page,
          pageSize: paging.pageSize,
          resultCount: undefined,
          isPreview: false,
          items: range(paging.page === 3 ? 5 : paging.page === 1 ? 6 : 10).map((id) => ({
            record: id,
            raw: { id },
          })),
          rejected: range(paging.page === 1 ? 4 : 0).map((id) => ({
            raw: { id },
            path: `search_results[${id}].match_id`,
            description: "is missing",
          })),
        })
      const { events, snapshot } = yield* collect({ fetch, credited: true, pageSize: 10 }, 100)
      const charged = events.map((event) => (event._tag === "PageFetched" ? event.creditsCharged : -1))
      expect(charged).toEqual([10, 10, 5])
      expect(snapshot.spent).toBe(25)
    }),
  )

  it.effect("resumes from startPage without requesting the pages before it", () =>
    Effect.gen(function* () {
      const query = fakeQuery(230)
      const { records, snapshot } = yield* collect(
        { fetch: query.fetch, credited: true, pageSize: 50, startPage: 3, concurrency: 2 },
        10_000,
      )
      expect(records).toEqual(range(230).slice(100))
      expect(query.requested.sort((a, b) => a - b)).toEqual([3, 4, 5])
      expect(snapshot.spent).toBe(130)
    }),
  )

  it.effect("with a known count, requests every page concurrently from the first", () =>
    Effect.gen(function* () {
      const query = fakeQuery(230)
      const { records, snapshot } = yield* collect(
        { fetch: query.fetch, credited: true, expectedRecords: 230, concurrency: 4 },
        10_000,
      )
      expect(records).toEqual(range(230))
      expect(query.requested.slice(0, 4).sort()).toEqual([1, 2, 3, 4])
      expect(snapshot).toMatchObject({ spent: 230, reserved: 0 })
    }),
  )

  it.effect("with a known count that grew, reads on past the planned pages", () =>
    Effect.gen(function* () {
      const query = fakeQuery(180)
      const { records } = yield* collect(
        { fetch: query.fetch, credited: true, expectedRecords: 120, concurrency: 2 },
        10_000,
      )
      expect(records).toEqual(range(180))
      expect(query.requested.sort((a, b) => a - b)).toEqual([1, 2, 3, 4])
    }),
  )

  it.effect("with a known count that shrank, stops at the data's end without charging empty pages", () =>
    Effect.gen(function* () {
      const query = fakeQuery(60)
      const { records, snapshot } = yield* collect(
        { fetch: query.fetch, credited: true, expectedRecords: 150, concurrency: 3 },
        10_000,
      )
      expect(records).toEqual(range(60))
      expect(snapshot).toMatchObject({ spent: 60, reserved: 0 })
    }),
  )

  it.effect("caps page_size at 50", () =>
    Effect.gen(function* () {
      const query = fakeQuery(120)
      const { events } = yield* collect({ fetch: query.fetch, credited: false, pageSize: 500 }, 0)
      expect(events.map((e) => (e._tag === "PageFetched" ? e.page.pageSize : 0))).toEqual([50, 50, 50])
    }),
  )

  it.effect("never pages past 10,000 records deep and says so", () =>
    Effect.gen(function* () {
      const query = fakeQuery(25_000)
      const { records, events } = yield* collect({ fetch: query.fetch, credited: false, concurrency: 4 }, 0)
      expect(records).toHaveLength(10_000)
      expect(Math.max(...query.requested)).toBe(200)
      expect(events.at(-1)).toEqual(
        new Pager.DepthLimitReached({ resultCount: 25_000, recordsReachable: 10_000 }),
      )
    }),
  )

  it.effect("does not request a page the budget cannot cover, and reports what was left", () =>
    Effect.gen(function* () {
      const query = fakeQuery(137)
      const { records, events, snapshot } = yield* collect(
        { fetch: query.fetch, credited: true, pageSize: 50, concurrency: 4 },
        120,
      )
      expect(records).toEqual(range(100))
      expect(query.requested.sort((a, b) => a - b)).toEqual([1, 2])
      expect(events.at(-1)).toEqual(
        new Pager.BudgetExhausted({
          nextPage: 3,
          recordsRemaining: 37,
          creditsNeeded: 50,
          creditsAvailable: 20,
        }),
      )
      expect(snapshot).toMatchObject({ spent: 100, reserved: 0 })
    }),
  )

  it.effect("a budget too small for the first page requests nothing", () =>
    Effect.gen(function* () {
      const query = fakeQuery(137)
      const { events } = yield* collect({ fetch: query.fetch, credited: true, pageSize: 50 }, 49)
      expect(query.requested).toEqual([])
      expect(events).toEqual([
        new Pager.BudgetExhausted({
          nextPage: 1,
          recordsRemaining: undefined,
          creditsNeeded: 50,
          creditsAvailable: 49,
        }),
      ])
    }),
  )

  it.effect("reserves no more than maxRecords allows (a match_ids fetch of 30 ids)", () =>
    Effect.gen(function* () {
      const query = fakeQuery(30)
      const { records, snapshot } = yield* collect({ fetch: query.fetch, credited: true, maxRecords: 30 }, 30)
      expect(records).toEqual(range(30))
      expect(snapshot).toMatchObject({ spent: 30, reserved: 0 })
    }),
  )

  it.effect("without a result count, reads one page at a time until a short page", () =>
    Effect.gen(function* () {
      const query = fakeQuery(120, { resultCount: false })
      const { records } = yield* collect({ fetch: query.fetch, credited: true, concurrency: 4 }, 10_000)
      expect(records).toEqual(range(120))
      expect(query.requested).toEqual([1, 2, 3])
    }),
  )

  it.effect("a failed page fails the stream; pages cut off in flight count as possibly charged", () =>
    Effect.gen(function* () {
      const query = fakeQuery(1000, { failOnPage: 5 })
      const budget = yield* makeBudget(10_000)
      const result = yield* Stream.runCollect(
        Pager.stream({ fetch: query.fetch, credited: true, concurrency: 4 }),
      ).pipe(Effect.provide(Layer.succeed(CreditBudget, budget)), Effect.either)
      expect(result._tag === "Left" && result.left._tag).toBe("ServerError")
      const snapshot = yield* budget.snapshot
      expect(snapshot.reserved).toBe(0)
      // Pages interrupted in flight may have been charged by the provider: forfeited, not released.
      expect(snapshot.spent - snapshot.uncertain).toBe(query.charged())
      // At most `concurrency` pages are in flight when the failure reaches the stream (the failed
      // page's slot may already have gone to the next one).
      expect(snapshot.spent).toBeLessThanOrEqual(query.charged() + 4 * 50)
    }),
  )

  it.effect("landInFlightOnFailure: the pages in flight land and are emitted before the failure", () =>
    Effect.gen(function* () {
      const query = fakeQuery(1000, { failOnPage: 5 })
      const budget = yield* makeBudget(10_000)
      const emitted: Array<number> = []
      const result = yield* Stream.runForEach(
        Pager.stream({
          fetch: query.fetch,
          credited: true,
          concurrency: 4,
          expectedRecords: 1000,
          landInFlightOnFailure: true,
        }),
        (event) =>
          Effect.sync(() => {
            if (event._tag === "PageFetched") for (const item of event.page.items) emitted.push(item.record)
          }),
      ).pipe(Effect.provide(Layer.succeed(CreditBudget, budget)), Effect.either)
      expect(result._tag === "Left" && result.left._tag).toBe("ServerError")
      const snapshot = yield* budget.snapshot
      // Nothing paid for is lost: every record charged was emitted, nothing forfeited.
      expect(snapshot).toMatchObject({ reserved: 0, uncertain: 0, spent: query.charged() })
      expect(emitted).toHaveLength(query.charged())
      expect(new Set(emitted).size).toBe(emitted.length)
      // Pages 1 to 4 came before the failed page; no page was asked for after the failure was known.
      expect(emitted.slice(0, 200)).toEqual(range(200))
      expect(Math.max(...query.requested)).toBeLessThanOrEqual(5 + 4)
    }),
  )

  it.effect(
    "plannedReserved: says when every planned page has its reservation, and whether all got one",
    () =>
      Effect.gen(function* () {
        for (const [budgetLimit, expected] of [
          [10_000, true],
          [120, false],
        ] as const) {
          const query = fakeQuery(300)
          const plannedReserved = yield* Deferred.make<boolean>()
          const budget = yield* makeBudget(budgetLimit)
          yield* Stream.runDrain(
            Pager.stream({
              fetch: query.fetch,
              credited: true,
              concurrency: 3,
              expectedRecords: 300,
              plannedReserved,
            }),
          ).pipe(Effect.provide(Layer.succeed(CreditBudget, budget)))
          expect(yield* Deferred.await(plannedReserved)).toBe(expected)
        }
      }),
  )

  it.effect("takes a permit of the InFlight gate per page, and never has more pages out than it allows", () =>
    Effect.gen(function* () {
      let out = 0
      let most = 0
      const query = fakeQuery(1000)
      const fetch = (paging: Paging) =>
        Effect.acquireUseRelease(
          Effect.sync(() => {
            out++
            most = Math.max(most, out)
          }),
          () => query.fetch(paging),
          () =>
            Effect.sync(() => {
              out--
            }),
        )
      const budget = yield* makeBudget(10_000)
      const events = yield* Stream.runCollect(
        Pager.stream({ fetch, credited: true, concurrency: 16, expectedRecords: 1000 }),
      ).pipe(
        Effect.provide(
          Layer.merge(
            Layer.succeed(CreditBudget, budget),
            AdaptiveConcurrency.layer({ requestsPerMinute: 1_800, maxInFlight: 3 }),
          ),
        ),
      )
      expect(Chunk.size(events)).toBe(20)
      expect(most).toBeLessThanOrEqual(3)
      expect((yield* budget.snapshot).spent).toBe(1000)
    }),
  )

  it.effect("property: never reserves or spends past the budget, never skips or repeats a record", () =>
    Effect.promise(() =>
      fc.assert(
        // Up to 1,000 records a page of 1 to 50 at a time, a budget below or above them: every
        // shape of stop (none, mid-page, at a page's end) within seconds (the paging depth is its
        // own test above).
        fc.asyncProperty(
          fc.integer({ min: 0, max: 1_000 }),
          fc.integer({ min: 1, max: 50 }),
          fc.integer({ min: 0, max: 1_200 }),
          fc.integer({ min: 1, max: 6 }),
          fc.integer(),
          fc.boolean(),
          async (total, pageSize, budget, concurrency, seed, planned) => {
            const query = fakeQuery(total)
            const expectedRecords = planned ? total : undefined
            const outcome = await Effect.runPromise(
              collect(
                { fetch: query.fetch, credited: true, pageSize, concurrency, expectedRecords },
                budget,
              ).pipe(Effect.withRandom(Random.make(seed))),
            )
            const { records, events, snapshot, worst } = outcome
            // Budget: spent + reserved never above the limit; spent equals what the provider charged.
            expect(worst).toBeLessThanOrEqual(budget)
            expect(snapshot.spent).toBe(query.charged())
            expect(snapshot.reserved).toBe(0)
            // Records: a gap-free prefix, each once.
            expect(records).toEqual(range(records.length))
            // Pages requested: each at most once, none past the last.
            expect(new Set(query.requested).size).toBe(query.requested.length)
            expect(Math.max(0, ...query.requested)).toBeLessThanOrEqual(
              Math.max(1, Math.ceil(total / pageSize)),
            )
            const reachable = Math.min(total, Math.floor(10_000 / pageSize) * pageSize)
            const last = events.at(-1)
            if (records.length < reachable) {
              expect(last?._tag).toBe("BudgetExhausted")
              const remaining = last?._tag === "BudgetExhausted" ? last.recordsRemaining : undefined
              if (records.length > 0) expect(remaining).toBe(total - records.length)
              // Stopping was necessary: the next page would not have fit.
              expect(budget - snapshot.spent).toBeLessThan(pageSize)
            } else {
              expect(records.length).toBe(reachable)
            }
          },
        ),
        { numRuns: 150 },
      ),
    ),
  )

  it.effect("a free endpoint reads whole with a zero budget and records no spending", () =>
    Effect.gen(function* () {
      const query = fakeQuery(75)
      const { records, snapshot } = yield* collect({ fetch: query.fetch, credited: false }, 0)
      expect(records).toEqual(range(75))
      expect(snapshot).toMatchObject({ spent: 0, reserved: 0 })
    }),
  )
})
