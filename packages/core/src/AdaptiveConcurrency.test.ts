import { describe, expect, it } from "@effect/vitest"
import * as Effect from "effect/Effect"
import * as Fiber from "effect/Fiber"
import * as Ref from "effect/Ref"
import * as TestClock from "effect/TestClock"
import fc from "fast-check"
import * as AdaptiveConcurrency from "./AdaptiveConcurrency.ts"

const settings = { requestsPerMinute: 1_800, maxInFlight: 64 }
const fresh: AdaptiveConcurrency.State = {
  active: 0,
  latencyMillis: undefined,
  ceiling: 64,
  cutAtMillis: Number.NEGATIVE_INFINITY,
}

describe("AdaptiveConcurrency", () => {
  it("keeps rate x latency in flight, with headroom, within [1, cap]", () => {
    // 30 a second: 50 ms needs 1.5 in flight, 2 s needs 60.
    expect(AdaptiveConcurrency.targetInFlight(30, 50, 64)).toBe(5)
    expect(AdaptiveConcurrency.targetInFlight(30, 100, 64)).toBe(7)
    expect(AdaptiveConcurrency.targetInFlight(30, 1_000, 64)).toBe(47)
    expect(AdaptiveConcurrency.targetInFlight(30, 2_000, 64)).toBe(64)
    expect(AdaptiveConcurrency.targetInFlight(30, 2_000, 16)).toBe(16)
  })

  it("property: the target holds the rate whenever the cap allows, and never passes the cap", () => {
    fc.assert(
      fc.property(
        fc.double({ min: 0.1, max: 100, noNaN: true }),
        fc.double({ min: 0, max: 20_000, noNaN: true }),
        fc.integer({ min: 1, max: 256 }),
        (perSecond, latencyMillis, cap) => {
          const target = AdaptiveConcurrency.targetInFlight(perSecond, latencyMillis, cap)
          expect(target).toBeGreaterThanOrEqual(1)
          expect(target).toBeLessThanOrEqual(cap)
          // Little's law: rate x latency in flight is what holds the rate.
          expect(target).toBeGreaterThanOrEqual(Math.min(cap, Math.ceil((perSecond * latencyMillis) / 1000)))
          // More latency never means fewer in flight.
          expect(
            AdaptiveConcurrency.targetInFlight(perSecond, latencyMillis * 2, cap),
          ).toBeGreaterThanOrEqual(target)
        },
      ),
    )
  })

  it("property: the latency average stays within the samples it was given", () => {
    fc.assert(
      fc.property(fc.array(fc.double({ min: 0, max: 10_000, noNaN: true }), { minLength: 1 }), (samples) => {
        const average = samples.reduce<number | undefined>(AdaptiveConcurrency.nextAverage, undefined)
        expect(average).toBeGreaterThanOrEqual(Math.min(...samples) - 1e-6)
        expect(average).toBeLessThanOrEqual(Math.max(...samples) + 1e-6)
      }),
    )
    expect(AdaptiveConcurrency.nextAverage(undefined, 300)).toBe(300)
  })

  it("a 429 halves the target once per latency period; answers grow it back", () => {
    const measured = AdaptiveConcurrency.observed(settings, fresh, 1_000)
    expect(AdaptiveConcurrency.targetOf(settings, measured)).toBe(47)
    const cut = AdaptiveConcurrency.congested(settings, measured, 10_000)
    expect(AdaptiveConcurrency.targetOf(settings, cut)).toBe(23)
    // The other 429s of requests already in flight do not cut again within the latency period.
    expect(AdaptiveConcurrency.targetOf(settings, AdaptiveConcurrency.congested(settings, cut, 10_500))).toBe(
      23,
    )
    expect(AdaptiveConcurrency.targetOf(settings, AdaptiveConcurrency.congested(settings, cut, 11_001))).toBe(
      11,
    )
    // About one more per round trip (a round trip being as many answers as are in flight).
    let grown = cut
    for (let answer = 0; answer < 2_000; answer++)
      grown = AdaptiveConcurrency.observed(settings, grown, 1_000)
    expect(AdaptiveConcurrency.targetOf(settings, grown)).toBe(47)
    // Before any answer, the cap: the rate limiter paces what is sent until the latency is known.
    expect(AdaptiveConcurrency.targetOf(settings, fresh)).toBe(settings.maxInFlight)
  })

  it.effect("the gate lets no more run than the target, and follows the measured latency", () =>
    Effect.gen(function* () {
      const gate = yield* AdaptiveConcurrency.make(settings)
      const running = yield* Ref.make(0)
      const most = yield* Ref.make(0)
      const task = gate.withPermit(
        Effect.acquireUseRelease(
          Effect.flatMap(
            Ref.updateAndGet(running, (n) => n + 1),
            (now) => Ref.update(most, (m) => Math.max(m, now)),
          ),
          () => Effect.sleep("100 millis"),
          () => Ref.update(running, (n) => n - 1),
        ),
      )
      const before = yield* Effect.fork(
        Effect.all(
          Array.from({ length: 30 }, () => task),
          { concurrency: "unbounded" },
        ),
      )
      yield* TestClock.adjust("10 seconds")
      yield* Fiber.join(before)
      // Nothing measured yet: as many as the cap allows.
      expect(yield* Ref.get(most)).toBe(30)

      // 2 s answers: 60 in flight hold 30 a second, within the cap of 64.
      for (let answer = 0; answer < 20; answer++) yield* gate.observe(2_000)
      yield* Ref.set(most, 0)
      const after = yield* Effect.fork(
        Effect.all(
          Array.from({ length: 100 }, () => task),
          { concurrency: "unbounded" },
        ),
      )
      yield* TestClock.adjust("10 seconds")
      yield* Fiber.join(after)
      expect(yield* Ref.get(most)).toBe(64)

      // A 429: half as many.
      yield* gate.congested
      yield* Ref.set(most, 0)
      const congested = yield* Effect.fork(
        Effect.all(
          Array.from({ length: 100 }, () => task),
          { concurrency: "unbounded" },
        ),
      )
      yield* TestClock.adjust("10 seconds")
      yield* Fiber.join(congested)
      expect(yield* Ref.get(most)).toBe(32)
    }),
  )
})
