import { describe, expect, it } from "@effect/vitest"
import { Catalog } from "@salesintel/airbyte"
import { ApiError, Client, CreditBudget, type Filters, type Page, type Taxonomy } from "@salesintel/core"
import * as Chunk from "effect/Chunk"
import * as Deferred from "effect/Deferred"
import * as Effect from "effect/Effect"
import * as Either from "effect/Either"
import * as Fiber from "effect/Fiber"
import * as Layer from "effect/Layer"
import * as Option from "effect/Option"
import * as Schema from "effect/Schema"
import * as Stream from "effect/Stream"
import * as TestClock from "effect/TestClock"
import * as Config from "../Config.ts"
import { fakeProvider } from "../testing/FakeProvider.ts"
import { Estimate } from "./Estimate.ts"
import { read } from "./Read.ts"

describe("Read.Estimate", () => {
  it("sums the latest estimate of each key, never below what it emitted", () => {
    const estimate = new Estimate()
    estimate.set("search a", 100)
    estimate.set("search b", 50)
    expect(estimate.rows(10)).toBe(150)
    expect(estimate.rows(200)).toBe(200)
    // Search a ended having read 70: its estimate is revised, b's stands.
    estimate.set("search a", 70)
    expect(estimate.rows(10)).toBe(120)
  })

  it("has bytes once records are sized, from their average UTF-8 size", () => {
    const estimate = new Estimate(2)
    estimate.set("", 10)
    expect(estimate.bytes(0)).toBeUndefined()
    expect(estimate.sample({ a: "é" })).toBe(false) // {"a":"é"}: 10 bytes
    expect(estimate.sample({ a: "xx" })).toBe(true) // {"a":"xx"}: 10 bytes; the sample is complete
    expect(estimate.sample({ a: "much longer than the rest" })).toBe(false) // past the sample
    expect(estimate.bytes(3)).toBe(100)
  })

  it("says a completed sample only when there is an estimate to restate", () => {
    const estimate = new Estimate(1)
    expect(estimate.sample({})).toBe(false)
    expect(estimate.bytes(5)).toBe(10)
  })
})

