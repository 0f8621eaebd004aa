/**
 * The stream's estimate, from free work done before its first credited request, so that ESTIMATE
 * and the progress line show the whole run's total from the start: every search's partitions
 * (sized with the free counts) and the known contacts due a lookup (one contact each, as a rule). Each piece's estimate is revised to what
 * it read once it ends.
 */
import { CreditBudget, type Partitioner } from "@salesintel/core"
import * as Chunk from "effect/Chunk"
import * as Effect from "effect/Effect"
import * as Ref from "effect/Ref"
import type * as Scope from "effect/Scope"
import * as Stream from "effect/Stream"
import * as PagedQuery from "../../components/PagedQuery.ts"
import * as Output from "../../read/Output.ts"
import { type ContactError, type ContactOutput, type Context, searchWork } from "./Context.ts"
import * as Known from "./Known.ts"
import type * as KnownDone from "./KnownDone.ts"
import * as KnownSources from "./KnownSources.ts"

export interface Prepared {
  readonly plans: ReadonlyMap<string, Partitioner.Plan>
  /**
   * The known contacts' identities due a lookup, every row checked; undefined when a stop was
   * requested before the stream began (nothing was checked or looked up).
   */
  readonly knownDue: number | undefined
}

/**
 * The free work of a read; skipped when a stop was requested before the stream began. What it
 * looked up in the bought set is kept until the scope (the read) closes.
 */
export const prepare = (
  context: Context,
  emailsDone: KnownDone.KnownDone,
): Effect.Effect<Prepared, ContactError, CreditBudget.CreditBudget | Scope.Scope> =>
  Effect.gen(function* () {
    const budget = yield* CreditBudget.CreditBudget
    const searches = context.config.contacts?.searches ?? []
    if ((yield* budget.snapshot).closed) return { plans: new Map(), knownDue: undefined } satisfies Prepared
    // Every search sized at the same time: one latency or so for all, not one per search (the
    // client's rate limit and in-flight gate pace the requests); the known contacts' rows checked
    // beside them, before the first credit.
    const plans = Effect.forEach(
      searches,
      (search) =>
        Effect.map(
          PagedQuery.plan({
            client: context.client,
            filters: search.filters,
            concurrency: context.config.concurrency,
          }),
          (plan) => [search.name, plan] as const,
        ),
      { concurrency: "unbounded" },
    )
    const settings = context.config.contacts
    const knownDue =
      settings === undefined || !KnownSources.configured(settings)
        ? Effect.succeed(0)
        : KnownSources.check(settings, emailsDone)
    const [planned, due] = yield* Effect.all([plans, knownDue], { concurrency: 2 })
    return { plans: new Map(planned), knownDue: due } satisfies Prepared
  })

/** The free work's figures, as tallies: each search's partitions and counts (the known contacts' come as they end: Known.ts). */
export const preparedTallies = (context: Context, prepared: Prepared): ReadonlyArray<ContactOutput> => {
  const searches = (context.config.contacts?.searches ?? []).flatMap((search) => {
    const plan = prepared.plans.get(search.name)
    if (plan === undefined) return []
    return [
      Output.tally(searchWork(search), {
        matches: plan.total,
        partitions: plan.parts.length,
        unreachable: plan.unsplittable.reduce((sum, part) => sum + part.count, 0),
        freeRequests: plan.countRequests,
      }),
    ]
  })
  return searches
}

/** Records a full refresh of the search still has to read from `position`. */
const unreadRecords = (
  context: Context,
  name: string,
  plan: Partitioner.Plan,
  position: PagedQuery.Position,
) =>
  plan.parts.reduce((sum, part) => {
    const key = PagedQuery.partKey(name, part.filters)
    if (position.completed.includes(key)) return sum
    return sum + Math.max(0, part.count - PagedQuery.recordsRead(position, key, context.config.page_size))
  }, 0)

/**
 * What an incremental read of a search will buy, at least: its reachable matches less every
 * contact already bought and fresh (exact on a first run, when nothing is bought).
 */
const incrementalEstimate = (context: Context, plan: Partitioner.Plan): number =>
  Math.max(0, plan.parts.reduce((sum, part) => sum + part.count, 0) - context.known.countFresh())

/**
 * Each search's estimate, then the emails', within what the budget has left, in read order: a full
 * refresh reads what its partitions hold past its position, an incremental read buys what is not
 * bought and fresh (an upper bound where searches overlap, revised as each one ends).
 */
export const estimates = (
  context: Context,
  prepared: Prepared,
  position: PagedQuery.Position,
  incremental: boolean,
  available: number,
): ContactOutput => {
  const searches = context.config.contacts?.searches ?? []
  const wanted = [
    ...searches.map((search): readonly [string, number] => {
      const plan = prepared.plans.get(search.name)
      if (plan === undefined) return [searchWork(search), 0]
      return [
        searchWork(search),
        incremental
          ? incrementalEstimate(context, plan)
          : unreadRecords(context, search.name, plan, position),
      ]
    }),
    // At most one contact bought for each identity due, as a rule (revised as the lookups end).
    ...(prepared.knownDue === undefined ? [] : [[Known.work, prepared.knownDue] as const]),
  ]
  const granted = wanted.reduce<{ left: number; byKey: ReadonlyArray<readonly [string, number]> }>(
    ({ left, byKey }, [key, records]) => {
      const within = Math.min(left, records)
      return { left: left - within, byKey: [...byKey, [key, within]] }
    },
    { left: available, byKey: [] },
  )
  return Output.estimates(granted.byKey)
}

/** `outputs`, then an estimate under `key` revised to the records they held. */
export const revisedAtEnd = (
  key: string,
  outputs: Stream.Stream<ContactOutput, ContactError, CreditBudget.CreditBudget>,
) =>
  Stream.unwrap(
    Effect.map(Ref.make(0), (records) =>
      Stream.concat(
        outputs.pipe(
          // Counted a chunk at a time: a tap per output would cut the stream into chunks of one.
          Stream.mapChunksEffect((chunk) =>
            Effect.as(
              Ref.update(
                records,
                (n) => n + Chunk.reduce(chunk, 0, (sum, output) => sum + (output._tag === "Record" ? 1 : 0)),
              ),
              chunk,
            ),
          ),
        ),
        Stream.fromEffect(Effect.map(Ref.get(records), (read) => Output.estimate(read, key))),
      ),
    ),
  )
