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
 *
 * The budget is the one count of what a run spent: a reservation taken through an account
 * (`account`, one per stream) counts what it settles or forfeits under that account's name too,
 * so what each stream spent is read from the budget (`Snapshot.accounts`), never kept beside it.
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
  /** Of `spent` and `uncertain`, what each account's reservations settled and forfeited. */
  readonly accounts: ReadonlyMap<string, Spent>
}

export interface Spent {
  readonly spent: number
  readonly uncertain: number
}

/** Credits held for one request; settle, release or forfeit it exactly once. */
export interface Reservation {
  readonly credits: number
  /** The account its charge is counted under, if it was taken through one (`account`). */
  readonly account?: string | undefined
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
  readonly accounts: ReadonlyMap<string, Spent>
}

const snapshotOf = (limit: number, totals: Totals): Snapshot => ({
  limit,
  spent: totals.spent,
  uncertain: totals.uncertain,
  reserved: totals.reserved,
  available: limit - totals.spent - totals.reserved,
  closed: totals.closed,
  accounts: totals.accounts,
})

/** `totals` with `spent` (and `uncertain`) more counted under the reservation's account, if any. */
const charge = (totals: Totals, reservation: Reservation, spent: number, uncertain: number): Totals => {
  const account = reservation.account
  if (account === undefined || spent === 0) return totals
  const before = totals.accounts.get(account) ?? { spent: 0, uncertain: 0 }
  return {
    ...totals,
    accounts: new Map(totals.accounts).set(account, {
      spent: before.spent + spent,
      uncertain: before.uncertain + uncertain,
    }),
  }
}

export const make = (limit: number): Effect.Effect<CreditBudgetService> =>
  Effect.map(
    Ref.make<Totals>({ spent: 0, uncertain: 0, reserved: 0, closed: false, accounts: new Map() }),
    (totals) => {
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
          Ref.update(totals, (current) =>
            charge(
              {
                ...current,
                spent: current.spent + charged,
                reserved: current.reserved - reservation.credits,
              },
              reservation,
              charged,
              0,
            ),
          ),
        release: (reservation) =>
          Ref.update(totals, (current) => ({ ...current, reserved: current.reserved - reservation.credits })),
        forfeit: (reservation) =>
          Ref.update(totals, (current) =>
            charge(
              {
                ...current,
                spent: current.spent + reservation.credits,
                uncertain: current.uncertain + reservation.credits,
                reserved: current.reserved - reservation.credits,
              },
              reservation,
              reservation.credits,
              reservation.credits,
            ),
          ),
        close: Ref.update(totals, (current) => ({ ...current, closed: true })),
        snapshot: Effect.map(Ref.get(totals), (current) => snapshotOf(limit, current)),
      })
    },
  )

export const layer = (limit: number): Layer.Layer<CreditBudget> => Layer.effect(CreditBudget, make(limit))

/**
 * The budget as one account sees it (a stream of a run): every reservation it takes is counted
 * under `name` when it settles or is forfeited (`Snapshot.accounts`), in the budget's one count.
 */
export const account = (budget: CreditBudgetService, name: string): CreditBudgetService => {
  const named = (reservation: Option.Option<Reservation>) =>
    Option.map(reservation, (held): Reservation => ({ ...held, account: name }))
  return {
    ...budget,
    reserve: (credits) => Effect.map(budget.reserve(credits), named),
    reserveUpTo: (credits) => Effect.map(budget.reserveUpTo(credits), named),
  }
}

/** Where a budget's mark is written ahead of its spending (`writtenAhead`). */
export interface WriteAhead {
  /** The credits a mark covers beyond the last: one write per block, not per request. */
  readonly block: number
  /**
   * Records `mark` durably (committed where a later process reads it); false when it could not:
   * then no credit past the mark written before is spent (the budget closes).
   */
  readonly record: (mark: number) => Effect.Effect<boolean>
}

/**
 * The budget with its reservations written ahead: no reservation is granted that would take
 * spent + reserved past the last mark `record`ed, and a reservation that would records a new mark
 * first (the next block boundary at or past what it needs, at most the limit). So whatever the
 * process is doing when it is killed, the last mark recorded is at least what it may have been
 * charged, and at most one block more than what it had reserved. Settling, releasing and
 * forfeiting never raise spent + reserved, so they need no mark. The check and the reservation
 * are one step (a semaphore), so requests side by side cannot pass the mark together.
 */
export const writtenAhead = (
  budget: CreditBudgetService,
  writeAhead: WriteAhead,
): Effect.Effect<CreditBudgetService> =>
  Effect.gen(function* () {
    const mark = yield* Ref.make(0)
    const lock = yield* Effect.makeSemaphore(1)
    const block = Math.max(1, Math.floor(writeAhead.block))
    /**
     * Makes the mark cover `needed` more credits than spent + reserved (`upTo`: as much of them as
     * the budget has left); false if it could not be recorded.
     */
    const cover = (needed: number, upTo: boolean) =>
      Effect.gen(function* () {
        const snapshot = yield* budget.snapshot
        const asked = snapshot.spent + snapshot.reserved + needed
        // A closed budget, or one that cannot hold an exact reservation, refuses it: nothing to write.
        if (snapshot.closed || (!upTo && asked > snapshot.limit)) return true
        const want = Math.min(asked, snapshot.limit)
        if (want <= (yield* Ref.get(mark))) return true
        const next = Math.min(snapshot.limit, Math.ceil(want / block) * block)
        const recorded = yield* writeAhead.record(next)
        if (!recorded) {
          yield* budget.close
          return false
        }
        yield* Ref.set(mark, next)
        return true
      })
    const guarded =
      (take: (credits: number) => Effect.Effect<Option.Option<Reservation>>, upTo: boolean) =>
      (credits: number) =>
        lock.withPermits(1)(
          Effect.flatMap(cover(credits, upTo), (covered) =>
            covered ? take(credits) : Effect.succeed(Option.none<Reservation>()),
          ),
        )
    return {
      ...budget,
      reserve: guarded(budget.reserve, false),
      // It may be granted less than asked (what the budget has left), never more.
      reserveUpTo: guarded(budget.reserveUpTo, true),
    }
  })
