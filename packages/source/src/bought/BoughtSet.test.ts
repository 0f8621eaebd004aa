/**
 * The bought set's checkpoint cadence (1/50 of what it holds, every page while that is under one;
 * in a ledger every page, whatever it holds) and, in a ledger, how it reads it: only the counts
 * when the run begins, then the keys it is asked about, a lookup each, never the whole set.
 */
import { describe, expect, it } from "@effect/vitest"
import * as Effect from "effect/Effect"
import { memoryLedger } from "../testing/MemoryLedger.ts"
import { type Ledger, LedgerError } from "./BoughtLedger.ts"
import { BoughtSet, NotLookedUp } from "./BoughtSet.ts"

const today = 20_000
const held = (count: number, day = today) =>
  Array.from({ length: count }, (_, index): readonly [string, number] => [`m-${index}`, day])

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
      const set = yield* BoughtSet.fromLedger(
        undefined,
        memoryLedger(held(100_000)).ledger,
        "contacts",
        today,
        undefined,
      )
      expect(set.size).toBe(100_000)
      expect(set.toJson()).toBe("ledger")
      expect(yield* recordsUntilDue(set)).toBe(50)
      const smaller = yield* BoughtSet.fromLedger(
        undefined,
        memoryLedger(held(5_000)).ledger,
        "contacts",
        today,
        undefined,
      )
      expect(yield* recordsUntilDue(smaller)).toBe(50)
    }),
  )
})

