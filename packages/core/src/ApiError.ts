/**
 * The failures a call to the provider can end in, one tagged class per failure a caller handles
 * differently. Each carries the endpoint (and status where there is one) and renders a message
 * that says what happened and what to do next. None of them ever holds the API key: requests are
 * described by endpoint name and query parameters, and the key travels only in a header.
 */
import * as Data from "effect/Data"

/** The provider's endpoints, named the way errors, logs and metrics refer to them. */
export type Endpoint =
  | "people.search"
  | "people.preview"
  | "technologies.append"
  | "taxonomy.categories"
  | "taxonomy.products"

export const endpointPaths: Record<Endpoint, string> = {
  "people.search": "/service/people",
  "people.preview": "/service/people/preview",
  "technologies.append": "/service/technologies/append",
  "taxonomy.categories": "/service/technologies/taxonomy/categories",
  "taxonomy.products": "/service/technologies/taxonomy/products",
}

const describe = (endpoint: Endpoint, status?: number): string =>
  `${endpoint} (GET ${endpointPaths[endpoint]}${status === undefined ? "" : `, HTTP ${status}`})`

/** What the provider said in an error body, if anything: kept short so logs stay readable. */
const detail = (providerMessage: string | undefined): string =>
  providerMessage ? `: provider said "${providerMessage.slice(0, 300)}"` : ""

/**
 * Where the key came from, as a rejected key's message tells the user to check it: what the
 * program that gave the key knows (a CLI may take it from a file or the environment). The config's
 * api_key when not said.
 */
export const keyInConfig = "api_key in the config"

/** 401: the key is missing, unknown or not sent the way the provider expects. Never retried. */
export class Unauthorized extends Data.TaggedError("Unauthorized")<{
  readonly endpoint: Endpoint
  readonly providerMessage?: string | undefined
  /** Where the key came from (see keyInConfig), named in the message so the user checks the right place. */
  readonly keySource?: string | undefined
}> {
  override get message(): string {
    return `${describe(this.endpoint, 401)} rejected the API key${detail(this.providerMessage)}. Check ${this.keySource ?? keyInConfig} (it is sent as the X-CB-ApiKey header).`
  }
}

/**
 * 403: the account lacks a permission. When the request carried tech_* filters the cause is the
 * technographics add-on or the endpoint's own permission: one 403 cannot tell them apart, so the
 * message names both (and the filters); `check` probes them one by one.
 */
export class Forbidden extends Data.TaggedError("Forbidden")<{
  readonly endpoint: Endpoint
  readonly techFilters: ReadonlyArray<string>
  readonly providerMessage?: string | undefined
}> {
  override get message(): string {
    const cause =
      this.techFilters.length > 0
        ? `the account lacks the technology add-on permission that the filters ${this.techFilters.join(", ")} need, or the permission for this endpoint itself (check tells which); remove the filters or ask the provider to enable what is missing`
        : "the account lacks the permission for this service; ask the provider to enable it for your account"
    return `${describe(this.endpoint, 403)} is forbidden: ${cause}${detail(this.providerMessage)}.`
  }
}

/** 402: not enough credits on the account to return the page. Never retried. */
export class PaymentRequired extends Data.TaggedError("PaymentRequired")<{
  readonly endpoint: Endpoint
  readonly providerMessage?: string | undefined
}> {
  override get message(): string {
    return `${describe(this.endpoint, 402)}: the account has too few credits to return this page${detail(this.providerMessage)}. Add credits, or lower credit_budget so runs stop before the balance does.`
  }
}

/** 429: over the provider's rate limit (1,800 requests a minute per user). Retried. */
export class RateLimited extends Data.TaggedError("RateLimited")<{
  readonly endpoint: Endpoint
  /** How long the provider asked us to wait, when it sent Retry-After. */
  readonly retryAfterMillis?: number | undefined
  readonly providerMessage?: string | undefined
}> {
  override get message(): string {
    const wait = this.retryAfterMillis === undefined ? "" : ` (Retry-After ${this.retryAfterMillis} ms)`
    return `${describe(this.endpoint, 429)}: rate limited${wait}${detail(this.providerMessage)}. Lower requests_per_minute or concurrency.`
  }
}

