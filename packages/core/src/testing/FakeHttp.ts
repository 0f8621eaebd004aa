/**
 * Test support: an HttpClient whose answers a test scripts, recording every request it gets (at
 * the Clock's time, so TestClock tests can measure the waits between attempts).
 */
import * as HttpClient from "@effect/platform/HttpClient"
import * as HttpClientError from "@effect/platform/HttpClientError"
import * as HttpClientResponse from "@effect/platform/HttpClientResponse"
import * as Clock from "effect/Clock"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Schema from "effect/Schema"
import * as AdaptiveConcurrency from "../AdaptiveConcurrency.ts"
import * as Client from "../Client.ts"
import * as Connection from "../Connection.ts"
import * as RateLimit from "../RateLimit.ts"

export interface Call {
  readonly url: URL
  readonly headers: Readonly<Record<string, string>>
  readonly atMillis: number
}

/** What the fake answers: a web Response, "network" to fail as a dropped connection would, "hang" never to answer. */
export type Answer = Response | "network" | "hang"

export const fakeHttp = (answer: (url: URL, callIndex: number) => Answer) => {
  const calls: Array<Call> = []
  const client = HttpClient.make((request, url) =>
    Effect.gen(function* () {
      const atMillis = yield* Clock.currentTimeMillis
      calls.push({ url, headers: request.headers, atMillis })
      const reply = answer(url, calls.length - 1)
      if (reply === "hang") return yield* Effect.never
      if (reply === "network")
        return yield* new HttpClientError.RequestError({
          request,
          reason: "Transport",
          description: "socket hang up",
        })
      return HttpClientResponse.fromWeb(request, reply)
    }),
  )
  return { calls, layer: Layer.succeed(HttpClient.HttpClient, client) }
}

export const json = (body: unknown, status = 200, headers: Record<string, string> = {}): Response =>
  new Response(JSON.stringify(body), { status, headers: { "content-type": "application/json", ...headers } })

export const testKey = "sk-live-0123456789abcdef"

export const config = (
  overrides: Partial<Connection.ConnectionConfigInput> = {},
): Connection.ConnectionConfig =>
  Schema.decodeUnknownSync(Connection.ConnectionConfig)({
    api_key: testKey,
    base_url: "http://provider.test",
    ...overrides,
  })

/** A SalesIntelClient over the fake, with no client-side rate limit nor bound on requests in flight. */
export const clientLayer = (
  answer: (url: URL, callIndex: number) => Answer,
  overrides: Partial<Connection.ConnectionConfigInput> = {},
) => {
  const fake = fakeHttp(answer)
  return {
    calls: fake.calls,
    layer: Client.layer(config(overrides)).pipe(
      Layer.provide(fake.layer),
      Layer.provide(RateLimit.unlimited),
      Layer.provide(AdaptiveConcurrency.unbounded),
    ),
  }
}

/** An envelope around records, as the provider wraps them. */
export const envelope = (records: ReadonlyArray<unknown>, extra: Record<string, unknown> = {}) => ({
  aggregations: {},
  batch_id: null,
  error: null,
  is_preview: false,
  page: 1,
  page_size: 50,
  result_count: records.length,
  search_results: records,
  ...extra,
})
