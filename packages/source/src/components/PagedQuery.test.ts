import { describe, expect, it } from "@effect/vitest"
import { type Client, Connection, CreditBudget, type Filters, type Page } from "@salesintel/core"
import * as Chunk from "effect/Chunk"
import * as Deferred from "effect/Deferred"
import * as Effect from "effect/Effect"
import * as Fiber from "effect/Fiber"
import * as Layer from "effect/Layer"
import * as Option from "effect/Option"
import * as Stream from "effect/Stream"
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
        rejected: [],
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

  it.live("a part that grew past its plan is read on while the part behind it holds every permit", () =>
    Effect.gen(function* () {
      // Part 0 was sized at 2 pages and holds 4 by the time it is read; part 1 holds 10. Part 1
      // begins once part 0's 2 planned pages are reserved and takes each permit the reader gives
      // back; part 0's pages past its plan must not wait for one (the reader waits for them).
      const pagesOf = (filters: Filters.PeopleFilters) =>
        String(filters.company_domain).includes("part-0") ? 4 : 10
      const requested: Array<string> = []
      const fetch = (filters: Filters.PeopleFilters, paging: Client.Paging) =>
        Effect.sync((): Page.Page<string> => {
          requested.push(`${String(filters.company_domain)}#${paging.page}`)
          const pages = pagesOf(filters)
          return {
            page: paging.page,
            pageSize: paging.pageSize,
            resultCount: pageSize * pages,
            isPreview: false,
            rejected: [],
            items:
              paging.page > pages
                ? []
                : Array.from({ length: pageSize }, (_, i) => ({ record: `r${paging.page}-${i}`, raw: {} })),
          }
        })
      const plan = {
        parts: [
          { filters: { company_domain: ["part-0.example"] }, count: pageSize * 2 },
          { filters: { company_domain: ["part-1.example"] }, count: pageSize * 10 },
        ],
        unsplittable: [],
        total: pageSize * 12,
        countRequests: 0,
      }
      const budget = yield* CreditBudget.make(10_000)
      const pages = yield* PagedQuery.run({
        client: {} as Client.SalesIntelClientService,
        name: "s",
        filters: {},
        fetch,
        credited: true,
        pageSize,
        concurrency: 2,
        retry: Connection.RetrySettings.make({ max_attempts: 1 }),
        plan,
      }).pipe(
        Stream.filter((event) => event._tag === "Page"),
        // A reader slower than the provider: part 1 runs ahead as far as the permits let it.
        Stream.tap(() => Effect.sleep("10 millis")),
        Stream.runCount,
        Effect.provide(Layer.succeed(CreditBudget.CreditBudget, budget)),
        Effect.timeout("10 seconds"),
        Effect.option,
      )
      expect(Option.getOrUndefined(pages)).toBe(14)
      expect(requested.filter((page) => page.startsWith("part-0"))).toHaveLength(4)
      expect((yield* budget.snapshot).spent).toBe(14 * pageSize)
    }),
  )

  const inTurnOf = (searches: ReadonlyArray<ReturnType<typeof smallParts>>) =>
    searches.map(
      (search, index): PagedQuery.Options<string> => ({
        client: {} as Client.SalesIntelClientService,
        name: `s${index}`,
        filters: {},
        fetch: search.fetch,
        credited: true,
        pageSize,
        concurrency,
        retry: Connection.RetrySettings.make({ max_attempts: 1 }),
        plan: search.plan,
      }),
    )

  it.live(
    "searches read in turn: a later one begins while the one before is read, within the one bound",
    () =>
      Effect.gen(function* () {
        // Six searches of one page each: each reserves its page at once, so the next begins. The
        // reader holds the first search's page: later searches begin, but only `concurrency` pages
        // are paid for behind it.
        const searches = Array.from({ length: 6 }, () => smallParts(1, 1))
        const holding = yield* Deferred.make<void>()
        const release = yield* Deferred.make<void>()
        const budget = yield* CreditBudget.make(10_000)
        const order: Array<string> = []
        const reader = yield* Effect.scoped(
          Effect.gen(function* () {
            const streams = yield* PagedQuery.inTurn(inTurnOf(searches))
            return yield* Stream.concatAll(Chunk.fromIterable(streams)).pipe(
              Stream.filter((event) => event._tag === "Page"),
              Stream.tap((event) =>
                event._tag === "Page"
                  ? Effect.sync(() => order.push(`${event.part.split(":")[0]}#${event.page.page}`))
                  : Effect.void,
              ),
              Stream.tap(() =>
                order.length === 1
                  ? Effect.zipRight(Deferred.succeed(holding, undefined), Deferred.await(release))
                  : Effect.void,
              ),
              Stream.runCount,
            )
          }),
        ).pipe(Effect.provide(Layer.succeed(CreditBudget.CreditBudget, budget)), Effect.fork)
        yield* Deferred.await(holding)
        yield* Effect.sleep("100 millis")
        expect(searches.map((search) => search.requested.length)).toEqual([1, 1, 1, 1, 1, 0])
        yield* Deferred.succeed(release, undefined)
        expect(yield* Fiber.join(reader)).toBe(6)
        // Passed on search by search.
        expect(order.map((page) => page.split("#")[0])).toEqual(["s0", "s1", "s2", "s3", "s4", "s5"])
        expect((yield* budget.snapshot).spent).toBe(6 * pageSize)
      }),
  )

  it.live("searches read in turn: once one is refused, the ones after it read nothing", () =>
    Effect.gen(function* () {
      // A budget of 7 pages: the first search (6 pages) is read, the second refused on its second
      // page; the third is not begun (every part Skipped), so one position says where to resume.
      const searches = [smallParts(3, 2), smallParts(3, 2), smallParts(3, 2)]
      const budget = yield* CreditBudget.make(7 * pageSize)
      const events = yield* Effect.scoped(
        Effect.flatMap(
          PagedQuery.inTurn(inTurnOf(searches).map((query) => ({ ...query, concurrency: 1 }))),
          (streams) => Stream.runCollect(Stream.concatAll(Chunk.fromIterable(streams))),
        ),
      ).pipe(Effect.provide(Layer.succeed(CreditBudget.CreditBudget, budget)))
      const tags = Chunk.toReadonlyArray(events).map(
        (event) => `${event._tag}${"part" in event ? `:${event.part.split(":")[0]}` : ""}`,
      )
      expect(tags.filter((tag) => tag === "Page:s0")).toHaveLength(6)
      expect(tags.filter((tag) => tag === "Page:s1")).toHaveLength(1)
      expect(tags.filter((tag) => tag.startsWith("Refused"))).toEqual(["Refused:s1"])
      expect(tags.filter((tag) => tag.endsWith(":s2"))).toEqual(["Skipped:s2", "Skipped:s2", "Skipped:s2"])
      expect(searches[2]?.requested).toEqual([])
    }),
  )
})

