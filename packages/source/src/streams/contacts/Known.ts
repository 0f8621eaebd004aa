/**
 * Known contacts enriched: each identity due (contacts.emails, contacts.known, a file's rows, a
 * query's rows: KnownSources.ts) is looked up with the free preview, and the contacts it matches
 * that are not bought yet (by a search, an earlier identity or an earlier run) are bought by
 * match_ids through the purchase component. An identity is done once every contact it matches is
 * in the bought set (or it matched no one: tallied, named, never charged).
 *
 * Streamed a chunk of identities at a time (look up, buy, mark done, checkpoint), so 100,000
 * identities hold one chunk's lookups in memory, never all of them. The plan stays exact: it is
 * this read, run dry (read/CostPlan.ts), and every lookup is free.
 */
import { type ApiError, type Client, CreditBudget, Limits, Pager } from "@salesintel/core"
import * as Chunk from "effect/Chunk"
import * as Effect from "effect/Effect"
import * as Ref from "effect/Ref"
import * as Stream from "effect/Stream"
import { KeyTable } from "../../bought/KeyTable.ts"
import * as Output from "../../read/Output.ts"
import { buyNew, type ContactError, type ContactOutput, type Context } from "./Context.ts"
import * as Identity from "./Identity.ts"
import type * as KnownDone from "./KnownDone.ts"
import * as KnownSources from "./KnownSources.ts"

/** The work known contacts are tallied and estimated under (the plan's "emails" section, as it was named first). */
export const work = "emails"

/** Identities looked up, then bought, together. */
const chunkSize = 500

export interface Lookup {
  readonly identity: Identity.Identity
  readonly key: string
  /** The match ids of the contacts the identity matches. */
  readonly ids: ReadonlyArray<string>
  /** The listing was stopped (a stop request closed the budget) before it ended. */
  readonly refused: boolean
  /** Pages of the free preview it took. */
  readonly pages: number
}

const previewed = (
  client: Client.SalesIntelClientService,
  filters: Parameters<Client.SalesIntelClientService["previewPeople"]>[0],
) =>
  Pager.stream({
    fetch: (paging) => client.previewPeople(filters, paging),
    credited: false,
    pageSize: Limits.maxPageSize,
  }).pipe(
    Stream.runCollect,
    Effect.map((events) => {
      const all = Chunk.toReadonlyArray(events)
      const pages = all.flatMap((event) => (event._tag === "PageFetched" ? [event.page] : []))
      return {
        ids: pages.flatMap((page) => page.items.map((item) => item.record.match_id)),
        refused: all.some((event) => event._tag === "BudgetExhausted"),
        pages: pages.length,
      }
    }),
  )

/** The contacts one identity matches, from the free preview (every page). */
const lookupOne = (context: Context, identity: Identity.Identity, matchOnJobHistory: boolean) =>
  Effect.map(previewed(context.client, Identity.filtersOf(identity, matchOnJobHistory)), (found) => ({
    identity,
    key: Identity.keyOf(identity),
    ...found,
  }))

/** Match ids looked up a page's worth at a time: the answer maps back by match_id. */
const lookupMatchIds = (context: Context, identities: ReadonlyArray<Identity.Identity>) =>
  Effect.map(
    previewed(context.client, {
      match_ids: identities.flatMap((identity) => (identity.kind === "match_id" ? [identity.match_id] : [])),
    }),
    (found): ReadonlyArray<Lookup> => {
      const matched = new Set(found.ids)
      return identities.map((identity, index) => ({
        identity,
        key: Identity.keyOf(identity),
        ids: identity.kind === "match_id" && matched.has(identity.match_id) ? [identity.match_id] : [],
        refused: found.refused,
        pages: index === 0 ? found.pages : 0,
      }))
    },
  )

const notLookedUp = (identity: Identity.Identity): Lookup => ({
  identity,
  key: Identity.keyOf(identity),
  ids: [],
  refused: true,
  pages: 0,
})

