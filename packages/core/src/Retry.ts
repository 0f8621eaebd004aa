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
import { Duration, Effect, Random, Schedule } from "effect"
import { type ApiError, isRetryable } from "./ApiError.ts"
import type { RetrySettings } from "./Connection.ts"

/** The cap of the n-th wait (n from 0): initial * 2^n, never above max_delay_ms. */
export const backoffCapMillis = (settings: RetrySettings, retryIndex: number): number =>
  Math.min(settings.max_delay_ms, settings.initial_delay_ms * 2 ** retryIndex)

/** The wait the provider asked for, when the error carries one. */
const retryAfterOf = (error: ApiError): number | undefined =>
  error._tag === "RateLimited" ? error.retryAfterMillis : undefined

/**
 * The retry policy as a Schedule over ApiError inputs. It recurs at most max_attempts - 1 times,
 * only while the error is retryable and any Retry-After is within max_retry_after_ms.
 */
export const schedule = (
  settings: RetrySettings,
  retryable: (error: ApiError) => boolean = isRetryable,
): Schedule.Schedule<unknown, ApiError> =>
  Schedule.identity<ApiError>().pipe(
    Schedule.intersect(Schedule.forever),
    Schedule.whileInput(
      (error: ApiError) => retryable(error) && (retryAfterOf(error) ?? 0) <= settings.max_retry_after_ms,
    ),
    Schedule.intersect(Schedule.recurs(settings.max_attempts - 1)),
    Schedule.modifyDelayEffect(([[error, retryIndex]]) => {
      const retryAfter = retryAfterOf(error)
      if (retryAfter !== undefined) return Effect.succeed(Duration.millis(retryAfter))
      const cap = backoffCapMillis(settings, retryIndex)
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
