/**
 * The order in which a read's credited streams spend: in turn, in catalog order (a substream right
 * after its parent). Each begins once the one before has reserved all it will
 * (ReadInput.reservedAll) or ended, so the first round trip of the next overlaps the last of the
 * one before; and a batch the budget cannot cover whole waits for the streams before to end
 * (`budgetInTurn`), so the budget goes to them in that order, as the plan (the same read, run
 * dry) counts it. A substream begins once its parent ended: its keys are the parent's records.
 */
import type { Catalog } from "@salesintel/airbyte"
import type { CreditBudget } from "@salesintel/core"
import * as Context from "effect/Context"
import * as Deferred from "effect/Deferred"
import * as Effect from "effect/Effect"
import * as Exit from "effect/Exit"
import * as Option from "effect/Option"
import * as Stream from "effect/Stream"

/**
 * What a credited stream runs once it will reserve no more credits: the next credited stream may
 * begin. The engine provides it to the stream it reads (Read.ts); the purchase component
 * (Purchase.ts) hands it to the stream's last purchase alone (`Purchase.inOrder`), whose queries
 * run it once their planned pages all have their reservation. A stream never sees it; one that
 * never runs it hands over when it ends.
 */
export class HandOver extends Context.Tag("@salesintel/source/read/HandOver")<
  HandOver,
  Effect.Effect<void>
>() {}

/** A credited stream's place in the turn; a free stream has none. */
export interface Turn {
  /** The first credited stream: nothing before it to wait for. */
  readonly first: boolean
  /** The stream will reserve no more credits: the next credited stream may begin. */
  readonly handOver: Effect.Effect<void>
  /** Every credited stream before this one has ended. */
  readonly earlierEnded: Effect.Effect<void>
  /** The stream ended, however: it hands over if it had not, and says it ended. */
  readonly settled: Effect.Effect<void>
  /** The stream failed (its failure kept): nothing more is bought, the free streams stop. */
  readonly failed: Effect.Effect<void>
}

/**
 * A stream's budget once the one before may still have requests in flight (it has reserved all it
 * will), and what those hold may come back (a last page reserves a full page; a definite refusal
 * is released): a batch the budget cannot cover whole (`reserveUpTo`) is asked again once
 * `earlierEnded`, so the credits go to the streams in their order, as if each began after the one
 * before ended. `reserve` (a page or a retry, asked under a permit of the in-flight gate) does not
 * wait: it could hold a permit the stream before needs.
 */
export const budgetInTurn = (
  budget: CreditBudget.CreditBudgetService,
  earlierEnded: Effect.Effect<void>,
): CreditBudget.CreditBudgetService => ({
  ...budget,
  // Uninterruptible but for the wait: a reservation taken is always returned or released.
  reserveUpTo: (credits) =>
    Effect.uninterruptibleMask((restore) =>
      Effect.flatMap(budget.reserveUpTo(credits), (first) =>
        Option.isSome(first) && first.value.credits === credits
          ? Effect.succeed(first)
          : Effect.gen(function* () {
              if (Option.isSome(first)) yield* budget.release(first.value)
              if ((yield* budget.snapshot).closed) return Option.none<CreditBudget.Reservation>()
              yield* restore(earlierEnded)
              return yield* budget.reserveUpTo(credits)
            }),
      ),
    ),
})

export interface InTurnOptions<A, E, R> {
  /** The credited streams, in catalog order. */
  readonly entries: ReadonlyArray<Catalog.ConfiguredStream>
  /** A substream's parent, by name. */
  readonly parentOf: ReadonlyMap<string, string>
  /** A credited stream failed: the budget is closed and the free streams stop. */
  readonly failed: Effect.Effect<void>
  /** One stream read in its turn (built when its turn comes, so a stop or a failure before it is seen). */
  readonly read: (entry: Catalog.ConfiguredStream, turn: Turn) => Stream.Stream<A, E, R>
}

/** The credited streams, each as `read` makes it, each begun in its turn. */
export const inTurn = <A, E, R>(options: InTurnOptions<A, E, R>) =>
  Effect.gen(function* () {
    const entries = parentsFirst(options.entries, options.parentOf)
    const handedOver = yield* Effect.forEach(entries, () => Deferred.make<void>())
    const ended = yield* Effect.forEach(entries, () => Deferred.make<void>())
    const indexOf = (name: string | undefined) => entries.findIndex((entry) => entry.stream.name === name)
    return entries.map((entry, index) => {
      const mine = { handedOver: handedOver[index], ended: ended[index] }
      const handOver = mine.handedOver === undefined ? Effect.void : Deferred.done(mine.handedOver, Exit.void)
      const turn: Turn = {
        first: index === 0,
        handOver,
        earlierEnded: Effect.forEach(ended.slice(0, index), Deferred.await, { discard: true }),
        settled: Effect.zipRight(
          handOver,
          mine.ended === undefined ? Effect.void : Deferred.done(mine.ended, Exit.void),
        ),
        failed: options.failed,
      }
      // A substream begins once its parent ended (its keys are the parent's records), else in turn.
      const before = ended[indexOf(options.parentOf.get(entry.stream.name))] ?? handedOver[index - 1]
      return before === undefined
        ? options.read(entry, turn)
        : Stream.unwrap(Effect.as(Deferred.await(before), options.read(entry, turn)))
    })
  })

/** The credited streams in catalog order, except that a substream comes right after its parent. */
const parentsFirst = (
  entries: ReadonlyArray<Catalog.ConfiguredStream>,
  parentOf: ReadonlyMap<string, string>,
): ReadonlyArray<Catalog.ConfiguredStream> => {
  const children = (name: string) => entries.filter((entry) => parentOf.get(entry.stream.name) === name)
  const placed = (entry: Catalog.ConfiguredStream): ReadonlyArray<Catalog.ConfiguredStream> => [
    entry,
    ...children(entry.stream.name).flatMap(placed),
  ]
  const hasCreditedParent = (entry: Catalog.ConfiguredStream) =>
    entries.some((other) => other.stream.name === parentOf.get(entry.stream.name))
  return entries.filter((entry) => !hasCreditedParent(entry)).flatMap(placed)
}
