/**
 * The request programs, one per endpoint, behind the SalesIntelClient service.
 *
 * Each program validates its input before sending anything (InvalidRequest), sends GET with the
 * X-CB-ApiKey and Accept headers, waits its turn at the shared rate limit, maps every non-200
 * status to its typed error, decodes the envelope and each record (keeping the raw JSON), and
 * retries passing faults with the policy of Retry.ts. The key is a Redacted value until the
 * moment it becomes a header, and that header is on the platform's redaction list, so neither
 * errors nor logged requests can show it.
 */
// Each module from its own path: the package's index also loads its HTTP API docs pages (~20 MB
// of bundled JavaScript held as strings for as long as the process runs).
import * as FetchHttpClient from "@effect/platform/FetchHttpClient"
import * as Headers from "@effect/platform/Headers"
import * as HttpClient from "@effect/platform/HttpClient"
import type * as HttpClientError from "@effect/platform/HttpClientError"
import * as HttpClientRequest from "@effect/platform/HttpClientRequest"
import type * as HttpClientResponse from "@effect/platform/HttpClientResponse"
import * as Clock from "effect/Clock"
import * as Context from "effect/Context"
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as Either from "effect/Either"
import * as Layer from "effect/Layer"
import * as Redacted from "effect/Redacted"
import * as Schema from "effect/Schema"
import * as AdaptiveConcurrency from "./AdaptiveConcurrency.ts"
import {
  type ApiError,
  BadRequest,
  Decode,
  type Endpoint,
  endpointPaths,
  Forbidden,
  InvalidRequest,
  isRetryable,
  PaymentRequired,
  RateLimited,
  ServerError,
  Transport,
  Unauthorized,
  UnexpectedStatus,
} from "./ApiError.ts"
import type { CompanyTechnologies } from "./CompanyTechnologies.ts"
import { type ConnectionConfig, endpointUrl } from "./Connection.ts"
import type { Contact } from "./Contact.ts"
import { type Decoder, decoders } from "./FastDecode.ts"
import * as Filters from "./Filters.ts"
import { maxDepth, maxPageSize } from "./Limits.ts"
import { decodeAll, decodeItems, Envelope, type Item, type Page } from "./Page.ts"
import { fromParseError } from "./ParseIssue.ts"
import * as RateLimit from "./RateLimit.ts"
import * as Retry from "./Retry.ts"
import type { Category, Product } from "./Taxonomy.ts"

/** Which page to ask for: 1-based page number and records per page (1 to 50). */
export interface Paging {
  readonly page: number
  readonly pageSize: number
}

export interface SalesIntelClientService {
  /** 4.1, credited: one credit per record on the page returned. */
  readonly searchPeople: (
    filters: Filters.PeopleFilters,
    paging: Paging,
  ) => Effect.Effect<Page<Contact>, ApiError>
  /** 4.2, free: contact details masked; the match ids feed searchPeople({ match_ids }). */
  readonly previewPeople: (
    filters: Filters.PeopleFilters,
    paging: Paging,
  ) => Effect.Effect<Page<Contact>, ApiError>
  /** 4.3, credited: one credit per company returned. */
  readonly appendTechnologies: (
    filters: Filters.TechnologyFilters,
    paging: Paging,
  ) => Effect.Effect<Page<CompanyTechnologies>, ApiError>
  /** 4.4, free, unpaged. */
  readonly taxonomyCategories: Effect.Effect<ReadonlyArray<Item<Category>>, ApiError>
  /** 4.5, free. */
  readonly taxonomyProducts: (
    filters: Filters.ProductFilters,
    paging: Paging,
  ) => Effect.Effect<Page<Product>, ApiError>
}

export class SalesIntelClient extends Context.Tag("@salesintel/core/SalesIntelClient")<
  SalesIntelClient,
  SalesIntelClientService
>() {}

/** The header that carries the key; added to the platform's list of header values never shown. */
const apiKeyHeader = "X-CB-ApiKey"

