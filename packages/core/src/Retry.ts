/**
 * When to try a failed request again, and how long to wait first.
 *
 * Exponential backoff with full jitter (each wait drawn uniformly from zero up to the capped
 * exponential step, which spreads retries of many clients instead of synchronising them), a cap
 * on any one wait, a cap on attempts, and a provider's Retry-After taking precedence when it
 * sent one. Only passing faults retry: 429, 5xx and transport failures (network, timeout, a body
 * cut short). 400, 401, 402 and 403 are answers, not accidents, and retrying them only burns
 * requests of the rate limit.
 */
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as Random from "effect/Random"
import * as Schedule from "effect/Schedule"
import { type ApiError, isRetryable } from "./ApiError.ts"
import type { RetrySettings } from "./Connection.ts"

/** The cap of the n-th wait (n from 0): initial * 2^n, never above max_delay_ms. */
export const backoffCapMillis = (settings: RetrySettings, retryIndex: number): number =>
  Math.min(settings.max_delay_ms, settings.initial_delay_ms * 2 ** retryIndex)

/** The wait the provider asked for, when the error carries one. */
const retryAfterOf = (error: ApiError): number | undefined =>
  error._tag === "RateLimited" ? error.retryAfterMillis : undefined

/** What the retries of one request have used so far. */
export interface Tally {
  readonly error: ApiError | undefined
  /** Retries after faults other than 429 (5xx, transport): bounded by max_attempts. */
  readonly faults: number
  /** Retries after 429s, and the most they may have waited in all. */
  readonly rateLimited: number
  readonly rateLimitedMillis: number
}

const noRetries: Tally = { error: undefined, faults: 0, rateLimited: 0, rateLimitedMillis: 0 }

const countRetry =
  (settings: RetrySettings) =>
  (tally: Tally, error: ApiError): Tally => {
    if (error._tag !== "RateLimited") return { ...tally, error, faults: tally.faults + 1 }
    // A wait counts at least initial_delay_ms, so that a Retry-After of 0 cannot loop unbounded.
    const wait = Math.max(
      settings.initial_delay_ms,
      retryAfterOf(error) ?? backoffCapMillis(settings, tally.rateLimited),
    )
    return {
      ...tally,
      error,
      rateLimited: tally.rateLimited + 1,
      rateLimitedMillis: tally.rateLimitedMillis + wait,
    }
  }

/**
 * The retry policy as a Schedule over ApiError inputs. A 5xx or transport fault is retried at most
 * max_attempts - 1 times. A 429 says only "not now": while the provider lets the request through
 * again within max_retry_after_ms (each Retry-After, and all the waits of one request together),
 * it is retried without using up an attempt, so a rate limit never ends a run that could wait it
 * out. max_attempts 1 turns every retry off.
 */
export const schedule = (
  settings: RetrySettings,
  retryable: (error: ApiError) => boolean = isRetryable,
): Schedule.Schedule<Tally, ApiError> =>
  Schedule.identity<ApiError>().pipe(
    // reduce outputs the tally before the latest input: count that input in too.
    Schedule.reduce(noRetries, countRetry(settings)),
    Schedule.intersect(Schedule.identity<ApiError>()),
    Schedule.map(([before, error]) => countRetry(settings)(before, error)),
    Schedule.whileOutput((tally) => {
      const error = tally.error
      if (error === undefined || !retryable(error) || settings.max_attempts <= 1) return false
      if (error._tag !== "RateLimited") return tally.faults <= settings.max_attempts - 1
      return (
        (retryAfterOf(error) ?? 0) <= settings.max_retry_after_ms &&
        tally.rateLimitedMillis <= settings.max_retry_after_ms
      )
    }),
    Schedule.modifyDelayEffect((tally) => {
      const error = tally.error
      const retryAfter = error === undefined ? undefined : retryAfterOf(error)
      if (retryAfter !== undefined) return Effect.succeed(Duration.millis(retryAfter))
      const cap =
        error?._tag === "RateLimited"
          ? backoffCapMillis(settings, tally.rateLimited - 1)
          : backoffCapMillis(settings, tally.faults - 1)
      return Effect.map(Random.next, (fraction) => Duration.millis(Math.floor(fraction * cap)))
    }),
  )

/** Runs `effect` under the retry policy; the last error surfaces when attempts run out. */
export const withRetry =
  (settings: RetrySettings, retryable: (error: ApiError) => boolean = isRetryable) =>
  <A, R>(effect: Effect.Effect<A, ApiError, R>): Effect.Effect<A, ApiError, R> =>
    Effect.retry(effect, schedule(settings, retryable))

/**
 * What a credited request may retry inside one reservation: only definite answers (429, 5xx),
 * which the provider did not charge. A transport failure (timeout, dropped connection, body cut
 * short) may have been charged, so it surfaces to the caller, which counts the reservation as
 * spent and needs a new one to try again (CreditedRequest.ts).
 */
export const isRetryableWhenCredited = (error: ApiError): boolean =>
  error._tag === "RateLimited" || error._tag === "ServerError"
