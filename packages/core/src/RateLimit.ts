/**
 * A client-side limit on how fast requests start, shared by everything that calls the provider in
 * one program: the provider allows 1,800 requests a minute per user and answers more with 429s
 * and, if pushed, a cooldown of unknown length; staying under the limit is cheaper than backing
 * off from it.
 *
 * A token bucket whose burst plus one minute of refill fits in the limit, so no sliding
 * 60-second window ever sees more than requests_per_minute starts (see paceFor). It is kept as one
 * time (GCRA, `nextStart`) and read against the clock, not refilled by a timer: Effect's
 * RateLimiter adds a token after each sleep of ceil(interval / limit) ms, and every late wake-up
 * of a busy event loop is lost for good (measured: 27 requests a second of 29.85 at 100 ms of
 * latency, `npm run bench -- read-throughput`).
 */
import { Clock, Context, Duration, Effect, Layer, Ref } from "effect"

export class RequestRateLimit extends Context.Tag("@salesintel/core/RequestRateLimit")<
  RequestRateLimit,
  {
    /** Waits, if need be, until one more request may start, then runs `effect`. */
    readonly limit: <A, E, R>(effect: Effect.Effect<A, E, R>) => Effect.Effect<A, E, R>
    /**
     * The provider answered 429: no request starts for `millis` (its Retry-After, or a backoff).
     * Every caller waits, not only the one refused: the limit is per user, so the others would
     * only earn more 429s (and, pushed, a cooldown).
     */
    readonly pause: (millis: number) => Effect.Effect<void>
  }
>() {}

/**
 * Bucket size and refill interval that keep every 60-second window at or under the limit, as
 * fast as that allows. A bucket of L tokens gains one token every interval/L ms, so a window sees
 * at most the full bucket, plus the refills that fit in 60 s, plus one for alignment:
 * L + floor(60,000 L / interval) + 1. Of the buckets up to 20 tokens, the fastest that fits wins,
 * the larger on a tie (at 1,800 a minute: a bucket of 8 refilled over 268 ms, 29.85 requests a second).
 */
export const paceFor = (
  requestsPerMinute: number,
): { readonly limit: number; readonly intervalMillis: number } => {
  let best = { limit: 1, intervalMillis: 60_001 }
  for (let limit = 1; limit <= 20 && limit + 1 < requestsPerMinute; limit++) {
    // The shortest interval for which limit + floor(60,000 limit / interval) + 1 <= requestsPerMinute.
    const intervalMillis = Math.floor((60_000 * limit) / (requestsPerMinute - limit)) + 1
    // Equal speed, larger bucket: it absorbs jitter in when requests are ready to start.
    if (limit / intervalMillis >= best.limit / best.intervalMillis) best = { limit, intervalMillis }
  }
  return best
}

/**
 * When a request that asks at `now` may start, and the bucket's next theoretical arrival time:
 * GCRA with one start every `emissionMillis` and bursts of `burst`, the same as a bucket of
 * `burst` tokens gaining one every `emissionMillis`. Slots follow the clock: a request that asks
 * late takes the next free slot without pushing the ones after it.
 */
export const nextStart = (
  tat: number,
  now: number,
  emissionMillis: number,
  burst: number,
): { readonly startAt: number; readonly tat: number } => {
  const startAt = Math.max(now, tat - (burst - 1) * emissionMillis)
  return { startAt, tat: Math.max(tat, startAt) + emissionMillis }
}

/** Waits until `resumeAt` (epoch ms) has passed; again if a pause extended it meanwhile. */
const waitUntilResumed = (resumeAt: Ref.Ref<number>): Effect.Effect<void> =>
  Effect.flatMap(Effect.zip(Ref.get(resumeAt), Clock.currentTimeMillis), ([until, now]) =>
    until <= now
      ? Effect.void
      : Effect.zipRight(Effect.sleep(Duration.millis(until - now)), waitUntilResumed(resumeAt)),
  )

export const layer = (requestsPerMinute: number): Layer.Layer<RequestRateLimit> =>
  Layer.effect(
    RequestRateLimit,
    Effect.gen(function* () {
      const { limit, intervalMillis } = paceFor(requestsPerMinute)
      const emissionMillis = intervalMillis / limit
      const tat = yield* Ref.make(Number.NEGATIVE_INFINITY)
      // A slot is taken when asked for: one that is interrupted while it waits stays spent.
      const slot = Effect.flatMap(Clock.currentTimeMillis, (now) =>
        Effect.flatMap(
          Ref.modify(tat, (current) => {
            const next = nextStart(current, now, emissionMillis, limit)
            return [next.startAt - now, next.tat]
          }),
          (wait) => (wait > 0 ? Effect.sleep(Duration.millis(wait)) : Effect.void),
        ),
      )
      const resumeAt = yield* Ref.make(0)
      return RequestRateLimit.of({
        limit: (effect) => Effect.zipRight(Effect.zipRight(waitUntilResumed(resumeAt), slot), effect),
        pause: (millis) =>
          Effect.flatMap(Clock.currentTimeMillis, (now) =>
            Ref.update(resumeAt, (until) => Math.max(until, now + millis)),
          ),
      })
    }),
  )

/** No limit: for tests and for callers that limit elsewhere. */
export const unlimited: Layer.Layer<RequestRateLimit> = Layer.succeed(
  RequestRateLimit,
  RequestRateLimit.of({ limit: (effect) => effect, pause: () => Effect.void }),
)
