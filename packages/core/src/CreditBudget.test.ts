import { describe, expect, it } from "@effect/vitest"
import { Effect, Option } from "effect"
import * as CreditBudget from "./CreditBudget.ts"

describe("CreditBudget", () => {
  it.effect("reserves while spent + reserved stays within the limit", () =>
    Effect.gen(function* () {
      const budget = yield* CreditBudget.make(100)
      const first = yield* budget.reserve(60)
      const second = yield* budget.reserve(50)
      expect(Option.isSome(first)).toBe(true)
      expect(Option.isNone(second)).toBe(true)
      expect(yield* budget.snapshot).toEqual({ limit: 100, spent: 0, reserved: 60, available: 40 })
    }),
  )

  it.effect("settles to the actual charge and releases unused holds", () =>
    Effect.gen(function* () {
      const budget = yield* CreditBudget.make(100)
      const page = Option.getOrThrow(yield* budget.reserve(50))
      yield* budget.settle(page, 37)
      const failed = Option.getOrThrow(yield* budget.reserve(50))
      yield* budget.release(failed)
      expect(yield* budget.snapshot).toEqual({ limit: 100, spent: 37, reserved: 0, available: 63 })
      expect(Option.isSome(yield* budget.reserve(63))).toBe(true)
      expect(Option.isNone(yield* budget.reserve(1))).toBe(true)
    }),
  )
})
