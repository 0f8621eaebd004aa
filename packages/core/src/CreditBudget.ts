/**
 * The credits a run may spend, shared by every stream of the run, counted as the provider counts.
 *
 * Before a credited request is sent, exactly what it asks for is reserved; a request the budget
 * cannot cover is not sent. When the answer comes back the reservation settles to what the
 * provider charged (one credit per record). A definite refusal (402, 4xx, a 5xx or 429 after its
 * retries) was not charged, so its reservation is released. A request whose outcome is unknown (a
 * timeout, a dropped connection, a body cut short, an interruption in flight) may have been
 * charged: its reservation is forfeited, counted as spent and as uncertain, never released. So at
 * every moment spent + reserved <= limit, and what the provider charges can never pass the limit.
 *
 * `close` is the stop request: from then on every reservation is refused (free pages reserve
 * zero, so they stop too), while the requests in flight land and settle.
 */
import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Option from "effect/Option"
import * as Ref from "effect/Ref"

export interface Snapshot {
  readonly limit: number
  /** Settled charges, forfeited reservations included. */
  readonly spent: number
  /** Of `spent`, credits possibly charged without delivery (forfeited reservations). */
  readonly uncertain: number
  /** Held for requests in flight. */
  readonly reserved: number
  /** limit - spent - reserved: what the next reservation may take. */
  readonly available: number
  /** A stop was requested: no reservation is granted any more. */
  readonly closed: boolean
}

/** Credits held for one request; settle, release or forfeit it exactly once. */
export interface Reservation {
  readonly credits: number
}

export interface CreditBudgetService {
  /** Holds `credits` if the budget can cover them; None (and nothing held) if it cannot. */
  readonly reserve: (credits: number) => Effect.Effect<Option.Option<Reservation>>
  /** Holds as much of `credits` as is available, at least 1; None when nothing is (or when closed). */
  readonly reserveUpTo: (credits: number) => Effect.Effect<Option.Option<Reservation>>
  /** The request succeeded and was charged `charged` credits. */
  readonly settle: (reservation: Reservation, charged: number) => Effect.Effect<void>
  /** The request was definitely refused, or never sent: nothing was charged. */
  readonly release: (reservation: Reservation) => Effect.Effect<void>
  /** The request's outcome is unknown: it may have been charged in full. */
  readonly forfeit: (reservation: Reservation) => Effect.Effect<void>
  /** Refuses every later reservation (a stop request); requests in flight still settle. */
  readonly close: Effect.Effect<void>
  readonly snapshot: Effect.Effect<Snapshot>
}

export class CreditBudget extends Context.Tag("@salesintel/core/CreditBudget")<
  CreditBudget,
  CreditBudgetService
>() {}

interface Totals {
  readonly spent: number
  readonly uncertain: number
  readonly reserved: number
  readonly closed: boolean
}

const snapshotOf = (limit: number, totals: Totals): Snapshot => ({
  limit,
  spent: totals.spent,
  uncertain: totals.uncertain,
  reserved: totals.reserved,
  available: limit - totals.spent - totals.reserved,
  closed: totals.closed,
})

export const make = (limit: number): Effect.Effect<CreditBudgetService> =>
  Effect.map(Ref.make<Totals>({ spent: 0, uncertain: 0, reserved: 0, closed: false }), (totals) => {
    const hold = (current: Totals, credits: number): [Option.Option<Reservation>, Totals] => [
      Option.some({ credits }),
      { ...current, reserved: current.reserved + credits },
    ]
    return CreditBudget.of({
      reserve: (credits) =>
        Ref.modify(totals, (current) =>
          !current.closed && current.spent + current.reserved + credits <= limit
            ? hold(current, credits)
            : [Option.none(), current],
        ),
      reserveUpTo: (credits) =>
        Ref.modify(totals, (current) => {
          const granted = Math.min(credits, limit - current.spent - current.reserved)
          return !current.closed && granted >= 1 ? hold(current, granted) : [Option.none(), current]
        }),
      settle: (reservation, charged) =>
        Ref.update(totals, (current) => ({
          ...current,
          spent: current.spent + charged,
          reserved: current.reserved - reservation.credits,
        })),
      release: (reservation) =>
        Ref.update(totals, (current) => ({ ...current, reserved: current.reserved - reservation.credits })),
      forfeit: (reservation) =>
        Ref.update(totals, (current) => ({
          ...current,
          spent: current.spent + reservation.credits,
          uncertain: current.uncertain + reservation.credits,
          reserved: current.reserved - reservation.credits,
        })),
      close: Ref.update(totals, (current) => ({ ...current, closed: true })),
      snapshot: Effect.map(Ref.get(totals), (current) => snapshotOf(limit, current)),
    })
  })

export const layer = (limit: number): Layer.Layer<CreditBudget> => Layer.effect(CreditBudget, make(limit))

/** One stream's share of a run's budget (`share`): the budget as it sees it, and what it spent. */
export interface Share extends CreditBudgetService {
  /** What this stream's requests settled and forfeited, of the run's `spent` and `uncertain`. */
  readonly own: Effect.Effect<{ readonly spent: number; readonly uncertain: number }>
}

/**
 * A stream's view of the run's budget, for streams that spend in turn: a stream may begin while
 * the one before it still has requests in flight (it has reserved all it will), and what those
 * hold may come back (a last page reserves a full page; a definite refusal is released). So a
 * batch that the budget cannot cover whole (`reserveUpTo`) is asked again once `earlierEnded`:
 * the credits go to the streams in their order, as if each began after the one before ended.
 * `reserve` (a page or a retry, asked under a permit of the in-flight gate) does not wait: it
 * could hold a permit the stream before needs. Each share counts what its own requests spent, so
 * a stream's credits are its own whatever runs beside it.
 */
export const share = (budget: CreditBudgetService, earlierEnded: Effect.Effect<void>): Effect.Effect<Share> =>
  Effect.map(Ref.make({ spent: 0, uncertain: 0 }), (own) => {
    // Uninterruptible but for the wait: a reservation taken is always returned or released.
    const reserveUpTo = (credits: number) =>
      Effect.uninterruptibleMask((restore) =>
        Effect.flatMap(budget.reserveUpTo(credits), (first) =>
          Option.isSome(first) && first.value.credits === credits
            ? Effect.succeed(first)
            : Effect.gen(function* () {
                if (Option.isSome(first)) yield* budget.release(first.value)
                if ((yield* budget.snapshot).closed) return Option.none<Reservation>()
                yield* restore(earlierEnded)
                return yield* budget.reserveUpTo(credits)
              }),
        ),
      )
    return {
      reserve: budget.reserve,
      reserveUpTo,
      settle: (reservation, charged) =>
        Effect.zipRight(
          budget.settle(reservation, charged),
          Ref.update(own, (counted) => ({ ...counted, spent: counted.spent + charged })),
        ),
      release: budget.release,
      forfeit: (reservation) =>
        Effect.zipRight(
          budget.forfeit(reservation),
          Ref.update(own, (counted) => ({
            spent: counted.spent + reservation.credits,
            uncertain: counted.uncertain + reservation.credits,
          })),
        ),
      close: budget.close,
      snapshot: budget.snapshot,
      own: Ref.get(own),
    }
  })
