/**
 * How to reach the provider: the key, the address, timeouts, retry and rate-limit settings.
 * Decoded from the user's JSON config with snake_case keys; the key becomes a Redacted value at
 * the boundary so that no log line, error or `String(config)` can print it.
 */
import * as Schema from "effect/Schema"

/** The documented production host. The legacy api.circleback.com serves the same paths. */
export const defaultBaseUrl = "https://api.salesintel.io"

const PositiveInt = Schema.Int.pipe(Schema.positive())

export const BaseUrl = Schema.String.pipe(
  Schema.filter((value) => /^https?:\/\/[^\s/]+/.test(value) || "an http:// or https:// URL", {
    identifier: "BaseUrl",
  }),
)

/**
 * The longest Retry-After a config may choose to wait out: 10 minutes. The platform fails a source
 * silent for longer than its heartbeat (the connector's metadata declares maxSecondsBetweenMessages:
 * 900); the read says a wait while it lasts, and no single wait comes near that bound.
 */
export const maxRetryAfterMillis = 600_000

/**
 * A wait the config sets (a backoff step, a request's timeout), at most `maxRetryAfterMillis`: the
 * read is silent through it (only the rate limit's waits are said), so none may come near the
 * platform's heartbeat either.
 */
const Millis = (what: string) =>
  PositiveInt.pipe(Schema.lessThanOrEqualTo(maxRetryAfterMillis)).annotations({
    message: (issue) => ({
      message: `Expected ${what}: a whole number of milliseconds from 1 to ${maxRetryAfterMillis} (10 minutes), actual ${JSON.stringify(issue.actual)}`,
      override: true,
    }),
  })

export const RetrySettings = Schema.Struct({
  /** Attempts per request in all, the first included. 1 turns retrying off. */
  max_attempts: Schema.optionalWith(PositiveInt.pipe(Schema.lessThanOrEqualTo(20)), { default: () => 6 }),
  /** The first backoff step; later steps double, each drawn at random below its cap (full jitter). */
  initial_delay_ms: Schema.optionalWith(PositiveInt, { default: () => 500 }),
  /** No backoff step is longer than this. */
  max_delay_ms: Schema.optionalWith(Millis("the longest backoff step"), { default: () => 30_000 }),
  /**
   * A Retry-After longer than this is not waited out: the request fails with RateLimited instead,
   * so that a provider cooldown of unknown length cannot stall a scheduled sync for hours. At most
   * `maxRetryAfterMillis`.
   */
  max_retry_after_ms: Schema.optionalWith(Millis("the longest Retry-After waited"), {
    default: () => 300_000,
  }),
})
export type RetrySettings = typeof RetrySettings.Type

export const ConnectionConfig = Schema.Struct({
  api_key: Schema.Redacted(Schema.String.pipe(Schema.minLength(1, { message: () => "a non-empty API key" }))),
  base_url: Schema.optionalWith(BaseUrl, { default: () => defaultBaseUrl }),
  /** One request, headers and body, must finish within this. */
  timeout_ms: Schema.optionalWith(Millis("a request's timeout"), { default: () => 30_000 }),
  /**
   * The timeout of a credited request (search, append). Longer than a free one's: a credited
   * request that times out may still have been charged, and it is never retried inside its
   * reservation, so giving up early costs credits, not just time.
   */
  credited_timeout_ms: Schema.optionalWith(Millis("a credited request's timeout"), { default: () => 60_000 }),
  retry: Schema.optionalWith(RetrySettings, { default: () => RetrySettings.make({}) }),
  /** The provider allows 1,800 requests a minute per user; going over earns 429s and a cooldown. */
  requests_per_minute: Schema.optionalWith(PositiveInt, { default: () => 1_800 }),
})
export type ConnectionConfig = typeof ConnectionConfig.Type
export type ConnectionConfigInput = typeof ConnectionConfig.Encoded

/** The URL of an endpoint path under the configured base, whether or not the base ends in '/'. */
export const endpointUrl = (config: Pick<ConnectionConfig, "base_url">, path: string): string =>
  `${config.base_url.replace(/\/+$/, "")}${path}`
