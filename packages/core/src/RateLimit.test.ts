import { describe, expect, it } from "@effect/vitest"
import * as Clock from "effect/Clock"
import * as Effect from "effect/Effect"
import * as Fiber from "effect/Fiber"
import * as Stream from "effect/Stream"
import * as TestClock from "effect/TestClock"
import fc from "fast-check"
import * as RateLimit from "./RateLimit.ts"

describe("RateLimit", () => {
  it("keeps every 60-second window at or under the configured requests per minute", () => {
    for (const perMinute of [1, 2, 3, 7, 60, 61, 600, 1_800, 3_000]) {
      const { limit, intervalMillis } = RateLimit.paceFor(perMinute)
      // worst case in any window: a full bucket, the refills of 60 seconds, and one for alignment
      const worstMinute = limit + Math.floor((60_000 * limit) / intervalMillis) + 1
      expect(worstMinute).toBeLessThanOrEqual(Math.max(perMinute, 2))
      if (perMinute >= 60) expect(worstMinute).toBeGreaterThanOrEqual(perMinute * 0.99)
    }
    const pace = RateLimit.paceFor(1_800)
    expect((pace.limit / pace.intervalMillis) * 1000).toBeGreaterThan(29.8)
    expect(pace.limit).toBeGreaterThanOrEqual(8)
  })

  it.effect("lets no more requests start than the bucket allows", () =>
    Effect.gen(function* () {
      let started = 0
      const fiber = yield* Effect.gen(function* () {
        const limiter = yield* RateLimit.RequestRateLimit
        yield* Effect.forEach(
          Array.from({ length: 200 }),
          () =>
            limiter.limit(
              Effect.sync(() => {
                started++
              }),
            ),
          { concurrency: "unbounded", discard: true },
        )
      }).pipe(Effect.provide(RateLimit.layer(1_800)), Effect.scoped, Effect.fork)
      yield* TestClock.adjust("1 millis")
      const atStart = started
      yield* TestClock.adjust("2 seconds")
      const afterTwoSeconds = started
      yield* TestClock.adjust("1 minute")
      yield* Fiber.join(fiber)
      // a bucket of up to 10 at once, then one every 33.5 ms: at most 10 + 2,001 / 33.5 = 69 after two seconds
      expect(atStart).toBeLessThanOrEqual(10)
      expect(afterTwoSeconds).toBeLessThanOrEqual(70)
      expect(afterTwoSeconds).toBeGreaterThanOrEqual(60)
      expect(started).toBe(200)
    }),
  )

  it.effect("a pause (after a 429) holds every request until it ends", () =>
    Effect.gen(function* () {
      const started: Array<number> = []
      const fiber = yield* Effect.gen(function* () {
        const limiter = yield* RateLimit.RequestRateLimit
        yield* limiter.pause(5_000)
        yield* limiter.pause(2_000) // a shorter pause never shortens the one under way
        yield* Effect.forEach(
          Array.from({ length: 3 }),
          () =>
            limiter.limit(
              Effect.flatMap(Clock.currentTimeMillis, (now) => Effect.sync(() => started.push(now))),
            ),
          { concurrency: "unbounded", discard: true },
        )
      }).pipe(Effect.provide(RateLimit.layer(1_800)), Effect.scoped, Effect.fork)
      yield* TestClock.adjust("4999 millis")
      expect(started).toHaveLength(0)
      yield* TestClock.adjust("1 second")
      yield* Fiber.join(fiber)
      expect(started).toHaveLength(3)
      expect(Math.min(...started)).toBeGreaterThanOrEqual(5_000)
    }),
  )

  it.effect(
    "says each wait as it begins: a pause once however many 429s extend it, a pace slot 5 s away",
    () =>
      Effect.gen(function* () {
        const limiter = yield* RateLimit.RequestRateLimit
        const said: Array<RateLimit.Wait> = []
        yield* Effect.forkScoped(
          Stream.runForEach(limiter.waits, (wait) => Effect.sync(() => said.push(wait))),
        )
        yield* TestClock.adjust("1 millis")
        yield* limiter.pause(10_000)
        // Refused beside it a moment later: the same wait, not said again; a longer one is news.
        yield* TestClock.adjust("5 millis")
        yield* limiter.pause(10_000)
        yield* limiter.pause(20_000)
        yield* TestClock.adjust("1 millis")
        expect(said).toEqual([
          { _tag: "Provider", until: 10_001, retryAfterMillis: 10_000 },
          { _tag: "Provider", until: 20_006, retryAfterMillis: 20_000 },
        ])
        // Six a minute: a slot every 12 s. The first request goes at once, once the pause is over;
        // the second's slot is 12 s away: said. Nothing when the pace allows a request at once.
        const requests = yield* Effect.fork(
          Effect.forEach([1, 2], () => limiter.limit(Effect.void), { concurrency: "unbounded" }),
        )
        yield* TestClock.adjust("40 seconds")
        yield* Fiber.join(requests)
        expect(said.slice(2)).toEqual([{ _tag: "Pace", until: 20_006 + 12_001 }])
      }).pipe(Effect.provide(RateLimit.layer(6)), Effect.scoped),
  )

  it.effect("a request given up while it waits leaves its slot to the next one", () =>
    Effect.gen(function* () {
      // 8 start at once (the bucket); 40 wait, of which the first 30 are given up (counts asked
      // ahead and not needed): the 10 left start in their own 10 slots, not behind 40.
      const started: Array<number> = []
      const limiter = yield* RateLimit.RequestRateLimit
      const request = limiter.limit(
        Effect.flatMap(Clock.currentTimeMillis, (now) => Effect.sync(() => started.push(now))),
      )
      yield* Effect.forEach(Array.from({ length: 8 }), () => request, {
        concurrency: "unbounded",
        discard: true,
      })
      const givenUp = yield* Effect.forEach(Array.from({ length: 30 }), () => Effect.fork(request))
      yield* TestClock.adjust("1 millis")
      const kept = yield* Effect.forEach(Array.from({ length: 10 }), () => Effect.fork(request))
      yield* TestClock.adjust("1 millis")
      yield* Effect.forEach(givenUp, Fiber.interrupt, { discard: true })
      yield* TestClock.adjust("2 seconds")
      yield* Effect.forEach(kept, Fiber.join, { discard: true })
      const emission = RateLimit.paceFor(1_800).intervalMillis / RateLimit.paceFor(1_800).limit
      expect(started).toHaveLength(18)
      // The first waiter's slot had come before the others gave up; the rest follow it.
      expect(Math.max(...started)).toBeLessThanOrEqual(Math.ceil(11 * emission) + 2)
    }).pipe(Effect.provide(RateLimit.layer(1_800)), Effect.scoped),
  )

  it.effect("requests ahead of need take the slots no other request waits for", () =>
    Effect.gen(function* () {
      const order: Array<string> = []
      const limiter = yield* RateLimit.RequestRateLimit
      const request = (name: string) => limiter.limit(Effect.sync(() => order.push(name)))
      // The bucket's 8 go at once; then 5 ahead of need ask, then 5 needed: the needed go first.
      yield* Effect.forEach(Array.from({ length: 8 }), () => request("burst"), { discard: true })
      const speculative = yield* Effect.forEach(Array.from({ length: 5 }), () =>
        Effect.fork(RateLimit.asAheadOfNeed(request("ahead"))),
      )
      yield* TestClock.adjust("1 millis")
      const wanted = yield* Effect.forEach(Array.from({ length: 5 }), () => Effect.fork(request("needed")))
      yield* TestClock.adjust("2 seconds")
      yield* Effect.forEach([...speculative, ...wanted], Fiber.join, { discard: true })
      // Each slot goes to whoever waits when it comes: the needed first.
      expect(order.slice(8)).toEqual([...Array(5).fill("needed"), ...Array(5).fill("ahead")])
    }).pipe(Effect.provide(RateLimit.layer(1_800)), Effect.scoped),
  )

  describe("nextStart", () => {
    const { limit, intervalMillis } = RateLimit.paceFor(1_800)
    const emission = intervalMillis / limit

    /** Start times of requests asking at `asks` (in order), each as soon as the bucket allows. */
    const starts = (asks: ReadonlyArray<number>) => {
      let tat = Number.NEGATIVE_INFINITY
      return asks.map((now) => {
        const next = RateLimit.nextStart(tat, now, emission, limit)
        tat = next.tat
        return next.startAt
      })
    }

    it("keeps every 60-second window at or under 1,800 starts, whenever the requests ask", () => {
      fc.assert(
        fc.property(
          fc.array(fc.integer({ min: 0, max: 200_000 }), { minLength: 1, maxLength: 4_000 }),
          (times) => {
            const asks = [...times].sort((a, b) => a - b)
            const started = starts(asks)
            for (const [i, start] of started.entries()) expect(start).toBeGreaterThanOrEqual(asks[i] ?? 0)
            // Starts come in order; the window from each start holds at most 1,800.
            for (let i = 0, j = 0; i < started.length; i++) {
              while (j < started.length && (started[j] ?? 0) < (started[i] ?? 0) + 60_000) j++
              expect(j - i).toBeLessThanOrEqual(1_800)
            }
          },
        ),
        { numRuns: 30 },
      )
    })

    it("holds the pace from the clock: requests that ask late do not slow the ones after them", () => {
      // Requests always waiting: a burst of `limit`, then one every `emission` ms exactly.
      const waiting = starts(Array.from({ length: 1_000 }, () => 0))
      expect(waiting.slice(0, limit)).toEqual(Array.from({ length: limit }, () => 0))
      expect(waiting[999]).toBeCloseTo((999 - limit + 1) * emission, 6)
      // Each asking 5 ms after its slot (a busy event loop that wakes late): the slots stay on the
      // clock's grid, where a timer refilled after each late wake-up would lose the 5 ms every time.
      let tat = Number.NEGATIVE_INFINITY
      let slot = 0
      const late: Array<number> = []
      for (let i = 0; i < 1_000; i++) {
        const next = RateLimit.nextStart(tat, slot + 5, emission, limit)
        tat = next.tat
        late.push(next.startAt)
        slot = next.startAt
      }
      // 1,000 starts in the time the pace allows (plus the lateness of the last), not 1,000 x (33.5 + 5) ms.
      expect((late[999] ?? 0) - (late[0] ?? 0)).toBeLessThanOrEqual(999 * emission + 5)
    })
  })
})
