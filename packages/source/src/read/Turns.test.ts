import { describe, expect, it } from "@effect/vitest"
import { CreditBudget } from "@salesintel/core"
import * as Deferred from "effect/Deferred"
import * as Effect from "effect/Effect"
import * as Fiber from "effect/Fiber"
import * as Option from "effect/Option"
import { budgetInTurn } from "./Turns.ts"

describe("Turns.budgetInTurn", () => {
  it.effect(
    "a batch the budget cannot cover whole waits for the streams before it, then gets what they gave back",
    () =>
      Effect.gen(function* () {
        const budget = yield* CreditBudget.make(100)
        const earlierEnded = yield* Deferred.make<void>()
        const first = CreditBudget.account(budget, "first")
        const second = budgetInTurn(CreditBudget.account(budget, "second"), Deferred.await(earlierEnded))
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
        // The budget counts each stream's own spending.
        expect((yield* budget.snapshot).accounts.get("first")?.spent).toBe(50)
        const held = Option.getOrThrow(yield* second.reserveUpTo(30))
        expect(held.credits).toBe(20)
        yield* second.forfeit(held)
        expect((yield* budget.snapshot).accounts.get("second")).toEqual({ spent: 20, uncertain: 20 })
      }),
  )

  it.effect("a closed budget refuses at once, without waiting for the streams before", () =>
    Effect.gen(function* () {
      const budget = yield* CreditBudget.make(100)
      const second = budgetInTurn(budget, Effect.never)
      yield* budget.close
      expect(yield* second.reserveUpTo(10)).toEqual(Option.none())
    }),
  )
})
