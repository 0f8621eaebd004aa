/**
 * The one way a credited request is sent: under a reservation of exactly what it asks for, and
 * accounted as the provider counts it.
 *
 * - Delivered: the reservation settles to what was charged.
 * - A definite refusal (402, 4xx, 5xx or 429 after the client's retries): nothing was charged,
 *   the reservation is released.
 * - An unknown outcome (a Transport error: timeout, dropped connection, body cut short, but not a
 *   refused connection, where nothing was sent; or an interruption in flight): the provider may
 *   have charged it, so the reservation is forfeited
 *   (counted as spent and uncertain). Trying again needs a new reservation through the budget,
 *   never the old one: that is what kept a timing-out run from paying twice per page.
 */
import * as Cause from "effect/Cause"
import * as Effect from "effect/Effect"
import * as Exit from "effect/Exit"
import * as Option from "effect/Option"
import * as Ref from "effect/Ref"
import { type ApiError, isUnknownOutcome } from "./ApiError.ts"
import type { RetrySettings } from "./Connection.ts"
import type { CreditBudgetService, Reservation } from "./CreditBudget.ts"
import * as Retry from "./Retry.ts"

/** The outcome may have been charged: a transport fault or an interruption while in flight. */
export const isUncertain = (cause: Cause.Cause<ApiError>): boolean =>
  Cause.isInterrupted(cause) ||
  Option.match(Cause.failureOption(cause), { onNone: () => false, onSome: isUnknownOutcome })

/** Sends `request` under `reservation`, which is settled, released or forfeited by the outcome. */
export const underReservation = <A>(
  budget: CreditBudgetService,
  reservation: Reservation,
  request: Effect.Effect<A, ApiError>,
  charged: (value: A) => number,
): Effect.Effect<A, ApiError> =>
  Effect.onExit(request, (exit) =>
    Exit.match(exit, {
      onSuccess: (value) => budget.settle(reservation, charged(value)),
      onFailure: (cause) => (isUncertain(cause) ? budget.forfeit(reservation) : budget.release(reservation)),
    }),
  )

export interface Options<A> {
  readonly budget: CreditBudgetService
  /** Reserves for one attempt; None when the budget (or a stop request) refuses. */
  readonly reserve: Effect.Effect<Option.Option<Reservation>>
  /** The first attempt's reservation, when the caller must take it in its own order. */
  readonly firstReservation?: Effect.Effect<Option.Option<Reservation>> | undefined
  /** The request for the credits granted (a keyed purchase asks for as many keys as granted). */
  readonly request: (credits: number) => Effect.Effect<A, ApiError>
  readonly charged: (value: A) => number
  /** Attempts after an unknown outcome, each under a new reservation. */
  readonly retry: RetrySettings
}

export interface Delivered<A> {
  readonly value: A
  /** The credits the delivered attempt reserved. */
  readonly credits: number
}

/** Reserves, sends, accounts; again under a new reservation after an unknown outcome. None: refused. */
export const send = <A>(options: Options<A>): Effect.Effect<Option.Option<Delivered<A>>, ApiError> =>
  Effect.flatMap(Ref.make(true), (isFirst) => {
    const reservation = Effect.flatMap(Ref.getAndSet(isFirst, false), (first) =>
      first && options.firstReservation !== undefined ? options.firstReservation : options.reserve,
    )
    const attempt = Effect.uninterruptibleMask((restore) =>
      Effect.flatMap(
        reservation,
        Option.match({
          onNone: () => Effect.succeed(Option.none<Delivered<A>>()),
          onSome: (held) =>
            Effect.map(
              underReservation(options.budget, held, restore(options.request(held.credits)), options.charged),
              (value) => Option.some({ value, credits: held.credits }),
            ),
        }),
      ),
    )
    return Effect.retry(attempt, Retry.schedule(options.retry, isUnknownOutcome))
  })