/** One chunk of identities looked up, at the client's pace. */
const lookUp = (
  context: Context,
  chunk: ReadonlyArray<Identity.Identity>,
): Effect.Effect<ReadonlyArray<Lookup>, ApiError.ApiError, CreditBudget.CreditBudget> => {
  const settings = context.config.contacts
  const matchOnJobHistory = settings?.match_on_job_history ?? true
  const byMatchId = chunk.filter((identity) => identity.kind === "match_id")
  const batches = Array.from({ length: Math.ceil(byMatchId.length / Limits.maxPageSize) }, (_, index) =>
    byMatchId.slice(index * Limits.maxPageSize, (index + 1) * Limits.maxPageSize),
  )
  return Effect.map(
    Effect.all(
      [
        Effect.forEach(
          chunk.filter((identity) => identity.kind !== "match_id"),
          (identity) => lookupOne(context, identity, matchOnJobHistory),
          { concurrency: context.config.concurrency },
        ),
        Effect.forEach(batches, (batch) => lookupMatchIds(context, batch), { concurrency: 4 }),
      ],
      { concurrency: 2 },
    ),
    ([each, batched]) => [...each, ...batched.flat()],
  )
}

/** Whether an identity names someone forgotten (salesintel forget): by email, profile URL or match id. */
const isForgotten = (context: Context, identity: Identity.Identity): boolean => {
  const forgotten = context.suppressions
  if (forgotten.empty) return false
  switch (identity.kind) {
    case "email":
      return forgotten.has("email", identity.email)
    case "linkedin":
      return forgotten.has("linkedin_url", identity.linkedin_url)
    case "match_id":
      return forgotten.has("match_id", identity.match_id)
    case "name":
      // A name is not kept as a suppression; what it matches is tested by match id before it is bought.
      return false
  }
}

/** What the lookups came to over the read: folded a chunk at a time, a sample of those matching no one. */
interface Summary {
  readonly lookedUp: number
  readonly unmatched: number
  readonly sample: ReadonlyArray<string>
  readonly pages: number
  readonly refused: boolean
}

const sampled = 5

const folded = (summary: Summary, lookups: ReadonlyArray<Lookup>): Summary => {
  const none = lookups.filter((lookup) => lookup.ids.length === 0 && !lookup.refused)
  return {
    lookedUp: summary.lookedUp + lookups.filter((lookup) => !lookup.refused).length,
    unmatched: summary.unmatched + none.length,
    sample: [
      ...summary.sample,
      ...none.slice(0, sampled).map((lookup) => Identity.describe(lookup.identity)),
    ].slice(0, sampled),
    pages: summary.pages + lookups.reduce((sum, lookup) => sum + lookup.pages, 0),
    refused: summary.refused || lookups.some((lookup) => lookup.refused),
  }
}

/**
 * One chunk's purchase: the match ids its lookups found, bought once each by the purchase
 * component (which diffs them against the bought set: pay-once, refresh_after_days), then the
 * identities whose every contact is now bought marked done, and a checkpoint. The one place a
 * looked-up match id becomes a purchase: a filter of ids not to buy goes on `ids` here.
 */
const buyChunk = (
  context: Context,
  done: KnownDone.KnownDone,
  lookups: ReadonlyArray<Lookup>,
): Stream.Stream<ContactOutput, ContactError, CreditBudget.CreditBudget> =>
  Stream.unwrapScoped(
    Effect.gen(function* () {
      const looked = lookups.filter((lookup) => !lookup.refused)
      const ids = looked.flatMap((lookup) => lookup.ids)
      // Where these contacts stand is kept until the chunk is marked done (the ledger's answers).
      yield* context.known.resolveScoped(ids)
      const where = { search: null, detail: "contacts known enrichment", work }
      const refused = looked.length < lookups.length
      const bought = buyNew(context, Stream.make(ids), where, Effect.succeed(refused))
      // Marked done once bought (in the state, or as records the checkpoint after them commits).
      const markDone = Stream.unwrap(
        Effect.sync(() => {
          const recorded = done.record(
            looked
              .filter((lookup) => lookup.ids.every((id) => !context.known.due(id)))
              .map((lookup) => lookup.key),
          )
          return Stream.concat(Stream.fromIterable(recorded), Stream.fromEffect(context.checkpoint))
        }),
      )
      return Stream.concat(bought, markDone)
    }),
  )