// ---------------------------------------------------------------------------------------------
// Responses

/** A short human message from an error body: JSON `error` or `message`, else the text itself. */
export const providerMessageOf = (body: string): string | undefined => {
  const text = body.trim()
  if (text.length === 0) return undefined
  try {
    const parsed: unknown = JSON.parse(text)
    if (typeof parsed === "object" && parsed !== null) {
      for (const key of ["error", "message", "detail"]) {
        const value = (parsed as Record<string, unknown>)[key]
        if (typeof value === "string" && value.length > 0) return value
      }
    }
  } catch {
    // Not JSON: the provider's error bodies are undocumented, so plain text is as good a message.
  }
  return text.slice(0, 300)
}

/** Retry-After as milliseconds from now: delta-seconds or an HTTP date; absent or unreadable is undefined. */
export const parseRetryAfter = (value: string | undefined, nowMillis: number): number | undefined => {
  if (value === undefined) return undefined
  const trimmed = value.trim()
  if (/^\d+$/.test(trimmed)) return Number(trimmed) * 1000
  const date = Date.parse(trimmed)
  return Number.isNaN(date) ? undefined : Math.max(0, date - nowMillis)
}

/**
 * The sent parameter a provider's 400 message is about: the one it names first (as a whole word,
 * so company_location_zipcodes is not found inside company_location_zipcodes_distance).
 */
export const parameterNamedIn = (
  providerMessage: string | undefined,
  sent: ReadonlyArray<string>,
): string | undefined => {
  if (providerMessage === undefined) return undefined
  let best: { readonly name: string; readonly at: number } | undefined
  for (const name of sent) {
    const at = providerMessage.search(new RegExp(`(?<![A-Za-z0-9_])${name}(?![A-Za-z0-9_])`))
    if (at >= 0 && (best === undefined || at < best.at)) best = { name, at }
  }
  return best?.name
}

/** Error codes of a connection that was never made, as Node's sockets name them. */
const connectCode = (error: unknown): { code: string; address?: string; port?: number } | undefined => {
  // fetch wraps the socket's error: RequestError -> TypeError("fetch failed") -> Error { code }.
  let current: unknown = error
  for (let depth = 0; depth < 5 && typeof current === "object" && current !== null; depth++) {
    const { code, address, port, cause } = current as {
      code?: unknown
      address?: unknown
      port?: unknown
      cause?: unknown
    }
    if (typeof code === "string")
      return {
        code,
        ...(typeof address === "string" ? { address } : {}),
        ...(typeof port === "number" ? { port } : {}),
      }
    current = cause
  }
  return undefined
}

/** A request that got no response at all, described by its socket error when there is one. */
export const transportFailure = (endpoint: Endpoint, url: URL, error: HttpClientError.HttpClientError) => {
  const socket = connectCode(error)
  const hostPort = `${url.hostname}:${url.port || (url.protocol === "https:" ? "443" : "80")}`
  if (socket?.code === "ECONNREFUSED")
    return new Transport({
      endpoint,
      reason: "refused",
      description: `connection refused by ${hostPort}${socket.address !== undefined && socket.address !== url.hostname ? ` (${socket.address})` : ""}: nothing is listening there. Check base_url (${url.origin}) and that the service is running.`,
    })
  const cause =
    socket === undefined
      ? ""
      : socket.code === "ENOTFOUND"
        ? `: host ${url.hostname} not found (ENOTFOUND). Check base_url (${url.origin})`
        : ` (${socket.code}, ${hostPort})`
  return new Transport({ endpoint, reason: "network", description: `${error.message}${cause}` })
}