describe("the streams of a read", () => {
  const config = Either.getOrThrow(
    Config.decode({
      api_key: "test-key",
      credit_budget: 10_000,
      page_size: 10,
      concurrency: 4,
      contacts: { searches: [{ name: "all", filters: { job_levels: ["mgr"] } }] },
      companies: { domains: ["a.example", "b.example"] },
      taxonomy: { products: ["cloud"] },
    }),
  )
  const catalog = Schema.decodeUnknownSync(Catalog.ConfiguredCatalog)({
    streams: ["taxonomy_categories", "taxonomy_products", "contacts", "companies"].map((name) => ({
      stream: { name },
      sync_mode: "full_refresh",
      destination_sync_mode: "overwrite",
    })),
  })

  /**
   * The in-memory provider, its categories answered by `categories`, given a signal that completes
   * when the first contacts page is asked for.
   */
  const clientWith = (
    provider: ReturnType<typeof fakeProvider>,
    categories: (
      contactsAsked: Deferred.Deferred<void>,
    ) => Effect.Effect<ReadonlyArray<Page.Item<Taxonomy.Category>>, ApiError.ApiError>,
  ) =>
    Layer.effect(
      Client.SalesIntelClient,
      Effect.gen(function* () {
        const client = yield* Client.SalesIntelClient
        const contactsAsked = yield* Deferred.make<void>()
        return {
          ...client,
          searchPeople: (filters: Filters.PeopleFilters, paging: Client.Paging) =>
            Effect.zipRight(Deferred.succeed(contactsAsked, undefined), client.searchPeople(filters, paging)),
          taxonomyCategories: categories(contactsAsked),
        }
      }),
    ).pipe(Layer.provide(provider.layer))

  const run = (client: Layer.Layer<Client.SalesIntelClient>) =>
    Effect.gen(function* () {
      const budget = yield* CreditBudget.make(config.credit_budget)
      const items = yield* read({ config, catalog, state: new Map(), startedAt: 0 }).items.pipe(
        Stream.runCollect,
        Effect.provide(Layer.merge(client, Layer.succeed(CreditBudget.CreditBudget, budget))),
      )
      const all = Chunk.toReadonlyArray(items)
      const messages = all.flatMap((item) => (item._tag === "Message" ? [item.message] : []))
      const summary = all.flatMap((item) => (item._tag === "Summary" ? [item.summary] : []))[0]
      const statuses = messages.flatMap((m) =>
        m.type === "TRACE" && m.trace.type === "STREAM_STATUS"
          ? [`${m.trace.stream_status.stream_descriptor.name} ${m.trace.stream_status.status}`]
          : [],
      )
      const records = (stream: string) =>
        messages.filter((m) => m.type === "RECORD" && m.record.stream === stream).length
      return { all, messages, summary, statuses, records }
    })

  it.live("reads the free streams beside the credited ones, which count their credits alone", () =>
    Effect.gen(function* () {
      const provider = fakeProvider({ contacts: 35 })
      const category: Page.Item<Taxonomy.Category> = {
        record: { category: "Cloud", subcategories: [] },
        raw: { category: "Cloud", subcategories: [] },
      }
      // The categories answer only once a contacts page was asked for: read one after the other
      // (the taxonomy first, as the catalog lists it), the read would wait for ever.
      const { summary, records, all } = yield* run(
        clientWith(provider, (contactsAsked) => Effect.as(Deferred.await(contactsAsked), [category])),
      ).pipe(Effect.timeoutFail({ duration: "10 seconds", onTimeout: () => "the free streams waited" }))
      expect(records("taxonomy_categories")).toBe(1)
      expect(records("contacts")).toBe(35)
      expect(records("companies")).toBe(2)
      expect(summary?.failure).toBeUndefined()
      // The summaries in catalog order; the credits each stream spent, the free ones none.
      expect(summary?.streams.map((s) => [s.stream, s.creditsSpent, s.status])).toEqual([
        ["taxonomy_categories", 0, "succeeded"],
        ["taxonomy_products", 0, "succeeded"],
        ["contacts", 35, "succeeded"],
        ["companies", 2, "succeeded"],
      ])
      expect(summary?.creditsSpent).toBe(37)
      const spent = all.flatMap((item) => (item._tag === "Spent" ? [[item.stream, item.credits]] : []))
      // The free streams are read beside each other too: in whichever order they end.
      expect(
        spent
          .filter(([stream]) => String(stream).startsWith("taxonomy"))
          .sort((a, b) => String(a[0]).localeCompare(String(b[0]))),
      ).toEqual([
        ["taxonomy_categories", 0],
        ["taxonomy_products", 0],
      ])
    }),
  )

  it.live(
    "a free stream's failure lets the streams running end whole, starts no credited one, then ends the read",
    () =>
      Effect.gen(function* () {
        // Each contacts page takes 5 ms; the categories fail once the first is asked for.
        const provider = fakeProvider({ contacts: 35, latency: "5 millis" })
        const failing = (contactsAsked: Deferred.Deferred<void>) =>
          Effect.zipRight(
            Deferred.await(contactsAsked),
            Effect.fail(new ApiError.Forbidden({ endpoint: "taxonomy.categories", techFilters: [] })),
          )
        const { summary, records, statuses, messages } = yield* run(clientWith(provider, failing))
        // Every contact paid for went out, with the state that covers it.
        expect(records("contacts")).toBe(35)
        expect(provider.charged()).toBe(35)
        expect(statuses).toContain("contacts COMPLETE")
        expect(statuses).toContain("companies INCOMPLETE")
        expect(records("companies")).toBe(0)
        // The free stream beside it ends whole too; the credited stream after contacts is not started.
        expect(summary?.streams.map((s) => [s.stream, s.status])).toEqual([
          ["taxonomy_categories", "failed"],
          ["taxonomy_products", "succeeded"],
          ["contacts", "succeeded"],
          ["companies", "not started"],
        ])
        expect(statuses).toContain("taxonomy_products COMPLETE")
        const last = messages[messages.length - 1]
        expect(
          last?.type === "TRACE" && last.trace.type === "ERROR"
            ? last.trace.error.stream_descriptor
            : undefined,
        ).toEqual({
          name: "taxonomy_categories",
        })
        expect(statuses).toContain("taxonomy_categories INCOMPLETE")
      }),
  )

  it.effect("a credited stream's failure ends the read at once, naming it", () =>
    Effect.gen(function* () {
      const provider = fakeProvider({ contacts: 35, paymentRequiredOnPage: 2 })
      const { summary, statuses, messages } = yield* run(clientWith(provider, () => Effect.never))
      const last = messages[messages.length - 1]
      expect(
        last?.type === "TRACE" && last.trace.type === "ERROR" ? last.trace.error.failure_type : undefined,
      ).toBe("config_error")
      expect(summary?.failure).toBeDefined()
      expect(statuses).toContain("contacts INCOMPLETE")
      expect(statuses).not.toContain("companies STARTED")
      // The free stream beside it, interrupted, says it did not complete.
      expect(statuses.filter((s) => s.startsWith("taxonomy_categories"))).toEqual([
        "taxonomy_categories STARTED",
        "taxonomy_categories INCOMPLETE",
      ])
      expect(summary?.streams.find((s) => s.stream === "taxonomy_categories")?.status).toBe("failed")
    }),
  )
})

