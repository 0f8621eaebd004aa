/**
 * A read held back by the rate limit says so while it waits: the streams reading get a RUNNING
 * status with the reason RATE_LIMITED (quota_reset: when the wait ends), and a LOG says what the
 * read waits for, again every heartbeatMillis while it lasts. The provider is a scripted HTTP
 * stub behind the real client and rate limit; the test clock stands in for the minutes waited.
 */
import { describe, expect, it } from "@effect/vitest"
import { Catalog, type Message } from "@salesintel/airbyte"
import { AdaptiveConcurrency, Client, CreditBudget, RateLimit } from "@salesintel/core"
import * as Chunk from "effect/Chunk"
import * as Clock from "effect/Clock"
import * as Effect from "effect/Effect"
import * as Either from "effect/Either"
import * as Fiber from "effect/Fiber"
import * as Layer from "effect/Layer"
import * as Option from "effect/Option"
import * as Schema from "effect/Schema"
import * as Stream from "effect/Stream"
import * as TestClock from "effect/TestClock"
import { messageProblems } from "../../../airbyte/src/testing/AirbyteSchema.ts"
import { type Answer, envelope, fakeHttp, json } from "../../../core/src/testing/FakeHttp.ts"
import * as Config from "../Config.ts"
import { heartbeatMillis, read } from "./Read.ts"

const catalogOf = (names: ReadonlyArray<string>) =>
  Schema.decodeUnknownSync(Catalog.ConfiguredCatalog)({
    streams: names.map((name) => ({
      stream: { name },
      sync_mode: "full_refresh",
      destination_sync_mode: "overwrite",
    })),
  })

const category = { category: "Cloud", subcategories: ["Hosting"] }
const product = (name: string) => ({ product: name, vendor: "Acme", category: "Cloud", subcategory: null })

/** What the stub answers: the categories, or a product named after the term asked for. */
const answerOf = (url: URL): Answer =>
  url.pathname.includes("categor")
    ? json(envelope([category]))
    : json(envelope([product(url.searchParams.get("product") ?? "?")]))

/**
 * The read over the stub (`answer`) with the real client and rate limit at `requestsPerMinute`,
 * the test clock moved a second at a time until it ends (five minutes at most). Each message comes
 * with the clock's time when it came.
 */
const timedRead = (
  settings: Record<string, unknown>,
  names: ReadonlyArray<string>,
  answer: (url: URL, callIndex: number) => Answer,
) =>
  Effect.gen(function* () {
    const config = Either.getOrThrow(Config.decode({ api_key: "test-key", credit_budget: 0, ...settings }))
    const http = fakeHttp(answer)
    const client = Client.layer(Config.connectionOf(config)).pipe(
      Layer.provideMerge(RateLimit.layer(config.requests_per_minute)),
      Layer.provide(http.layer),
      Layer.provide(AdaptiveConcurrency.unbounded),
    )
    const budget = yield* CreditBudget.make(config.credit_budget)
    const fiber = yield* read({
      config,
      catalog: catalogOf(names),
      state: new Map(),
      startedAt: 0,
    }).messages.pipe(
      Stream.mapEffect((message) => Effect.map(Clock.currentTimeMillis, (at) => ({ at, message }))),
      Stream.runCollect,
      Effect.provide(Layer.merge(client, Layer.succeed(CreditBudget.CreditBudget, budget))),
      Effect.fork,
    )
    for (let seconds = 0; seconds < 300 && Option.isNone(yield* Fiber.poll(fiber)); seconds++)
      yield* TestClock.adjust("1 second")
    const timed = Chunk.toReadonlyArray(yield* Fiber.join(fiber))
    return { timed, messages: timed.map(({ message }) => message), calls: http.calls }
  })

/** The RATE_LIMITED statuses: the stream, and when its wait ends. */
const rateLimited = (messages: ReadonlyArray<Message.Message>) =>
  messages.flatMap((m) => {
    if (m.type !== "TRACE" || m.trace.type !== "STREAM_STATUS") return []
    const { stream_descriptor, status, reasons = [] } = m.trace.stream_status
    return reasons.map((reason) => ({
      stream: stream_descriptor.name,
      status,
      type: reason.type,
      quotaReset: reason.rate_limited?.quota_reset,
    }))
  })

/** The statuses `stream` said, in order. */
const statusesOf = (messages: ReadonlyArray<Message.Message>, stream: string) =>
  messages.flatMap((m) =>
    m.type === "TRACE" &&
    m.trace.type === "STREAM_STATUS" &&
    m.trace.stream_status.stream_descriptor.name === stream
      ? [m.trace.stream_status.status]
      : [],
  )