const errorForStatus = (
  endpoint: Endpoint,
  response: HttpClientResponse.HttpClientResponse,
  techFilters: ReadonlyArray<string>,
  sent: ReadonlyArray<string>,
  keySource: string | undefined,
): Effect.Effect<never, ApiError> =>
  Effect.gen(function* () {
    const providerMessage = providerMessageOf(yield* Effect.orElseSucceed(response.text, () => ""))
    const status = response.status
    switch (status) {
      case 400:
        return yield* new BadRequest({
          endpoint,
          parameter: parameterNamedIn(providerMessage, sent),
          providerMessage,
        })
      case 401:
        return yield* new Unauthorized({ endpoint, providerMessage, keySource })
      case 402:
        return yield* new PaymentRequired({ endpoint, providerMessage })
      case 403:
        return yield* new Forbidden({ endpoint, techFilters, providerMessage })
      case 429: {
        const retryAfterMillis = parseRetryAfter(
          response.headers["retry-after"],
          yield* Clock.currentTimeMillis,
        )
        return yield* new RateLimited({ endpoint, retryAfterMillis, providerMessage })
      }
      default:
        return yield* status >= 500
          ? new ServerError({ endpoint, status, providerMessage })
          : new UnexpectedStatus({ endpoint, status, providerMessage })
    }
  })

/** A 200 body that is not complete JSON was cut short on the way: a transport fault, retried. */
const readJson = (endpoint: Endpoint, response: HttpClientResponse.HttpClientResponse) =>
  Effect.flatMap(
    Effect.mapError(
      response.text,
      (error) =>
        new Transport({ endpoint, reason: "body", description: `reading the body failed: ${error.reason}` }),
    ),
    (text) =>
      Effect.try({
        try: (): unknown => JSON.parse(text),
        catch: () =>
          new Transport({
            endpoint,
            reason: "body",
            description: `the body is not complete JSON (${text.length} characters received)`,
          }),
      }),
  )

// ---------------------------------------------------------------------------------------------
// Requests

const invalid = (endpoint: Endpoint, field: string, description: string) =>
  new InvalidRequest({ endpoint, field, description })

const pagingParameters = (endpoint: Endpoint, paging: Paging) => {
  const { page, pageSize } = paging
  if (!Number.isInteger(page) || page < 1)
    return Either.left(invalid(endpoint, "page", `a whole number from 1, got ${page}`))
  if (!Number.isInteger(pageSize) || pageSize < 1 || pageSize > maxPageSize)
    return Either.left(
      invalid(endpoint, "page_size", `a whole number from 1 to ${maxPageSize}, got ${pageSize}`),
    )
  if (page * pageSize > maxDepth)
    return Either.left(
      invalid(
        endpoint,
        "page",
        `page ${page} at page_size ${pageSize} reaches record ${page * pageSize}, past the provider's ${maxDepth}-record paging depth; partition the query instead`,
      ),
    )
  return Either.right([
    ["page", String(page)],
    ["page_size", String(pageSize)],
  ] as const)
}

const filterParameters = <A, I>(endpoint: Endpoint, schema: Schema.Schema<A, I>, filters: unknown) =>
  Either.mapLeft(Filters.encode(schema, filters), (issue) =>
    invalid(endpoint, issue.path === "(root)" ? "filters" : `filters.${issue.path}`, issue.description),
  )

/** Credited endpoints: a transport failure there may have been charged (see Retry.ts). */
const isCredited = (endpoint: Endpoint) => endpoint === "people.search" || endpoint === "technologies.append"

type GetJson = (
  endpoint: Endpoint,
  parameters: ReadonlyArray<readonly [string, string]>,
  techFilters: ReadonlyArray<string>,
) => Effect.Effect<unknown, ApiError>

