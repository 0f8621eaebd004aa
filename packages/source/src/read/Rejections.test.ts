import { CreditBudget, type Page } from "@salesintel/core"
import * as Effect from "effect/Effect"
import * as Either from "effect/Either"
import * as Option from "effect/Option"
import * as Stream from "effect/Stream"
import { describe, expect, it } from "vitest"
import * as Rejections from "./Rejections.ts"

const bad = (at: number): Page.Rejected => ({
  raw: { at },
  path: `search_results[${at}].match_id`,
  description: "is missing",
})
/** A page of 50 records, `rejected` of them rejected. */
const page = (rejected: number) => ({
  items: Array.from({ length: 50 - rejected }, (_, at) => at),
  rejected: Array.from({ length: rejected }, (_, at) => bad(at)),
})

describe("Rejections.watch", () => {
  it("lets a bad record now and then pass, however many pages it takes", async () => {
    const watched = await Effect.runPromise(
      Effect.gen(function* () {
        const watch = yield* Rejections.watch("people.search")
        yield* Effect.forEach(
          Array.from({ length: 40 }, () => page(3)),
          watch.after,
        )
        return { tipped: yield* watch.tipped, raised: yield* Effect.either(Stream.runDrain(watch.raised)) }
      }),
    )
    expect(Option.isNone(watched.tipped)).toBe(true)
    expect(Either.isRight(watched.raised)).toBe(true)
  })

  it("stops buying once a page's worth is rejected and more than half of what it carried, then fails", async () => {
    const budget = await Effect.runPromise(CreditBudget.make(10_000))
    const watched = await Effect.runPromise(
      Effect.gen(function* () {
        const watch = yield* Rejections.watch("people.search")
        // 10 of 50, then 30 of 50 (40 of 100: not yet a page's worth), then 45 of 50 (85 of 150).
        const tipped: Array<boolean> = []
        for (const each of [page(10), page(30), page(45), page(50)]) {
          yield* watch.after(each)
          tipped.push(Option.isSome(yield* watch.tipped))
        }
        return {
          tipped,
          closed: (yield* budget.snapshot).closed,
          error: yield* Effect.flip(Stream.runDrain(watch.raised)),
        }
      }).pipe(Effect.provideService(CreditBudget.CreditBudget, budget)),
    )
    expect(watched.tipped).toEqual([false, false, true, true])
    // No more is reserved (the pages in flight land): the run's budget is closed.
    expect(watched.closed).toBe(true)
    expect(watched.error._tag).toBe("Decode")
    expect(watched.error.path).toBe("search_results[0].match_id")
    expect(watched.error.message).toContain("85 of the 150 records bought so far did not decode")
  })
})
