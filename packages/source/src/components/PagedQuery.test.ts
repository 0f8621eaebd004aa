import { describe, expect, it } from "@effect/vitest"
import { type Client, Connection, CreditBudget, type Filters, type Page } from "@salesintel/core"
import { Deferred, Effect, Fiber, Layer, Stream } from "effect"
import * as PagedQuery from "./PagedQuery.ts"

const pageSize = 5
const concurrency = 4

/** A search planned as `parts` small parts of `pagesEach` full pages, and the pages it was asked for. */
const smallParts = (parts: number, pagesEach: number) => {
  const requested: Array<string> = []
  const filtersOf = (part: number): Filters.PeopleFilters => ({ company_domain: [`part-${part}.example`] })
  const fetch = (filters: Filters.PeopleFilters, paging: Client.Paging) =>
    Effect.sync((): Page.Page<string> => {
      requested.push(`${String(filters.company_domain)}#${paging.page}`)
      return {
        page: paging.page,
        pageSize: paging.pageSize,
        resultCount: pageSize * pagesEach,
        isPreview: false,
        items: Array.from({ length: pageSize }, (_, i) => ({ record: `r${paging.page}-${i}`, raw: {} })),
      }
    })
  const plan = {
    parts: Array.from({ length: parts }, (_, part) => ({
      filters: filtersOf(part),
      count: pageSize * pagesEach,
    })),
    unsplittable: [],
    total: parts * pageSize * pagesEach,
    countRequests: 0,
  }
  return { requested, fetch, plan }
}

describe("PagedQuery", () => {
  it.live("keeps the pages paid for and not yet passed on at `concurrency`, however many parts begin", () =>
    Effect.gen(function* () {
      // Twenty parts of two pages: each part reserves its last page at once, so without a shared
      // bound every part would begin, and land its pages, while the reader holds the first page.
      const search = smallParts(20, 2)
      const holding = yield* Deferred.make<void>()
      const release = yield* Deferred.make<void>()
      const budget = yield* CreditBudget.make(10_000)
      const reader = yield* PagedQuery.run({
        client: {} as Client.SalesIntelClientService,
        name: "s",
        filters: {},
        fetch: search.fetch,
        credited: true,
        pageSize,
        concurrency,
        retry: Connection.RetrySettings.make({ max_attempts: 1 }),
        plan: search.plan,
      }).pipe(
        Stream.filter((event) => event._tag === "Page"),
        Stream.tap((event) =>
          event._tag === "Page" && event.page.page === 1 && event.part.includes("part-0")
            ? Effect.zipRight(Deferred.succeed(holding, undefined), Deferred.await(release))
            : Effect.void,
        ),
        Stream.runCount,
        Effect.provide(Layer.succeed(CreditBudget.CreditBudget, budget)),
        Effect.fork,
      )
      yield* Deferred.await(holding)
      // Time for every page that may be sent to land.
      yield* Effect.sleep("100 millis")
      // The page being read was passed on; `concurrency` more may be paid for behind it.
      expect(search.requested.length).toBe(1 + concurrency)
      expect((yield* budget.snapshot).spent).toBe((1 + concurrency) * pageSize)
      yield* Deferred.succeed(release, undefined)
      expect(yield* Fiber.join(reader)).toBe(40)
      expect(search.requested.length).toBe(40)
    }),
  )
})
