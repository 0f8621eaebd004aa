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
import * as Clock from "effect/Clock"
import * as Context from "effect/Context"
import * as Deferred from "effect/Deferred"
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as FiberRef from "effect/FiberRef"
import * as Layer from "effect/Layer"
import * as Option from "effect/Option"
import * as Queue from "effect/Queue"
import * as Ref from "effect/Ref"
import * as Stream from "effect/Stream"
import * as SubscriptionRef from "effect/SubscriptionRef"

/**
 * A wait that holds back every request until `until` (epoch ms): the provider answered 429
 * (`retryAfterMillis`, its Retry-After, or the backoff when it sent none), or the client's own
 * pace puts the next request at least `paceSaidMillis` away. Said so that a reader can tell its
 * user (and a platform that watches for silence) why nothing comes.
 */
export type Wait =
  | { readonly _tag: "Provider"; readonly until: number; readonly retryAfterMillis: number }
  | { readonly _tag: "Pace"; readonly until: number }

/** A shorter wait for the pace is the ordinary spacing of requests, not worth saying. */
export const paceSaidMillis = 5_000

/**
 * Whether `next` is a new wait beside `current` (the last said): none said, or it is over, or
 * `next` ends a second or more later. Several requests refused at once each pause the limit a few
 * milliseconds apart: one wait, said once.
 */
const isNews = (current: Option.Option<Wait>, next: Wait, now: number): boolean =>
  Option.match(current, {
    onNone: () => true,
    onSome: (said) => said.until <= now || next.until >= said.until + 1_000,
  })

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
    /**
     * Each wait as it begins (or grows by a second or more), the latest first to a new
     * subscriber (which may be over: compare `until` with the clock). Never ends.
     */
    readonly waits: Stream.Stream<Wait>
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

/**
 * Set on a fiber whose requests only speculate (the counts a plan asks ahead of need,
 * Partitioner.ts): the limiter gives them the slots no other request waits for, so they cost a
 * read nothing when the limit is what paces it, and still go at once when it is idle.
 */
export const aheadOfNeed: FiberRef.FiberRef<boolean> = FiberRef.unsafeMake(false)

/** `effect`'s requests, and those of the fibers it forks, as requests ahead of need. */
export const asAheadOfNeed = <A, E, R>(effect: Effect.Effect<A, E, R>): Effect.Effect<A, E, R> =>
  Effect.locally(effect, aheadOfNeed, true)

/**
 * The limiter: one fiber hands the slots out, each at the time `nextStart` gives it, in the order
 * they were asked for, the requests ahead of need after every other. A slot is spent only on a
 * request that starts: one whose caller gave up while it waited (a count asked ahead and not
 * needed, a page after a failure) leaves it to the next. Taken when asked, as before, every such
 * slot stayed spent: a plan's unneeded counts left the limiter idle for as long as they would have
 * taken to send (1.5 s at 500 ms of latency in a whole sync, `npm run bench -- read-throughput`).
 */
export const layer = (requestsPerMinute: number): Layer.Layer<RequestRateLimit> =>
  Layer.scoped(
    RequestRateLimit,
    Effect.gen(function* () {
      const { limit, intervalMillis } = paceFor(requestsPerMinute)
      const emissionMillis = intervalMillis / limit
      const resumeAt = yield* Ref.make(0)
      const said = yield* SubscriptionRef.make(Option.none<Wait>())
      // The same value set again when not news: `waits` drops it by identity.
      const say = (wait: Wait) =>
        Effect.flatMap(Clock.currentTimeMillis, (now) =>
          SubscriptionRef.update(said, (current) =>
            isNews(current, wait, now) ? Option.some(wait) : current,
          ),
        )
      const needed = yield* Queue.unbounded<Deferred.Deferred<void>>()
      const ahead = yield* Queue.unbounded<Deferred.Deferred<void>>()
      // One token per waiter of either kind, offered after it: the hand-out waits on these.
      const waiters = yield* Queue.unbounded<void>()
      // Once a slot is due: the first needed waiter, else the first ahead of need (the token taken
      // says one is queued).
      const chosen = Effect.flatMap(Queue.poll(needed), (first) =>
        first._tag === "Some" ? Effect.succeed(first.value) : Queue.take(ahead),
      )
      // The next slot, once a waiter is queued, to whoever waits when it comes; returns the
      // bucket's time after it (unchanged when that waiter had given up: the slot is still free).
      const handOut = (tat: number): Effect.Effect<number> =>
        Effect.gen(function* () {
          yield* Queue.take(waiters)
          yield* waitUntilResumed(resumeAt)
          const now = yield* Clock.currentTimeMillis
          const slot = nextStart(tat, now, emissionMillis, limit)
          if (slot.startAt - now >= paceSaidMillis) yield* say({ _tag: "Pace", until: slot.startAt })
          if (slot.startAt > now) yield* Effect.sleep(Duration.millis(slot.startAt - now))
          return (yield* Deferred.succeed(yield* chosen, undefined)) ? slot.tat : tat
        })
      yield* Effect.forkScoped(Effect.iterate(Number.NEGATIVE_INFINITY, { while: () => true, body: handOut }))
      // Queued whole (the waiter and its token) or not at all; given up, it is marked done.
      const slot = Effect.uninterruptibleMask((restore) =>
        Effect.gen(function* () {
          const mine = yield* Deferred.make<void>()
          const lane = (yield* FiberRef.get(aheadOfNeed)) ? ahead : needed
          yield* Effect.zipRight(Queue.offer(lane, mine), Queue.offer(waiters, undefined))
          yield* Effect.onInterrupt(restore(Deferred.await(mine)), () => Deferred.interrupt(mine))
        }),
      )
      return RequestRateLimit.of({
        limit: (effect) => Effect.zipRight(slot, effect),
        pause: (millis) =>
          Effect.flatMap(Clock.currentTimeMillis, (now) =>
            Effect.flatMap(
              Ref.updateAndGet(resumeAt, (until) => Math.max(until, now + millis)),
              (until) => say({ _tag: "Provider", until, retryAfterMillis: millis }),
            ),
          ),
        waits: said.changes.pipe(
          Stream.changesWith((a, b) => a === b),
          Stream.filterMap((wait) => wait),
        ),
      })
    }),
  )

/** No limit: for tests and for callers that limit elsewhere. */
export const unlimited: Layer.Layer<RequestRateLimit> = Layer.succeed(
  RequestRateLimit,
  RequestRateLimit.of({ limit: (effect) => effect, pause: () => Effect.void, waits: Stream.never }),
)
