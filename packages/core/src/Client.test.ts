import { createServer } from "node:http"
import type { AddressInfo } from "node:net"
import * as HttpClientError from "@effect/platform/HttpClientError"
import * as HttpClientRequest from "@effect/platform/HttpClientRequest"
import { describe, expect, it } from "@effect/vitest"
import * as Effect from "effect/Effect"
import * as Inspectable from "effect/Inspectable"
import { ApiError, Client, Page } from "./index.ts"
import { clientLayer, config, envelope, json, testKey } from "./testing/FakeHttp.ts"

const contact = {
  match_id: "m-1",
  first_name: "Dana",
  last_name: "Reyes",
  email: "dana@example.com",
  job_level: "vp",
  phone_numbers: [{ type: "mobile", value: "5125550199" }],
  company: { id: "4400123", name: "Example Corp", size: 1200, naics_codes: ["511210"] },
  dates: { created_date: "1622329525877", last_modified_date: 1717171717000 },
  surprise_field: { kept: true },
}

const noRetry = { retry: { max_attempts: 1 } }

/** Runs one search against a fake that always answers `response`; returns the outcome and calls. */
const searchWith = (response: () => Response, filters: Record<string, unknown> = {}) => {
  const fake = clientLayer(() => response(), noRetry)
  return Effect.gen(function* () {
    const client = yield* Client.SalesIntelClient
    return yield* Effect.either(client.searchPeople(filters, { page: 1, pageSize: 50 }))
  }).pipe(
    Effect.provide(fake.layer),
    Effect.map((result) => ({ result, calls: fake.calls })),
  )
}