describe("the credited streams of a read, in turn", () => {
  const catalogIn = (syncMode: Catalog.SyncMode) =>
    Schema.decodeUnknownSync(Catalog.ConfiguredCatalog)({
      streams: ["contacts", "companies"].map((name) => ({
        stream: { name },
        sync_mode: syncMode,
        destination_sync_mode: syncMode === "incremental" ? "append_dedup" : "overwrite",
        ...(syncMode === "incremental" ? { cursor_field: ["_salesintel_fetched_at"] } : {}),
      })),
    })
  const configWith = (budget: number, emails: ReadonlyArray<string>) =>
    Either.getOrThrow(
      Config.decode({
        api_key: "test-key",
        credit_budget: budget,
        page_size: 10,
        concurrency: 8,
        contacts: { searches: [{ name: "all", filters: { job_levels: ["mgr"] } }], emails },
        companies: { domains: ["a.example", "b.example"] },
      }),
    )
  /** The read on the provider in memory, the test clock moved a second at a time until it ends. */
  const timedRead = (
    provider: ReturnType<typeof fakeProvider>,
    budget: number,
    {
      syncMode = "full_refresh",
      emails = [],
    }: { syncMode?: Catalog.SyncMode; emails?: ReadonlyArray<string> } = {},
  ) =>
    Effect.gen(function* () {
      const credits = yield* CreditBudget.make(budget)
      const fiber = yield* read({
        config: configWith(budget, emails),
        catalog: catalogIn(syncMode),
        state: new Map(),
        startedAt: 0,
      }).items.pipe(
        Stream.runCollect,
        Effect.provide(Layer.merge(provider.layer, Layer.succeed(CreditBudget.CreditBudget, credits))),
        Effect.fork,
      )
      let seconds = 0
      while (Option.isNone(yield* Fiber.poll(fiber)) && seconds < 30) {
        yield* TestClock.adjust("1 second")
        seconds++
      }
      const all = Chunk.toReadonlyArray(yield* Fiber.join(fiber))
      const summary = all.flatMap((item) => (item._tag === "Summary" ? [item.summary] : []))[0]
      const records = (stream: string) =>
        all.filter(
          (item) =>
            item._tag === "Message" &&
            item.message.type === "RECORD" &&
            item.message.record.stream === stream,
        ).length
      return { seconds, summary, records }
    })

  it.effect("the next begins once the one before has reserved its last page: one round trip sooner", () =>
    Effect.gen(function* () {
      // Every request takes a second: the count, then the four pages and the companies' batch at once.
      const provider = fakeProvider({ contacts: 35, latency: "1 second" })
      const { seconds, summary, records } = yield* timedRead(provider, 10_000)
      expect(seconds).toBe(2) // one after the other: 3
      expect([records("contacts"), records("companies")]).toEqual([35, 2])
      // Each stream's credits are its own, though they were spent at the same time.
      expect(summary?.streams.map((s) => [s.stream, s.creditsSpent])).toEqual([
        ["contacts", 35],
        ["companies", 2],
      ])
    }),
  )

  it.effect("a first incremental read, straight through the search, hands over as soon too", () =>
    Effect.gen(function* () {
      // Nothing bought: the search is read directly, its pages sized by the count (a second).
      const provider = fakeProvider({ contacts: 35, latency: "1 second" })
      const { seconds, records } = yield* timedRead(provider, 10_000, { syncMode: "incremental" })
      expect(seconds).toBe(2) // one after the other: 3
      expect([records("contacts"), records("companies")]).toEqual([35, 2])
    }),
  )

  it.effect("the searches do not hand over while the emails still have to buy after them", () =>
    Effect.gen(function* () {
      // The count, the pages, then the email's lookup (known contacts are looked up a chunk at a
      // time as their turn comes) and its purchase (it matches nothing: no request), and only then
      // the companies' batch.
      const provider = fakeProvider({ contacts: 45, latency: "1 second" })
      const email = "nobody@nowhere.example"
      const { seconds, records } = yield* timedRead(provider, 10_000, { emails: [email] })
      expect([records("contacts"), records("companies")]).toEqual([45, 2])
      expect(seconds).toBe(4) // the companies' batch after the contacts ended, not beside their lookup
    }),
  )

  it.effect("a budget the streams before still hold goes to them first, as if read one after the other", () =>
    Effect.gen(function* () {
      // 40 credits: the contacts' four pages hold them all (the last a full page for its 5), so the
      // companies' batch waits for the contacts to end and gets 2 of the 5 they gave back.
      const provider = fakeProvider({ contacts: 35, latency: "1 second" })
      const { summary, records } = yield* timedRead(provider, 40)
      expect([records("contacts"), records("companies")]).toEqual([35, 2])
      expect(summary?.creditsSpent).toBe(37)
      expect(provider.charged()).toBe(37)
    }),
  )

  it.effect(
    "a failure of the one before: the stream begun beside it lands what it has in flight, then the read fails",
    () =>
      Effect.gen(function* () {
        // The contacts' last page is refused with a 402 once the companies' batch is in flight.
        const provider = fakeProvider({ contacts: 35, latency: "1 second", paymentRequiredOnPage: 4 })
        const { summary, records } = yield* timedRead(provider, 10_000)
        expect(summary?.failure?.failureType).toBe("config_error")
        // The companies' batch, paid for, is read and counted; nothing more is bought.
        expect(records("companies")).toBe(2)
        expect(summary?.streams.map((s) => [s.stream, s.status])).toEqual([
          ["contacts", "failed"],
          ["companies", "succeeded"],
        ])
        expect(summary?.streams.find((s) => s.stream === "companies")?.creditsSpent).toBe(2)
      }),
  )
})
