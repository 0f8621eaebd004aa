/**
 * The rejected records of a purchase, against what its pages carried: a bad record now and then is
 * kept apart (Page.ts, the `_rejected` stream) and the read goes on, but a purchase whose records
 * mostly do not decode has met a change in the provider's records, not a bad record: every record
 * bought from then on would be paid for and land in no table, and be listed, bought and rejected
 * again by every later run. So once at least a page's worth of its records (`floor`) is rejected and
 * they are more than half of what its pages carried, the purchase stops buying: the run's budget
 * closes (as on a stop request, so the pages in flight land and are kept), and once they have, the
 * purchase fails with a Decode error (system_error) naming the first bad value.
 */
import { ApiError, CreditBudget, Page } from "@salesintel/core"
import * as Effect from "effect/Effect"
import * as Option from "effect/Option"
import * as Ref from "effect/Ref"
import * as Stream from "effect/Stream"

/** Rejected records a purchase takes before its share can stop it: a page's worth. */
export const floor = 50

interface Seen {
  readonly records: number
  readonly rejected: number
  readonly first: Page.Rejected | undefined
}

/** A page's worth rejected, and more than half of what the pages carried. */
const tips = (seen: Seen): boolean => seen.rejected >= floor && seen.rejected * 2 > seen.records

export interface Watch {
  /** Counts a page's records; on the page that tips the purchase, stops its buying. */
  readonly after: (page: {
    readonly items: ReadonlyArray<unknown>
    readonly rejected: ReadonlyArray<Page.Rejected>
  }) => Effect.Effect<void>
  /** The error the purchase ends with, once it tipped. */
  readonly tipped: Effect.Effect<Option.Option<ApiError.Decode>>
  /** Nothing, or (after the purchase's last output) its failure. */
  readonly raised: Stream.Stream<never, ApiError.Decode>
}

/** Why a shortfall said after the purchase tipped was not bought. */
export const because = "its records stopped decoding (the error after this says why)"

export const watch = (endpoint: ApiError.Endpoint): Effect.Effect<Watch> =>
  Effect.gen(function* () {
    const seen = yield* Ref.make<Seen>({ records: 0, rejected: 0, first: undefined })
    const tipped = yield* Ref.make(Option.none<ApiError.Decode>())
    // No more is reserved: every stream ends at its next request, and what is in flight lands.
    const stopBuying = Effect.flatMap(
      Effect.serviceOption(CreditBudget.CreditBudget),
      Option.match({ onNone: () => Effect.void, onSome: (budget) => budget.close }),
    )
    return {
      after: (page) =>
        Effect.flatMap(
          Ref.modify(seen, (before): [Option.Option<ApiError.Decode>, Seen] => {
            const now: Seen = {
              records: before.records + Page.recordsOn(page),
              rejected: before.rejected + page.rejected.length,
              first: before.first ?? page.rejected[0],
            }
            // Once: on the page that tips it.
            const stops = tips(now) && !tips(before) && now.first !== undefined
            return [
              stops && now.first !== undefined
                ? Option.some(stopped(endpoint, now, now.first))
                : Option.none(),
              now,
            ]
          }),
          Option.match({
            onNone: () => Effect.void,
            onSome: (error) => Effect.zipRight(Ref.set(tipped, Option.some(error)), stopBuying),
          }),
        ),
      tipped: Ref.get(tipped),
      raised: Stream.unwrap(
        Effect.map(Ref.get(tipped), Option.match({ onNone: () => Stream.empty, onSome: Stream.fail })),
      ),
    }
  })

const stopped = (endpoint: ApiError.Endpoint, seen: Seen, first: Page.Rejected) =>
  new ApiError.Decode({
    endpoint,
    path: first.path,
    description: `${first.description}; ${seen.rejected} of the ${seen.records} records bought so far did not decode: the provider's records have changed shape, so the read stopped buying (those bought are kept whole in _rejected)`,
  })