const logsAt = (timed: ReadonlyArray<{ at: number; message: Message.Message }>, containing: string) =>
  timed.flatMap(({ at, message }) =>
    message.type === "LOG" && message.log.message.includes(containing)
      ? [{ at, level: message.log.level, text: message.log.message }]
      : [],
  )

describe("a read held back by the rate limit", () => {
  it.effect("says RATE_LIMITED until the Retry-After ends, and a LOG every 30 s while it waits", () =>
    Effect.gen(function* () {
      // The first request is refused with Retry-After: 100 (seconds); the retry is answered.
      const { timed, messages, calls } = yield* timedRead(
        { taxonomy: {} },
        ["taxonomy_categories"],
        (url, index) =>
          index === 0
            ? json({ message: "rate limit exceeded" }, 429, { "Retry-After": "100" })
            : answerOf(url),
      )
      for (const message of messages) expect(messageProblems(message)).toEqual([])
      expect(calls.map((call) => call.atMillis)).toEqual([0, 100_000])
      // The 429 came at the clock's 0: the wait ends 100 s later.
      expect(rateLimited(messages)).toEqual([
        { stream: "taxonomy_categories", status: "RUNNING", type: "RATE_LIMITED", quotaReset: 100_000 },
      ])
      const waiting = logsAt(timed, "waiting out the provider's rate limit")
      expect(heartbeatMillis).toBe(30_000)
      expect(waiting.map(({ at }) => at)).toEqual([0, 30_000, 60_000, 90_000])
      expect(waiting[0]).toEqual({
        at: 0,
        level: "INFO",
        text: "taxonomy_categories: waiting out the provider's rate limit until 00:01:40Z (after a 429: 100 s)",
      })
      expect(waiting[1]?.text).toBe(
        "taxonomy_categories: still waiting out the provider's rate limit until 00:01:40Z (after a 429: 100 s)",
      )
      // Then it reads on, and nothing more is said about a wait that is over.
      const records = timed.filter(({ message }) => message.type === "RECORD")
      expect(records.map(({ at }) => at)).toEqual([100_000])
      expect(statusesOf(messages, "taxonomy_categories")).toEqual([
        "STARTED",
        "RUNNING",
        "RUNNING",
        "COMPLETE",
      ])
    }),
  )

  it.effect(
    "says every stream reading is held back, and the client's own pace when it spaces requests 5 s or more",
    () =>
      Effect.gen(function* () {
        // Six requests a minute: one every 12 s. The categories go first, then each product term.
        const { timed, messages, calls } = yield* timedRead(
          { requests_per_minute: 6, taxonomy: { products: ["a", "b"] } },
          ["taxonomy_categories", "taxonomy_products"],
          answerOf,
        )
        for (const message of messages) expect(messageProblems(message)).toEqual([])
        const starts = calls.map((call) => call.atMillis)
        expect(starts).toEqual([0, 12_001, 24_002])
        // Each wait for a slot 12 s away is said by the streams reading while it lasts: the products
        // wait for both. The categories had their one answer: whether they ended before the first
        // wait began is a matter of the same instant, but nothing about a wait follows their COMPLETE.
        const said = rateLimited(messages)
        expect(said.filter((s) => s.stream === "taxonomy_products")).toEqual([
          { stream: "taxonomy_products", status: "RUNNING", type: "RATE_LIMITED", quotaReset: 12_001 },
          { stream: "taxonomy_products", status: "RUNNING", type: "RATE_LIMITED", quotaReset: 24_002 },
        ])
        expect(said.filter((s) => s.stream === "taxonomy_categories").map((s) => s.quotaReset)).not.toContain(
          24_002,
        )
        for (const stream of ["taxonomy_categories", "taxonomy_products"]) {
          const statuses = statusesOf(messages, stream)
          expect(statuses.indexOf("COMPLETE")).toBe(statuses.length - 1)
        }
        const paceLogs = logsAt(timed, "waiting out the request pace")
        expect(
          paceLogs.filter(({ text }) => text.startsWith("taxonomy_products:")).map(({ at }) => at),
        ).toEqual([0, 12_001])
        expect(
          logsAt(timed, "waiting out the request pace (requests_per_minute) until 00:00:24Z").length,
        ).toBe(1)
      }),
  )

  it.effect("says nothing while requests go at their ordinary pace", () =>
    Effect.gen(function* () {
      const { messages } = yield* timedRead(
        { requests_per_minute: 60, taxonomy: { products: ["a", "b", "c"] } },
        ["taxonomy_categories", "taxonomy_products"],
        answerOf,
      )
      expect(rateLimited(messages)).toEqual([])
      expect(messages.filter((m) => m.type === "LOG" && m.log.message.includes("waiting out"))).toEqual([])
      expect(messages.filter((m) => m.type === "RECORD").length).toBe(4)
    }),
  )
})
