/**
 * The credits a run may spend, shared by every stream of the run.
 *
 * Before a credited page is requested its worst-case cost is reserved; a page the budget cannot
 * cover is not requested. When the page comes back the reservation is settled to what the
 * provider actually charged (one credit per record on the page); when the request fails, or is
 * interrupted, the reservation is released. So at every moment spent + reserved <= limit, and
 * spending can never pass the limit: the provider charges at most the records on a page, and a
 * page never holds more records than were reserved for it.
 */
import { Context, Effect, Layer, Option, Ref } from "effect"

export interface Snapshot {
  readonly limit: number
  /** Settled charges. */
  readonly spent: number
  /** Held for requests in flight. */
  readonly reserved: number
  /** limit - spent - reserved: what the next reservation may take. */
  readonly available: number
}

/** Credits held for one request; settle or release it exactly once. */
export interface Reservation {
  readonly credits: number
}

export interface CreditBudgetService {
  /** Holds `credits` if the budget can cover them; None (and nothing held) if it cannot. */
  readonly reserve: (credits: number) => Effect.Effect<Option.Option<Reservation>>
  /** The request succeeded and was charged `charged` credits. */
  readonly settle: (reservation: Reservation, charged: number) => Effect.Effect<void>
  /** The request failed or never completed: nothing was charged. */
  readonly release: (reservation: Reservation) => Effect.Effect<void>
  readonly snapshot: Effect.Effect<Snapshot>
}

export class CreditBudget extends Context.Tag("@salesintel/core/CreditBudget")<
  CreditBudget,
  CreditBudgetService
>() {}

interface Totals {
  readonly spent: number
  readonly reserved: number
}

const snapshotOf = (limit: number, totals: Totals): Snapshot => ({
  limit,
  spent: totals.spent,
  reserved: totals.reserved,
  available: limit - totals.spent - totals.reserved,
})

export const make = (limit: number): Effect.Effect<CreditBudgetService> =>
  Effect.map(Ref.make<Totals>({ spent: 0, reserved: 0 }), (totals) =>
    CreditBudget.of({
      reserve: (credits) =>
        Ref.modify(totals, (current) =>
          current.spent + current.reserved + credits <= limit
            ? [Option.some({ credits }), { ...current, reserved: current.reserved + credits }]
            : [Option.none(), current],
        ),
      settle: (reservation, charged) =>
        Ref.update(totals, (current) => ({
          spent: current.spent + charged,
          reserved: current.reserved - reservation.credits,
        })),
      release: (reservation) =>
        Ref.update(totals, (current) => ({ ...current, reserved: current.reserved - reservation.credits })),
      snapshot: Effect.map(Ref.get(totals), (current) => snapshotOf(limit, current)),
    }),
  )

export const layer = (limit: number): Layer.Layer<CreditBudget> => Layer.effect(CreditBudget, make(limit))