describe("PagedQuery.partStart: a position saved at another page size", () => {
  const at = (next_page: number, page_size?: number): PagedQuery.Position => ({
    completed: [],
    current: { part: "s:{}", next_page, ...(page_size === undefined ? {} : { page_size }) },
  })
  it("resumes a part at its saved page when the page size is the same (or the state predates it)", () => {
    expect(PagedQuery.partStart(at(201, 10), "s:{}", 10)).toEqual({ startPage: 201, pageSize: 10 })
    expect(PagedQuery.partStart(at(201), "s:{}", 50)).toEqual({ startPage: 201, pageSize: 50 })
  })
  it("converts the position when its offset falls on a page of the new size", () => {
    // 200 pages of 10 read: 2,000 records, page 41 of 50; and back.
    expect(PagedQuery.partStart(at(201, 10), "s:{}", 50)).toEqual({ startPage: 41, pageSize: 50 })
    expect(PagedQuery.partStart(at(41, 50), "s:{}", 10)).toEqual({ startPage: 201, pageSize: 10 })
  })
  it("reads the part on at its saved size when the offset is not a page of the new size", () => {
    // 199 pages of 10: 1,990 records; at 50 a page would repeat 40 of them or skip 10.
    expect(PagedQuery.partStart(at(200, 10), "s:{}", 50)).toEqual({ startPage: 200, pageSize: 10 })
    expect(PagedQuery.recordsRead(at(200, 10), "s:{}", 50)).toBe(1_990)
    expect(PagedQuery.partStart(at(3, 50), "s:{}", 30)).toEqual({ startPage: 3, pageSize: 50 })
  })
  it("starts any other part at its first page, at the new size", () => {
    expect(PagedQuery.partStart(at(200, 10), "other:{}", 50)).toEqual({ startPage: 1, pageSize: 50 })
    expect(PagedQuery.recordsRead(undefined, "s:{}", 50)).toBe(0)
  })
})
