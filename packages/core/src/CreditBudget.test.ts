import { describe, expect, it } from "@effect/vitest"
import * as Effect from "effect/Effect"
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
        accounts: new Map(),
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
        accounts: new Map(),
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

describe("CreditBudget.account", () => {
  it.effect("counts what its reservations settle and forfeit under its name, in the budget's one count", () =>
    Effect.gen(function* () {
      const budget = yield* CreditBudget.make(100)
      const contacts = CreditBudget.account(budget, "contacts")
      const companies = CreditBudget.account(budget, "companies")
      yield* contacts.settle(Option.getOrThrow(yield* contacts.reserve(50)), 40)
      yield* companies.forfeit(Option.getOrThrow(yield* companies.reserveUpTo(20)))
      yield* contacts.release(Option.getOrThrow(yield* contacts.reserve(5)))
      // A reservation taken outside any account counts in the run's totals only.
      yield* budget.settle(Option.getOrThrow(yield* budget.reserve(3)), 3)
      const snapshot = yield* budget.snapshot
      expect([snapshot.spent, snapshot.uncertain, snapshot.reserved]).toEqual([63, 20, 0])
      expect(Object.fromEntries(snapshot.accounts)).toEqual({
        contacts: { spent: 40, uncertain: 0 },
        companies: { spent: 20, uncertain: 20 },
      })
    }),
  )

  it.effect("written ahead: a mark in blocks is recorded before a reservation passes it", () =>
    Effect.gen(function* () {
      const marks: Array<number> = []
      const inner = yield* CreditBudget.make(1_000)
      const budget = yield* CreditBudget.writtenAhead(inner, {
        block: 300,
        record: (mark) =>
          Effect.flatMap(inner.snapshot, (snapshot) =>
            Effect.sync(() => {
              // Recorded before the reservation that needs it is held.
              expect(snapshot.spent + snapshot.reserved).toBeLessThanOrEqual(mark)
              marks.push(mark)
              return true
            }),
          ),
      })
      const pages = yield* Effect.forEach(
        Array.from({ length: 8 }, () => 50),
        (credits) => budget.reserve(credits),
        {
          concurrency: "unbounded",
        },
      )
      expect(marks).toEqual([300, 600])
      for (const page of pages) yield* budget.settle(Option.getOrThrow(page), 50)
      // What is left of the budget, asked for in one: the mark goes to the limit, never past it.
      const rest = Option.getOrThrow(yield* budget.reserveUpTo(5_000))
      expect(rest.credits).toBe(600)
      expect(marks).toEqual([300, 600, 1_000])
    }),
  )

  it.effect("written ahead: a mark that cannot be recorded spends nothing past the last one", () =>
    Effect.gen(function* () {
      const inner = yield* CreditBudget.make(1_000)
      let allowed = 1
      const budget = yield* CreditBudget.writtenAhead(inner, {
        block: 100,
        record: () => Effect.sync(() => allowed-- > 0),
      })
      expect(Option.isSome(yield* budget.reserve(100))).toBe(true)
      expect(Option.isNone(yield* budget.reserve(1))).toBe(true)
      expect((yield* budget.snapshot).closed).toBe(true)
    }),
  )
})
