/**
 * How many requests to keep in flight so that the rate limit, not the provider's latency, sets the
 * pace of a read.
 *
 * A request in flight for L ms can start again only after L ms, so holding R requests a second
 * needs R x L in flight (Little's law). The latency is measured (an exponentially weighted moving
 * average of the answers' times, without the wait at the rate limit), and the target is R x L with
 * headroom for jitter, never above the configured cap. A 429 halves a congestion ceiling (at most
 * once per latency period: the other requests already in flight were sent before the news), which
 * grows back by one per round trip, as TCP's congestion window does.
 *
 * Permits are taken before a credited page reserves its credits (Pager.ts), so the credits held
 * for requests not yet sent stay near what the latency needs, not the cap. Before the first answer
 * nothing is known of the latency, and the cap is the target: the rate limiter still paces what is
 * sent, and holding fewer would idle it for the first round trip (a fixed 4 lost 1.9 s of a read
 * at 2 s of latency, `npm run bench -- read-throughput`). The credits held meanwhile for pages
 * waiting at the rate limiter are at most the cap's, for at most one round trip.
 */
import * as Clock from "effect/Clock"
import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as STM from "effect/STM"
import * as TRef from "effect/TRef"

/** The default cap: enough for 2 s of latency at 1,800 requests a minute (60 needed). */
export const defaultMaxInFlight = 64

/** Share of each new latency sample in the average: ~10 samples shape it (a third of a second at 30/s). */
export const latencyWeight = 0.2
/** Headroom over rate x latency: jitter in the answers' times must not leave the rate limit idle. */
export const headroom = 1.5
/** Requests in flight beyond the headroom: covers the client's own work between two requests. */
export const spare = 2

/** The next moving average of the latency after `sampleMillis`; the first sample is taken as is. */
export const nextAverage = (averageMillis: number | undefined, sampleMillis: number): number =>
  averageMillis === undefined ? sampleMillis : averageMillis + latencyWeight * (sampleMillis - averageMillis)

/**
 * Requests in flight that hold `requestsPerSecond` at `latencyMillis`: rate x latency with headroom,
 * plus spare, within [1, cap].
 */
export const targetInFlight = (requestsPerSecond: number, latencyMillis: number, cap: number): number =>
  Math.max(
    1,
    Math.min(Math.floor(cap), Math.ceil(((requestsPerSecond * latencyMillis) / 1000) * headroom) + spare),
  )

export interface Settings {
  /** The pace the rate limit allows (RateLimit.ts): requests per minute. */
  readonly requestsPerMinute: number
  /** Never more in flight than this (the `concurrency` option). */
  readonly maxInFlight: number
}

export interface State {
  readonly active: number
  /** Moving average of the answers' times; undefined before the first. */
  readonly latencyMillis: number | undefined
  /** Lowered by 429s, grown back by answers; at most maxInFlight. */
  readonly ceiling: number
  /** When the ceiling was last cut, in epoch ms. */
  readonly cutAtMillis: number
}

/** The requests that may be in flight in `state`. */
export const targetOf = (settings: Settings, state: State): number => {
  const cap = Math.max(1, Math.min(settings.maxInFlight, Math.floor(state.ceiling)))
  return state.latencyMillis === undefined
    ? cap
    : targetInFlight(settings.requestsPerMinute / 60, state.latencyMillis, cap)
}

/** After an answer: the latency average moves, and a cut ceiling grows by one per round trip. */
export const observed = (settings: Settings, state: State, sampleMillis: number): State => ({
  ...state,
  latencyMillis: nextAverage(state.latencyMillis, sampleMillis),
  ceiling: Math.min(settings.maxInFlight, state.ceiling + 1 / Math.max(1, state.ceiling)),
})

/** After a 429 at `nowMillis`: the ceiling halves, unless it was cut within the last latency period. */
export const congested = (settings: Settings, state: State, nowMillis: number): State =>
  nowMillis - state.cutAtMillis < (state.latencyMillis ?? 0)
    ? state
    : { ...state, ceiling: Math.max(1, Math.floor(targetOf(settings, state) / 2)), cutAtMillis: nowMillis }

export class InFlight extends Context.Tag("@salesintel/core/InFlight")<
  InFlight,
  {
    /** Waits for a permit, runs `effect`, gives the permit back (also on failure or interruption). */
    readonly withPermit: <A, E, R>(effect: Effect.Effect<A, E, R>) => Effect.Effect<A, E, R>
    /** An answer came back after `latencyMillis` (not counting the wait at the rate limit). */
    readonly observe: (latencyMillis: number) => Effect.Effect<void>
    /** The provider answered 429: fewer in flight for a while. */
    readonly congested: Effect.Effect<void>
  }
>() {}

export const make = (settings: Settings): Effect.Effect<typeof InFlight.Service> =>
  Effect.map(
    TRef.make<State>({
      active: 0,
      latencyMillis: undefined,
      ceiling: settings.maxInFlight,
      cutAtMillis: Number.NEGATIVE_INFINITY,
    }),
    (state) => {
      // STM retries the check whenever the state changes: a release, a new latency, a cut.
      const acquire = STM.flatMap(TRef.get(state), (current) =>
        STM.zipRight(
          STM.check(() => current.active < targetOf(settings, current)),
          TRef.set(state, { ...current, active: current.active + 1 }),
        ),
      )
      const release = TRef.update(state, (current) => ({ ...current, active: current.active - 1 }))
      return InFlight.of({
        withPermit: (effect) =>
          Effect.acquireUseRelease(
            STM.commit(acquire),
            () => effect,
            () => STM.commit(release),
          ),
        observe: (latencyMillis) =>
          STM.commit(TRef.update(state, (current) => observed(settings, current, latencyMillis))),
        congested: Effect.flatMap(Clock.currentTimeMillis, (now) =>
          STM.commit(TRef.update(state, (current) => congested(settings, current, now))),
        ),
      })
    },
  )

export const layer = (settings: Settings): Layer.Layer<InFlight> => Layer.effect(InFlight, make(settings))

/** No limit on requests in flight: for tests and for callers that bound them elsewhere. */
export const unbounded: Layer.Layer<InFlight> = Layer.succeed(
  InFlight,
  InFlight.of({ withPermit: (effect) => effect, observe: () => Effect.void, congested: Effect.void }),
)