/** The exchange of one attempt: the GET, its status read into an answer or an error, under the timeout. */
const exchangeOf = (
  config: ConnectionConfig,
  http: HttpClient.HttpClient,
  endpoint: Endpoint,
  parameters: ReadonlyArray<readonly [string, string]>,
  techFilters: ReadonlyArray<string>,
  keySource: string | undefined,
): Effect.Effect<unknown, ApiError> => {
  const timeoutMillis = isCredited(endpoint) ? config.credited_timeout_ms : config.timeout_ms
  const request = HttpClientRequest.get(endpointUrl(config, endpointPaths[endpoint])).pipe(
    HttpClientRequest.setUrlParams(parameters),
    HttpClientRequest.setHeaders({
      [apiKeyHeader]: Redacted.value(config.api_key),
      Accept: "application/json",
    }),
  )
  const url = new URL(endpointUrl(config, endpointPaths[endpoint]))
  const sent = parameters.map(([name]) => name)
  return http.execute(request).pipe(
    Effect.mapError((error) => transportFailure(endpoint, url, error)),
    Effect.flatMap((response) =>
      response.status >= 200 && response.status < 300
        ? readJson(endpoint, response)
        : errorForStatus(endpoint, response, techFilters, sent, keySource),
    ),
    Effect.timeoutFail({
      duration: Duration.millis(timeoutMillis),
      onTimeout: () =>
        new Transport({
          endpoint,
          reason: "timeout",
          description: `no complete answer within ${timeoutMillis} ms`,
        }),
    }),
  )
}

/** One GET with retries, paced by the rate limit and measured by the in-flight gate. */
const getJsonWith =
  (
    config: ConnectionConfig,
    http: HttpClient.HttpClient,
    rateLimit: RateLimit.RequestRateLimit["Type"],
    inFlight: AdaptiveConcurrency.InFlight["Type"],
    options: ClientOptions,
  ): GetJson =>
  (endpoint, parameters, techFilters) => {
    // The timeout covers the exchange only, not the wait for the rate limit: a credited request
    // that timed out while still queued here would count as possibly charged, never sent.
    const exchange = exchangeOf(config, http, endpoint, parameters, techFilters, options.keySource)
    const attempt = rateLimit.limit(
      Effect.gen(function* () {
        const sentAt = yield* Clock.currentTimeMillis
        const answer = yield* Effect.either(exchange)
        // Any answer measures the latency; a fault that never answered (Transport) does not.
        if (Either.isRight(answer) || answer.left._tag !== "Transport")
          yield* inFlight.observe((yield* Clock.currentTimeMillis) - sentAt)
        if (Either.isLeft(answer) && answer.left._tag === "RateLimited") {
          // Everyone waits (the limit is the user's), and fewer requests go out after. A wait
          // longer than max_retry_after_ms is not waited out (the request fails): no pause then,
          // or the requests in flight would sit out a cooldown the run will not wait for.
          const wait = answer.left.retryAfterMillis ?? config.retry.initial_delay_ms
          if (wait <= config.retry.max_retry_after_ms) yield* rateLimit.pause(wait)
          yield* inFlight.congested
        }
        return yield* answer
      }),
    )
    const retryable = isCredited(endpoint) ? Retry.isRetryableWhenCredited : isRetryable
    return Retry.withRetry(
      config.retry,
      retryable,
    )(attempt).pipe(
      Effect.locallyWith(Headers.currentRedactedNames, (names) => [...names, apiKeyHeader.toLowerCase()]),
      Effect.withSpan(`SalesIntel.${endpoint}`, {
        attributes: { parameters: Object.fromEntries(parameters) },
      }),
    )
  }

const decodeEnvelope = (endpoint: Endpoint, body: unknown) =>
  Either.mapLeft(
    Schema.decodeUnknownEither(Envelope)(body),
    (error) => new Decode({ endpoint, ...fromParseError(error) }),
  )

const pageOf =
  <A, I>(endpoint: Endpoint, records: Decoder<A, I>) =>
  (paging: Paging, body: unknown): Effect.Effect<Page<A>, ApiError> =>
    Effect.gen(function* () {
      const envelope = yield* decodeEnvelope(endpoint, body)
      const { items, rejected } = decodeItems(records, envelope.search_results)
      return {
        page: paging.page,
        pageSize: paging.pageSize,
        resultCount: envelope.result_count ?? undefined,
        isPreview: envelope.is_preview ?? endpoint === "people.preview",
        items,
        rejected,
      }
    })

