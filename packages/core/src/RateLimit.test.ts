import { describe, expect, it } from "@effect/vitest"
import { Effect, Fiber, TestClock } from "effect"
import * as RateLimit from "./RateLimit.ts"

describe("RateLimit", () => {
  it("keeps every 60-second window at or under the configured requests per minute", () => {
    for (const perMinute of [1, 2, 7, 60, 61, 600, 1_800, 3_000]) {
      const { limit, intervalMillis } = RateLimit.paceFor(perMinute)
      // worst case in any window: a full bucket, then one refill per interval for 60 seconds
      const worstMinute = limit + limit * Math.floor(60_000 / intervalMillis)
      expect(worstMinute).toBeLessThanOrEqual(perMinute)
      expect(worstMinute).toBeGreaterThanOrEqual(perMinute * 0.9)
    }
    expect(RateLimit.paceFor(1_800)).toEqual({ limit: 29, intervalMillis: 1_000 })
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
      expect(atStart).toBeLessThanOrEqual(29)
      expect(afterTwoSeconds).toBeLessThanOrEqual(29 * 3)
      expect(started).toBe(200)
    }),
  )
})