describe("Client", () => {
  it.effect("sends the key and Accept headers, and the filters as query parameters", () =>
    Effect.gen(function* () {
      const { result, calls } = yield* searchWith(() => json(envelope([contact])), {
        job_levels: ["vp", "dir"],
        tech_product: ["A", "B"],
      })
      expect(result._tag).toBe("Right")
      expect(calls).toHaveLength(1)
      const call = calls[0]!
      expect(call.url.pathname).toBe("/service/people")
      expect(call.headers["x-cb-apikey"]).toBe(testKey)
      expect(call.headers.accept).toBe("application/json")
      expect(call.url.searchParams.get("job_levels")).toBe("vp,dir")
      expect(call.url.searchParams.get("tech_product")).toBe("A~B")
      expect(call.url.searchParams.get("page")).toBe("1")
      expect(call.url.searchParams.get("page_size")).toBe("50")
    }),
  )

  it.effect("decodes records leniently and keeps each record's raw JSON", () =>
    Effect.gen(function* () {
      const { result } = yield* searchWith(() => json(envelope([contact], { result_count: "137" })))
      if (result._tag !== "Right") throw new Error(String(result.left))
      const page = result.right
      expect(page.resultCount).toBe(137)
      expect(page.isPreview).toBe(false)
      const item = page.items[0]!
      expect(item.record.company?.id).toBe(4400123)
      expect(item.record.dates?.created_date).toBe(1622329525877)
      expect(item.record.dates?.last_modified_date).toBe(1717171717000)
      expect(item.raw.surprise_field).toEqual({ kept: true })
    }),
  )

  const statusCases = [
    [401, "Unauthorized"],
    [402, "PaymentRequired"],
    [403, "Forbidden"],
    [429, "RateLimited"],
    [500, "ServerError"],
    [503, "ServerError"],
    [400, "BadRequest"],
    [404, "UnexpectedStatus"],
  ] as const
  for (const [status, tag] of statusCases) {
    it.effect(`maps HTTP ${status} to ${tag}, naming the endpoint and status`, () =>
      Effect.gen(function* () {
        const { result } = yield* searchWith(() => json({ error: "nope" }, status))
        expect(result._tag).toBe("Left")
        if (result._tag !== "Left") return
        expect(result.left._tag).toBe(tag)
        expect(result.left.message).toContain("people.search")
        expect(result.left.message).toContain(`HTTP ${status}`)
        expect(result.left.message).toContain('provider said "nope"')
      }),
    )
  }

  it.effect("says a 431 (or 414, 413) is a request too large, a filter list to split", () =>
    Effect.gen(function* () {
      for (const status of [431, 414, 413]) {
        const { result } = yield* searchWith(() => json({ error: "too large" }, status))
        expect(result._tag === "Left" && result.left.message).toContain(
          `HTTP ${status}): the provider refused the request as too large: provider said "too large". A filter list is too long for one request: split it across several searches.`,
        )
      }
    }),
  )

  it.effect("names the tech add-on and the filters that need it on a 403", () =>
    Effect.gen(function* () {
      const { result } = yield* searchWith(() => json({ error: "forbidden" }, 403), {
        tech_category: ["CRM"],
      })
      expect(result._tag === "Left" && result.left.message).toContain("technology add-on")
      expect(result._tag === "Left" && result.left.message).toContain("tech_category")
    }),
  )

  it.effect("on a 400 names the sent parameter the provider's message points at, and never retries", () =>
    Effect.gen(function* () {
      const cases = [
        // The first sent parameter the message names, as a whole word.
        [
          { company_location_zipcodes_distance: 25, company_location_zipcodes: ["02110"] },
          "'company_location_zipcodes_distance' needs 'company_location_zipcodes'",
          "company_location_zipcodes_distance",
        ],
        [{ mobile_phone: "123" }, "mobile_phone: expected 7 to 15 digits", "mobile_phone"],
        // A message naming nothing that was sent: no parameter claimed.
        [{ first_name: "Dana" }, "bad request", undefined],
      ] as const
      for (const [filters, said, parameter] of cases) {
        const fake = clientLayer(() => json({ error: said }, 400), { retry: { max_attempts: 3 } })
        const error = yield* Effect.flip(
          Effect.gen(function* () {
            const client = yield* Client.SalesIntelClient
            return yield* client.previewPeople(filters, { page: 1, pageSize: 1 })
          }).pipe(Effect.provide(fake.layer)),
        )
        expect(fake.calls).toHaveLength(1)
        expect(error._tag).toBe("BadRequest")
        if (error._tag !== "BadRequest") return
        expect(error.parameter).toBe(parameter)
        expect(error.message).toContain("people.preview (GET /service/people/preview, HTTP 400)")
        expect(error.message).toContain(`provider said "${said}"`)
        expect(error.message).toContain(
          parameter === undefined
            ? "Check the filters in the config"
            : `refused the parameter ${parameter}: provider said`,
        )
      }
    }),
  )

  it("finds the parameter a 400 names as a whole word, the earliest one", () => {
    const sent = ["company_location_zipcodes", "company_location_zipcodes_distance", "page"]
    expect(
      Client.parameterNamedIn("company_location_zipcodes_distance needs company_location_zipcodes", sent),
    ).toBe("company_location_zipcodes_distance")
    expect(Client.parameterNamedIn("bad company_location_zipcodes value", sent)).toBe(
      "company_location_zipcodes",
    )
    expect(Client.parameterNamedIn("'page' starts at 1", sent)).toBe("page")
    expect(Client.parameterNamedIn("pages are wrong", sent)).toBeUndefined()
    expect(Client.parameterNamedIn(undefined, sent)).toBeUndefined()
  })

  it.effect("reads Retry-After on a 429 (seconds)", () =>
    Effect.gen(function* () {
      const { result } = yield* searchWith(() => json({}, 429, { "retry-after": "7" }))
      expect(
        result._tag === "Left" && result.left._tag === "RateLimited" && result.left.retryAfterMillis,
      ).toBe(7000)
    }),
  )

  it.effect("keeps a record that does not fit apart, whole, with the path of the bad value", () =>
    Effect.gen(function* () {
      const bad = { ...contact, company: { id: "not-a-number" } }
      const { match_id: _, ...keyless } = contact
      const { result } = yield* searchWith(() => json(envelope([contact, bad, keyless, 7])))
      // The page is paid for: its good record is kept, and the others beside it, never dropped.
      expect(result._tag === "Right" && result.right.items.map((item) => item.raw)).toEqual([contact])
      expect(result._tag === "Right" && result.right.rejected).toEqual([
        { raw: bad, path: "search_results[1].company.id", description: expect.any(String) },
        { raw: keyless, path: "search_results[2].match_id", description: "is missing" },
        { raw: 7, path: "search_results[3]", description: "Expected a JSON object" },
      ])
      expect(result._tag === "Right" && Page.recordsOn(result.right)).toBe(4)
    }),
  )

  it.effect("reports a missing envelope field as a Decode error", () =>
    Effect.gen(function* () {
      const { result } = yield* searchWith(() => json({ result_count: 3 }))
      expect(result._tag === "Left" && result.left._tag === "Decode" && result.left.path).toBe(
        "search_results",
      )
    }),
  )

  it.effect("treats a body cut short as a transport fault", () =>
    Effect.gen(function* () {
      const { result } = yield* searchWith(
        () => new Response('{"search_results": [{"match_id": "m', { status: 200 }),
      )
      expect(result._tag === "Left" && result.left._tag === "Transport" && result.left.reason).toBe("body")
    }),
  )

  it.effect("refuses invalid filters and paging before sending anything", () =>
    Effect.gen(function* () {
      const fake = clientLayer(() => json(envelope([])))
      const outcomes = yield* Effect.gen(function* () {
        const client = yield* Client.SalesIntelClient
        return yield* Effect.all([
          Effect.flip(client.searchPeople({ company_name: ["A, B"] }, { page: 1, pageSize: 50 })),
          Effect.flip(client.searchPeople({}, { page: 1, pageSize: 51 })),
          Effect.flip(client.searchPeople({}, { page: 0, pageSize: 50 })),
          Effect.flip(client.searchPeople({}, { page: 201, pageSize: 50 })),
          Effect.flip(client.taxonomyProducts({}, { page: 1, pageSize: 50 })),
        ])
      }).pipe(Effect.provide(fake.layer))
      expect(outcomes.map((error) => error._tag)).toEqual(Array(5).fill("InvalidRequest"))
      expect(outcomes.map((error) => (error._tag === "InvalidRequest" ? error.field : ""))).toEqual([
        "filters.company_name[0]",
        "page_size",
        "page",
        "page",
        "filters",
      ])
      expect(outcomes[3]?.message).toContain("10000-record paging depth")
      expect(fake.calls).toHaveLength(0)
    }),
  )

  it.effect("never shows the key in an error, its message or its printed form", () =>
    Effect.gen(function* () {
      for (const status of [401, 402, 403, 429, 500]) {
        const { result } = yield* searchWith(() => json({ error: "x" }, status))
        if (result._tag !== "Left") throw new Error("expected a failure")
        const printed = [
          result.left.message,
          String(result.left),
          JSON.stringify(result.left),
          Inspectable.format(result.left),
        ].join("\n")
        expect(printed).not.toContain(testKey)
      }
      const network = yield* Effect.either(
        Effect.gen(function* () {
          const client = yield* Client.SalesIntelClient
          return yield* client.searchPeople({}, { page: 1, pageSize: 50 })
        }).pipe(Effect.provide(clientLayer(() => "network", noRetry).layer)),
      )
      expect(network._tag === "Left" && network.left._tag).toBe("Transport")
      expect(JSON.stringify(network) + String(network)).not.toContain(testKey)
    }),
  )

  it.live("says connection refused, naming host and port, at once and without retrying", () =>
    Effect.gen(function* () {
      // A port that was just free: nothing listens on it.
      const port = yield* Effect.promise(
        () =>
          new Promise<number>((resolve) => {
            const server = createServer()
            server.listen(0, "127.0.0.1", () => {
              const { port } = server.address() as AddressInfo
              server.close(() => resolve(port))
            })
          }),
      )
      const started = Date.now()
      const error = yield* Effect.flip(
        Effect.gen(function* () {
          const client = yield* Client.SalesIntelClient
          return yield* client.previewPeople({}, { page: 1, pageSize: 1 })
        }).pipe(
          Effect.provide(
            Client.layerFetch(
              config({
                base_url: `http://127.0.0.1:${port}`,
                // The default policy would retry a network failure for seconds.
                retry: { max_attempts: 6, initial_delay_ms: 1_000, max_delay_ms: 5_000 },
              }),
            ),
          ),
        ),
      )
      expect(Date.now() - started).toBeLessThan(900)
      expect(error._tag === "Transport" && error.reason).toBe("refused")
      expect(error.message).toContain(`connection refused by 127.0.0.1:${port}`)
      expect(error.message).toContain("Check base_url")
      expect(ApiError.isRetryable(error)).toBe(false)
      expect(ApiError.isUnknownOutcome(error)).toBe(false)
    }),
  )

  it("describes a failed connection by the socket's error under fetch's", () => {
    const url = new URL("http://api.example.test:8080/service/people")
    const failure = (code: string) =>
      Client.transportFailure(
        "people.search",
        url,
        new HttpClientError.RequestError({
          request: HttpClientRequest.get(url),
          reason: "Transport",
          cause: new TypeError("fetch failed", { cause: Object.assign(new Error(code), { code }) }),
        }),
      )
    const refused = failure("ECONNREFUSED")
    expect(refused.reason).toBe("refused")
    expect(refused.message).toContain("connection refused by api.example.test:8080")
    const unknownHost = failure("ENOTFOUND")
    expect(unknownHost.reason).toBe("network")
    expect(unknownHost.message).toContain("host api.example.test not found (ENOTFOUND). Check base_url")
    const reset = failure("ECONNRESET")
    expect(reset.reason).toBe("network")
    expect(reset.message).toContain("(ECONNRESET, api.example.test:8080)")
    expect(ApiError.isRetryable(reset)).toBe(true)
  })

  it.effect("reads the categories body as an envelope or a bare array", () =>
    Effect.gen(function* () {
      const categories = [{ category: "Sales", subcategories: ["CRM"] }]
      for (const body of [envelope(categories), categories]) {
        const items = yield* Effect.gen(function* () {
          const client = yield* Client.SalesIntelClient
          return yield* client.taxonomyCategories
        }).pipe(Effect.provide(clientLayer(() => json(body)).layer))
        expect(items.map((item) => item.record)).toEqual(categories)
      }
    }),
  )

  it("parses Retry-After as delta-seconds or an HTTP date", () => {
    const now = Date.parse("2026-11-21T12:00:00Z")
    expect(Client.parseRetryAfter("120", now)).toBe(120_000)
    expect(Client.parseRetryAfter("Sat, 21 Nov 2026 12:00:30 GMT", now)).toBe(30_000)
    expect(Client.parseRetryAfter("Sat, 21 Nov 2026 11:00:00 GMT", now)).toBe(0)
    expect(Client.parseRetryAfter("soon", now)).toBeUndefined()
    expect(Client.parseRetryAfter(undefined, now)).toBeUndefined()
  })
})