/** 5xx: a fault on the provider's side. Retried. */
export class ServerError extends Data.TaggedError("ServerError")<{
  readonly endpoint: Endpoint
  readonly status: number
  readonly providerMessage?: string | undefined
}> {
  override get message(): string {
    return `${describe(this.endpoint, this.status)}: the provider failed${detail(this.providerMessage)}. This is usually passing; if it persists, contact the provider.`
  }
}

/**
 * 400: the provider refused the request's parameters. Every filter comes from the user's config,
 * so this is the user's to fix: the message names the parameter the provider's message points
 * at (when it names one of those sent) and quotes what the provider said. Never retried.
 */
export class BadRequest extends Data.TaggedError("BadRequest")<{
  readonly endpoint: Endpoint
  /** The sent query parameter the provider's message names, when it names one. */
  readonly parameter?: string | undefined
  readonly providerMessage?: string | undefined
}> {
  override get message(): string {
    const what =
      this.parameter === undefined
        ? "the provider refused the request's parameters"
        : `the provider refused the parameter ${this.parameter}`
    const fix =
      this.parameter === undefined
        ? "Check the filters in the config against the provider's rules."
        : pagingParameters.has(this.parameter)
          ? "The connector chose this value: please report it."
          : `Correct ${this.parameter} in the config's filters.`
    return `${describe(this.endpoint, 400)}: ${what}${detail(this.providerMessage)}. ${fix}`
  }
}

/** Parameters the connector sets itself, not taken from the config: a 400 on one is our bug. */
export const pagingParameters: ReadonlySet<string> = new Set(["page", "page_size"])

/** Any other status the provider is not documented to send (404, 405, ...). Never retried. */
export class UnexpectedStatus extends Data.TaggedError("UnexpectedStatus")<{
  readonly endpoint: Endpoint
  readonly status: number
  readonly providerMessage?: string | undefined
}> {
  override get message(): string {
    // Too large for the provider's server: a filter list too long for one request.
    if (this.status === 413 || this.status === 414 || this.status === 431)
      return `${describe(this.endpoint, this.status)}: the provider refused the request as too large${detail(this.providerMessage)}. A filter list is too long for one request: split it across several searches.`
    return `${describe(this.endpoint, this.status)}: unexpected status${detail(this.providerMessage)}.`
  }
}

/**
 * The request never got a complete answer: network failure, reset, timeout, cut-off body, all
 * retried. "refused" is the exception: nothing listens at base_url's host and port (the
 * connection was refused before any request was sent), which a wrong base_url or a stopped
 * server causes and seconds of retrying do not cure, so it is reported at once, as psql and curl
 * do. Nothing was sent, so nothing can have been charged.
 */
export class Transport extends Data.TaggedError("Transport")<{
  readonly endpoint: Endpoint
  readonly reason: "network" | "timeout" | "body" | "refused"
  readonly description: string
}> {
  override get message(): string {
    return this.reason === "refused"
      ? `${describe(this.endpoint)}: ${this.description}`
      : `${describe(this.endpoint)}: ${this.reason} failure: ${this.description}`
  }
}

/** The body arrived but does not have the documented shape; `path` points at the bad value. */
export class Decode extends Data.TaggedError("Decode")<{
  readonly endpoint: Endpoint
  readonly path: string
  readonly description: string
}> {
  override get message(): string {
    return `${describe(this.endpoint, 200)}: unexpected response body at ${this.path}: ${this.description}`
  }
}

/** Our own validation refused the request before anything was sent; `field` names the input. */
export class InvalidRequest extends Data.TaggedError("InvalidRequest")<{
  readonly endpoint: Endpoint
  readonly field: string
  readonly description: string
}> {
  override get message(): string {
    return `${describe(this.endpoint)}: invalid ${this.field}: ${this.description} (nothing was sent)`
  }
}

export type ApiError =
  | Unauthorized
  | Forbidden
  | PaymentRequired
  | RateLimited
  | ServerError
  | BadRequest
  | UnexpectedStatus
  | Transport
  | Decode
  | InvalidRequest

/** Only the provider's passing faults are worth another attempt; auth, credit and input errors are final. */
export const isRetryable = (error: ApiError): boolean =>
  error._tag === "RateLimited" ||
  error._tag === "ServerError" ||
  (error._tag === "Transport" && error.reason !== "refused")

/**
 * The request may have reached the provider and been charged, but no answer says so: every
 * transport failure except a refused connection, where nothing was sent.
 */
export const isUnknownOutcome = (error: ApiError): boolean =>
  error._tag === "Transport" && error.reason !== "refused"
