/**
 * A client-side limit on how fast requests start, shared by everything that calls the provider in
 * one program: the provider allows 1,800 requests a minute per user and answers more with 429s
 * and, if pushed, a cooldown of unknown length; staying under the limit is cheaper than backing
 * off from it.
 *
 * A token bucket whose burst plus one minute of refill fits in the limit, so no sliding
 * 60-second window ever sees more than requests_per_minute starts: at the default 1,800 that is
 * 29 tokens refilled each second (at most 29 + 60 x 29 = 1,769 starts in any minute).
 */
import { Context, Duration, Effect, Layer, RateLimiter } from "effect"

export class RequestRateLimit extends Context.Tag("@salesintel/core/RequestRateLimit")<
  RequestRateLimit,
  {
    /** Waits, if need be, until one more request may start, then runs `effect`. */
    readonly limit: <A, E, R>(effect: Effect.Effect<A, E, R>) => Effect.Effect<A, E, R>
  }
>() {}

/** Bucket size and refill interval that keep every 60-second window at or under the limit. */
export const paceFor = (
  requestsPerMinute: number,
): { readonly limit: number; readonly intervalMillis: number } => {
  // A bucket of L tokens refilled every second starts at most L + 60 L requests in a minute.
  if (requestsPerMinute >= 61) return { limit: Math.floor(requestsPerMinute / 61), intervalMillis: 1_000 }
  // Slower than that: one request at a time, spaced so that a window holds at most the limit.
  const intervalMillis = requestsPerMinute <= 1 ? 60_001 : Math.ceil(60_000 / (requestsPerMinute - 1))
  return { limit: 1, intervalMillis }
}

export const layer = (requestsPerMinute: number): Layer.Layer<RequestRateLimit> =>
  Layer.scoped(
    RequestRateLimit,
    Effect.map(
      RateLimiter.make({
        limit: paceFor(requestsPerMinute).limit,
        interval: Duration.millis(paceFor(requestsPerMinute).intervalMillis),
        algorithm: "token-bucket",
      }),
      (limiter) => RequestRateLimit.of({ limit: limiter }),
    ),
  )

/** No limit: for tests and for callers that limit elsewhere. */
export const unlimited: Layer.Layer<RequestRateLimit> = Layer.succeed(
  RequestRateLimit,
  RequestRateLimit.of({ limit: (effect) => effect }),
)
