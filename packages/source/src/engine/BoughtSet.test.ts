/**
 * The bought set's checkpoint cadence: 1/50 of what it holds (every page while that is under
 * one), and in a ledger every page, whatever it holds.
 */
import { describe, expect, it } from "@effect/vitest"
import { Effect, Stream } from "effect"
import type { Ledger } from "./BoughtLedger.ts"
import { BoughtSet } from "./BoughtSet.ts"

const today = 20_000
const held = (count: number) =>
  Array.from({ length: count }, (_, index): readonly [string, number] => [`m-${index}`, today])

/** How many records a page of 50 at a time are emitted before a checkpoint is due. */
const recordsUntilDue = (set: BoughtSet) =>
  Effect.gen(function* () {
    const cadence = yield* set.cadence()
    for (let records = 50; records <= 1_000_000; records += 50) if (yield* cadence.due(50)) return records
    return Number.POSITIVE_INFINITY
  })

describe("BoughtSet cadence", () => {
  it.effect("in the state: 1/50 of what it holds, in whole pages", () =>
    Effect.gen(function* () {
      const json = { [String(today)]: held(100_000).map(([key]) => key) }
      expect(yield* recordsUntilDue(BoughtSet.fromJson(json, today, undefined))).toBe(2_000)
      expect(yield* recordsUntilDue(BoughtSet.fromJson({}, today, undefined))).toBe(50)
    }),
  )

  it.effect("in a ledger: every page, whatever it holds", () =>
    Effect.gen(function* () {
      const ledger: Ledger = { read: () => Stream.fromIterable(held(100_000)), adopt: () => Effect.void }
      const set = yield* BoughtSet.fromLedger(undefined, ledger, "contacts", today, undefined)
      expect(set.size).toBe(100_000)
      expect(set.toJson()).toBe("ledger")
      expect(yield* recordsUntilDue(set)).toBe(50)
      const small: Ledger = { read: () => Stream.fromIterable(held(5_000)), adopt: () => Effect.void }
      const smaller = yield* BoughtSet.fromLedger(undefined, small, "contacts", today, undefined)
      expect(yield* recordsUntilDue(smaller)).toBe(50)
    }),
  )
})