/** The INFO line and tally once every chunk is done: how many looked up, and who matched no one. */
const closing = (summary: Summary, configured: number, due: number): ReadonlyArray<ContactOutput> => {
  const named =
    summary.unmatched === 0
      ? ""
      : ` (${summary.sample.join(", ")}${summary.unmatched > summary.sample.length ? ` and ${summary.unmatched - summary.sample.length} more` : ""}; nothing was charged for them)`
  return [
    Output.log(
      "INFO",
      `known contacts: ${summary.lookedUp} looked up, ${summary.unmatched} matched no one${named}, ${summary.lookedUp - summary.unmatched} matched`,
    ),
    Output.tally(work, { configured, lookedUp: due, freeRequests: summary.pages }),
  ]
}

/**
 * The known contacts' lookups and purchases, a chunk at a time; `due` is how many identities the
 * check before the read found due (KnownSources.check).
 */
export const enrichKnown = (context: Context, done: KnownDone.KnownDone, due: number) =>
  Stream.unwrap(
    Effect.gen(function* () {
      const settings = context.config.contacts
      if (settings === undefined || !KnownSources.configured(settings)) return Stream.empty
      if (due === 0)
        return Stream.make<Array<ContactOutput>>(
          Output.log("INFO", "known contacts: every identity is up to date"),
        )
      const summary = yield* Ref.make<Summary>({
        lookedUp: 0,
        unmatched: 0,
        sample: [],
        pages: 0,
        refused: false,
      })
      // Each identity once: the keys seen, packed (KeyTable): at 100,000 emails a Set of their
      // strings held twice the bytes, for the whole run.
      const seen = new KeyTable()
      const forgotten = yield* Ref.make(0)
      const budget = yield* CreditBudget.CreditBudget
      const chunks = KnownSources.identities(settings).pipe(
        Stream.filter((identity) => {
          const before = seen.size
          return seen.add(Identity.keyOf(identity)) >= before
        }),
        // Those due, a chunk at a time (one lookup each where the destination keeps them).
        Stream.grouped(chunkSize),
        Stream.mapEffect((chunk) =>
          Effect.map(done.dueOf(Chunk.toReadonlyArray(chunk).map(Identity.keyOf)), (isDue) =>
            Chunk.filter(chunk, (identity) => isDue.has(Identity.keyOf(identity))),
          ),
        ),
        Stream.flattenChunks,
        // A forgotten person is not even looked up: whatever they match is never to be bought.
        Stream.filterEffect((identity) =>
          isForgotten(context, identity)
            ? Effect.as(
                Ref.update(forgotten, (n) => n + 1),
                false,
              )
            : Effect.succeed(true),
        ),
        Stream.grouped(chunkSize),
      )
      const purchases = chunks.pipe(
        // A stop request closes the budget: a chunk after it is not looked up (it stays due).
        Stream.mapEffect((chunk) =>
          Effect.flatMap(budget.snapshot, (snapshot) =>
            snapshot.closed
              ? Effect.succeed(Chunk.toReadonlyArray(chunk).map(notLookedUp))
              : lookUp(context, Chunk.toReadonlyArray(chunk)),
          ),
        ),
        Stream.tap((lookups) => Ref.update(summary, (now) => folded(now, lookups))),
        Stream.flatMap((lookups) => buyChunk(context, done, lookups)),
      )
      const end = Stream.fromIterableEffect(
        Effect.map(Effect.zip(Ref.get(summary), Ref.get(forgotten)), ([now, suppressed]) => [
          ...(suppressed === 0 ? [] : [Output.tally(work, { suppressed })]),
          ...closing(now, seen.size, due),
        ]),
      )
      return Stream.concat(purchases, end)
    }),
  )
