import { describe, expect, it } from "@effect/vitest"
import * as Deferred from "effect/Deferred"
import * as Effect from "effect/Effect"
import * as Fiber from "effect/Fiber"
import * as Option from "effect/Option"
import * as CreditBudget from "./CreditBudget.ts"

describe("CreditBudget", () => {
  it.effect("reserves while spent + reserved stays within the limit", () =>
    Effect.gen(function* () {
      const budget = yield* CreditBudget.make(100)
      const first = yield* budget.reserve(60)
      const second = yield* budget.reserve(50)
      expect(Option.isSome(first)).toBe(true)
      expect(Option.isNone(second)).toBe(true)
      expect(yield* budget.snapshot).toEqual({
        limit: 100,
        spent: 0,
        uncertain: 0,
        reserved: 60,
        available: 40,
        closed: false,
      })
    }),
  )

  it.effect("settles to the actual charge and releases unused holds", () =>
    Effect.gen(function* () {
      const budget = yield* CreditBudget.make(100)
      const page = Option.getOrThrow(yield* budget.reserve(50))
      yield* budget.settle(page, 37)
      const failed = Option.getOrThrow(yield* budget.reserve(50))
      yield* budget.release(failed)
      expect(yield* budget.snapshot).toEqual({
        limit: 100,
        spent: 37,
        uncertain: 0,
        reserved: 0,
        available: 63,
        closed: false,
      })
      expect(Option.isSome(yield* budget.reserve(63))).toBe(true)
      expect(Option.isNone(yield* budget.reserve(1))).toBe(true)
    }),
  )

  it.effect("a forfeited reservation counts as spent and uncertain, never returns to the budget", () =>
    Effect.gen(function* () {
      const budget = yield* CreditBudget.make(100)
      yield* budget.forfeit(Option.getOrThrow(yield* budget.reserve(40)))
      const snapshot = yield* budget.snapshot
      expect([snapshot.spent, snapshot.uncertain, snapshot.reserved, snapshot.available]).toEqual([
        40, 40, 0, 60,
      ])
    }),
  )

  it.effect("reserveUpTo grants what is left; close refuses every later reservation", () =>
    Effect.gen(function* () {
      const budget = yield* CreditBudget.make(10)
      expect(Option.getOrThrow(yield* budget.reserveUpTo(50)).credits).toBe(10)
      expect(Option.isNone(yield* budget.reserveUpTo(50))).toBe(true)
      const open = yield* CreditBudget.make(10)
      yield* open.close
      expect(Option.isNone(yield* open.reserve(0))).toBe(true)
      expect((yield* open.snapshot).closed).toBe(true)
    }),
  )
})

describe("CreditBudget.share", () => {
  it.effect(
    "a batch the budget cannot cover whole waits for the streams before it, then gets what they gave back",
    () =>
      Effect.gen(function* () {
        const budget = yield* CreditBudget.make(100)
        const earlierEnded = yield* Deferred.make<void>()
        const first = yield* CreditBudget.share(budget, Effect.void)
        const second = yield* CreditBudget.share(budget, Deferred.await(earlierEnded))
        // The stream before holds a full last page of 50 that will bring 10.
        const lastPage = Option.getOrThrow(yield* first.reserve(50))
        yield* first.settle(Option.getOrThrow(yield* first.reserve(40)), 40)
        // 10 are available now; the batch of 30 waits instead of taking them and stopping there.
        const batch = yield* Effect.fork(second.reserveUpTo(30))
        yield* Effect.yieldNow()
        expect(Option.isNone(yield* Fiber.poll(batch))).toBe(true)
        expect((yield* budget.snapshot).reserved).toBe(50)
        yield* first.settle(lastPage, 10)
        yield* Deferred.succeed(earlierEnded, undefined)
        expect(Option.map(yield* Fiber.join(batch), (held) => held.credits)).toEqual(Option.some(30))
        // Each share counts its own spending.
        expect((yield* first.own).spent).toBe(50)
        const held = Option.getOrThrow(yield* second.reserveUpTo(30))
        expect(held.credits).toBe(20)
        yield* second.forfeit(held)
        expect(yield* second.own).toEqual({ spent: 20, uncertain: 20 })
      }),
  )

  it.effect("a closed budget refuses at once, without waiting for the streams before", () =>
    Effect.gen(function* () {
      const budget = yield* CreditBudget.make(100)
      const second = yield* CreditBudget.share(budget, Effect.never)
      yield* budget.close
      expect(yield* second.reserveUpTo(10)).toEqual(Option.none())
    }),
  )
})