describe("BoughtSet in a ledger", () => {
  it.effect("asks only about the keys it meets, each once, and answers for them", () =>
    Effect.gen(function* () {
      const { ledger, asked } = memoryLedger([...held(100_000), ["m-old", today - 40]])
      const set = yield* BoughtSet.fromLedger(undefined, ledger, "contacts", today, 30)
      expect(asked).toEqual([])
      yield* set.resolve(["m-1", "m-2", "new-1", "m-old", "m-1"])
      expect(asked).toEqual([4])
      expect([set.has("m-1"), set.due("m-1")]).toEqual([true, false])
      expect([set.has("new-1"), set.due("new-1")]).toEqual([false, true])
      expect([set.has("m-old"), set.due("m-old")]).toEqual([true, true])
      // Asked again with one key it has not met: only that one is looked up.
      yield* set.resolve(["m-1", "new-1", "m-3"])
      expect(asked).toEqual([4, 1])
      // Keys bought by this run are known without a lookup.
      set.record(["new-2"])
      yield* set.resolve(["new-2"])
      expect(asked).toEqual([4, 1])
      expect(set.boughtThisRun("new-2")).toBe(true)
    }),
  )

  it.effect("resolveScoped: looked up once, answered until the scope closes, then dropped", () =>
    Effect.gen(function* () {
      const { ledger, asked } = memoryLedger(held(10))
      const set = yield* BoughtSet.fromLedger(undefined, ledger, "contacts", today, undefined)
      yield* Effect.scoped(
        Effect.gen(function* () {
          yield* set.resolveScoped(["m-1", "new-1"])
          // Another caller sorts the same keys meanwhile: no second lookup, and its settle keeps them.
          yield* set.resolve(["m-1", "new-1"])
          set.settle(["m-1", "new-1"])
          expect([set.has("m-1"), set.has("new-1")]).toEqual([true, false])
        }),
      )
      expect(asked).toEqual([2])
      expect(() => set.has("m-1")).toThrow(NotLookedUp)
    }),
  )

  it.effect("refuses to answer for a key it has not looked up: never read as not bought", () =>
    Effect.gen(function* () {
      const set = yield* BoughtSet.fromLedger(
        undefined,
        memoryLedger(held(10)).ledger,
        "contacts",
        today,
        undefined,
      )
      expect(() => set.has("m-1")).toThrow(NotLookedUp)
      expect(() => set.due("m-1")).toThrow(NotLookedUp)
      // A ledger that held nothing when the run began: what it holds is this run's, in memory.
      const empty = yield* BoughtSet.fromLedger(
        undefined,
        memoryLedger([]).ledger,
        "contacts",
        today,
        undefined,
      )
      expect(empty.due("m-1")).toBe(true)
    }),
  )

  it.effect("counts what it holds from the ledger's counts and this run's purchases", () =>
    Effect.gen(function* () {
      const entries = [
        ...held(60, today - 1),
        ...held(40, today - 50).map(([key, day]) => [`s-${key}`, day] as const),
      ]
      const set = yield* BoughtSet.fromLedger(undefined, memoryLedger(entries).ledger, "contacts", today, 30)
      expect([set.size, set.countFresh(), set.hasFresh()]).toEqual([100, 60, true])
      yield* set.resolve(["m-1", "s-m-1", "new-1"])
      // One fresh (no change), one stale made fresh, one new; recording twice counts once.
      set.record(["m-1", "s-m-1", "new-1", "new-1"])
      expect([set.size, set.countFresh()]).toEqual([101, 62])
      const none = yield* BoughtSet.fromLedger(
        undefined,
        memoryLedger(held(5, today - 90)).ledger,
        "contacts",
        today,
        30,
      )
      expect([none.size, none.countFresh(), none.hasFresh()]).toEqual([5, 0, false])
    }),
  )

  it.effect(
    "drops what a lookup said once every caller has sorted its keys; asked again, looks them up again",
    () =>
      Effect.gen(function* () {
        const { ledger, asked } = memoryLedger(held(1_000))
        const set = yield* BoughtSet.fromLedger(undefined, ledger, "contacts", today, undefined)
        // A page listing m-1 twice, and the page after it, read ahead, listing m-1 again.
        yield* set.resolve(["m-1", "m-2", "m-1", "new-1"])
        yield* set.resolve(["m-1", "m-3"])
        expect(asked).toEqual([3, 1])
        set.settle(["m-1", "m-2", "m-1", "new-1"])
        // The second page's m-1 is not sorted yet: still answered, without a lookup.
        expect([set.has("m-1"), set.has("m-3")]).toEqual([true, true])
        expect(() => set.has("m-2")).toThrow(NotLookedUp)
        expect(() => set.due("new-1")).toThrow(NotLookedUp)
        set.settle(["m-1", "m-3"])
        expect(() => set.has("m-1")).toThrow(NotLookedUp)
        yield* set.resolve(["m-1"])
        expect(asked).toEqual([3, 1, 1])
        expect(set.has("m-1")).toBe(true)
        // What this run bought stays known, settled or not.
        set.record(["m-1", "new-1"])
        set.settle(["m-1"])
        expect([set.has("m-1"), set.boughtThisRun("new-1"), set.due("new-1")]).toEqual([true, true, false])
      }),
  )

  it.effect("a lookup that fails leaves nothing for its caller to settle", () =>
    Effect.gen(function* () {
      const memory = memoryLedger(held(10))
      let failing = false
      const ledger: Ledger = {
        ...memory.ledger,
        lookup: (stream, keys) =>
          failing
            ? Effect.fail(new LedgerError({ description: "connection lost" }))
            : memory.ledger.lookup(stream, keys),
      }
      const set = yield* BoughtSet.fromLedger(undefined, ledger, "contacts", today, undefined)
      yield* set.resolve(["m-1"])
      failing = true
      // m-1's count is raised, then given back when the lookup of m-2 fails.
      const failed = yield* Effect.either(set.resolve(["m-1", "m-2"]))
      expect(failed._tag).toBe("Left")
      expect(() => set.has("m-2")).toThrow(NotLookedUp)
      set.settle(["m-1"])
      expect(() => set.has("m-1")).toThrow(NotLookedUp)
    }),
  )

  it.effect("a state's set is moved into the ledger, and not held in memory", () =>
    Effect.gen(function* () {
      const { ledger, rows, asked } = memoryLedger(held(3))
      const json = { [String(today - 2)]: ["m-1", "p-1", "p-2"] }
      const set = yield* BoughtSet.fromLedger(json, ledger, "contacts", today, undefined)
      expect(rows.get("m-1")).toBe(today)
      expect(rows.get("p-2")).toBe(today - 2)
      expect(set.size).toBe(5)
      expect(() => set.has("p-1")).toThrow(NotLookedUp)
      yield* set.resolve(["p-1"])
      expect(asked).toEqual([1])
      expect(set.has("p-1")).toBe(true)
    }),
  )
})
