import { describe, expect, it } from "@effect/vitest"
import { Clock, Effect, Fiber, TestClock } from "effect"
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
})