/** A paged endpoint: its filters and paging checked and encoded, its page decoded. */
const paged =
  <F, FI, A, I>(
    getJson: GetJson,
    endpoint: Endpoint,
    filterSchema: Schema.Schema<F, FI>,
    records: Decoder<A, I>,
  ) =>
  (filters: F, paging: Paging): Effect.Effect<Page<A>, ApiError> =>
    Effect.gen(function* () {
      const filterParams = yield* filterParameters(endpoint, filterSchema, filters)
      const pageParams = yield* pagingParameters(endpoint, paging)
      const techFilters = Filters.techFiltersUsed(filters as Readonly<Record<string, unknown>>)
      const body = yield* getJson(endpoint, [...filterParams, ...pageParams], techFilters)
      return yield* pageOf(endpoint, records)(paging, body)
    })

const taxonomyCategoriesOf = (getJson: GetJson) =>
  Effect.gen(function* () {
    const body = yield* getJson("taxonomy.categories", [], [])
    // Undocumented body: accept a bare array as well as the usual envelope.
    const records = Array.isArray(body) ? { search_results: body } : body
    const envelope = yield* decodeEnvelope("taxonomy.categories", records)
    return yield* Either.mapLeft(
      decodeAll(decoders.category, envelope.search_results),
      (issue) => new Decode({ endpoint: "taxonomy.categories", ...issue }),
    )
  })

/** What the program that makes the client knows and the config does not say. */
export interface ClientOptions {
  /** Where the key came from, named by a rejected key's message (ApiError.keyInConfig when not said). */
  readonly keySource?: string | undefined
}

export const make = (config: ConnectionConfig, options: ClientOptions = {}) =>
  Effect.gen(function* () {
    const getJson = getJsonWith(
      config,
      yield* HttpClient.HttpClient,
      yield* RateLimit.RequestRateLimit,
      yield* AdaptiveConcurrency.InFlight,
      options,
    )
    return SalesIntelClient.of({
      searchPeople: paged(getJson, "people.search", Filters.PeopleFilters, decoders.contact),
      previewPeople: paged(getJson, "people.preview", Filters.PeopleFilters, decoders.previewContact),
      appendTechnologies: paged(
        getJson,
        "technologies.append",
        Filters.TechnologyFilters,
        decoders.companyTechnologies,
      ),
      taxonomyCategories: taxonomyCategoriesOf(getJson),
      taxonomyProducts: paged(getJson, "taxonomy.products", Filters.ProductFilters, decoders.product),
    })
  })

/** The client over whatever HttpClient, rate limit and in-flight gate the caller provides. */
export const layer = (
  config: ConnectionConfig,
  options: ClientOptions = {},
): Layer.Layer<
  SalesIntelClient,
  never,
  HttpClient.HttpClient | RateLimit.RequestRateLimit | AdaptiveConcurrency.InFlight
> => Layer.effect(SalesIntelClient, make(config, options))

/**
 * The client over fetch (Node, Deno, Bun) with its own rate limit at the configured pace, and the
 * gate that keeps as many requests in flight as the measured latency needs for that pace, at most
 * `maxInFlight`. The gate is an output too: the Pager takes its permits before reserving credits;
 * and so is the rate limit, whose waits a read says while they last.
 */
export const layerFetch = (
  config: ConnectionConfig,
  options: ClientOptions & { readonly maxInFlight?: number | undefined } = {},
): Layer.Layer<SalesIntelClient | AdaptiveConcurrency.InFlight | RateLimit.RequestRateLimit> => {
  const inFlight = AdaptiveConcurrency.layer({
    requestsPerMinute: config.requests_per_minute,
    maxInFlight: options.maxInFlight ?? AdaptiveConcurrency.defaultMaxInFlight,
  })
  return layer(config, { keySource: options.keySource }).pipe(
    Layer.provide(FetchHttpClient.layer),
    Layer.provideMerge(RateLimit.layer(config.requests_per_minute)),
    Layer.provideMerge(inFlight),
  )
}
