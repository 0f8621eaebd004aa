/**
 * Each search's last read, kept in the contacts state (State.SearchRead) so a quick plan can say
 * what a search would buy without listing its ids: of its reachable matches now, those its last
 * read left held are taken as held still, and of those, the share of the whole bought set that is
 * due again (refresh_after_days) as stale. What it cannot know is said with the estimate (a tally
 * the plan turns into bounds): contacts that left the search while as many others joined it, and
 * which of the held contacts are the stale ones.
 */
import type { CreditBudget, Partitioner } from "@salesintel/core"
import * as Effect from "effect/Effect"
import * as Ref from "effect/Ref"
import * as Stream from "effect/Stream"
import { canonicalJson } from "../../CanonicalJson.ts"
import type { ContactSearch } from "../../Config.ts"
import * as Output from "../../read/Output.ts"
import type { HeldAtStart, SearchRead } from "./ContactsState.ts"
import type { ContactError, ContactOutput } from "./Context.ts"
import { searchWork } from "./Context.ts"

const reachableOf = (plan: Partitioner.Plan): number => plan.parts.reduce((sum, part) => sum + part.count, 0)

/**
 * A search's outputs, then its last read recorded in `searches`: its reachable matches and those
 * held at its end (all but what its shortfall left). A shortfall of unknown size leaves no record
 * (the plan then counts every match, an upper bound).
 */
export const recordedAtEnd = (
  searches: Ref.Ref<Readonly<Record<string, SearchRead>>>,
  search: ContactSearch,
  plan: Partitioner.Plan | undefined,
  outputs: Stream.Stream<ContactOutput, ContactError, CreditBudget.CreditBudget>,
): Stream.Stream<ContactOutput, ContactError, CreditBudget.CreditBudget> => {
  if (plan === undefined) return outputs
  const work = searchWork(search)
  return Stream.unwrap(
    Effect.map(Ref.make<Seen>({ left: 0, earlier: 0, due: 0 }), (seen) =>
      Stream.concat(
        Stream.tap(outputs, (output) => Ref.update(seen, (before) => seenAfter(before, output, work))),
        Stream.drain(
          Stream.fromEffect(
            Effect.flatMap(Ref.get(seen), (read) =>
              Ref.update(searches, (all) => recorded(all, search, reachableOf(plan), read)),
            ),
          ),
        ),
      ),
    ),
  )
}

/** What a search's outputs said: records its shortfalls left (undefined: unknown), and its listing's standing. */
interface Seen {
  readonly left: number | undefined
  readonly earlier: number
  readonly due: number
}

const seenAfter = (seen: Seen, output: ContactOutput, work: string): Seen => {
  if (output._tag === "Shortfall")
    return {
      ...seen,
      left: seen.left === undefined || output.records === undefined ? undefined : seen.left + output.records,
    }
  if (output._tag !== "Tally" || output.work !== work) return seen
  const { earlier = 0, new: fresh = 0, stale = 0 } = output.counts
  return { ...seen, earlier: seen.earlier + earlier, due: seen.due + earlier + fresh + stale }
}

/** The searches' last reads with `search`'s replaced by this one (none when what it left is unknown). */
const recorded = (
  all: Readonly<Record<string, SearchRead>>,
  search: ContactSearch,
  matches: number,
  seen: Seen,
): Readonly<Record<string, SearchRead>> => {
  const { [search.name]: before, ...others } = all
  if (seen.left === undefined) return others
  const filters = canonicalJson(search.filters)
  // A read with nothing to buy says nothing of the overlap: the last one measured stands.
  const overlap =
    seen.due > 0
      ? { earlier: seen.earlier, of: seen.due }
      : before?.filters === filters
        ? before.overlap
        : undefined
  const read: SearchRead = {
    filters,
    matches,
    held: Math.max(0, matches - seen.left),
    ...(overlap === undefined ? {} : { overlap }),
  }
  return { ...others, [search.name]: read }
}

/** What a quick plan takes a search to hold, from its last read, and what it could not know. */
export interface HeldEstimate {
  /** Reachable matches taken as held and fresh: the listing passes over these. */
  readonly fresh: number
  /** Taken as held and stale (due again), at the bought set's share of stale keys. */
  readonly stale: number
  /** The fewest of its held that can be stale: the set's stale keys less those outside this search. */
  readonly staleAtLeast: number
  /** Of the rest (stale and new), those taken as bought by an earlier search, at its last overlap. */
  readonly earlier: number
}

/** The estimate for `search` with `reachable` matches now, or undefined when its last read is unknown. */
export const heldEstimate = (
  last: SearchRead | undefined,
  search: ContactSearch,
  reachable: number,
  held: HeldAtStart,
): HeldEstimate | undefined => {
  if (last === undefined || last.filters !== canonicalJson(search.filters)) return undefined
  // The held can be no more than the set holds now (rows deleted since), nor than the matches now.
  const covered = Math.min(last.held, reachable, held.inState)
  const share = held.inState === 0 ? 0 : held.staleInState / held.inState
  const stale = Math.round(covered * share)
  const overlap =
    last.overlap === undefined || last.overlap.of === 0 ? 0 : last.overlap.earlier / last.overlap.of
  return {
    fresh: covered - stale,
    stale,
    earlier: Math.round((reachable - covered + stale) * overlap),
    staleAtLeast: Math.min(stale, Math.max(0, held.staleInState - (held.inState - covered))),
  }
}

/**
 * The tally of a quick plan's estimate for `search`: `estimatedHeld` (the listing passes over
 * them), `estimatedStale`, and how far the stale may be over (`staleOver`); or, without a last
 * read, `unknownLastRead` (every match counted, an upper bound).
 */
export const estimateTally = (search: ContactSearch, estimate: HeldEstimate | undefined): ContactOutput =>
  estimate === undefined
    ? Output.tally(searchWork(search), { unknownLastRead: 1 })
    : Output.tally(searchWork(search), {
        estimatedHeld: estimate.fresh,
        estimatedStale: estimate.stale,
        staleOver: estimate.stale - estimate.staleAtLeast,
        estimatedEarlier: estimate.earlier,
      })

/** A made-up listing (a quick plan) less its first `skip` ids: those taken as held and fresh, or bought earlier. */
export const madeUpLess = <E, R>(
  ids: Stream.Stream<ReadonlyArray<string>, E, R>,
  skipped: number,
): Stream.Stream<ReadonlyArray<string>, E, R> =>
  Stream.mapAccum(ids, skipped, (skip, page) => {
    const dropped = Math.min(skip, page.length)
    return [skip - dropped, page.slice(dropped)] as const
  })
