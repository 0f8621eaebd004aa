/**
 * The contacts stream, as a description: named searches and known contacts' enrichment (by email,
 * name and company domain, profile URL or match id: contacts/Known.ts), bought into ONE set
 * of contacts (contacts/ContactsState.ts), so a contact found by two searches, by a search and an email,
 * or by a full refresh and a later incremental read, is bought once, and a rerun over unchanged
 * data buys nothing. Its free work comes first (every search sized, every email looked up:
 * contacts/Estimates.ts), then its purchases in order: the searches (contacts/Searches.ts: the
 * credited search page by page, or the free listing's keys bought by match_ids), then the known
 * contacts' (contacts/Known.ts). What every purchase becomes (the diff against the bought set, the
 * checkpoints, the shortfall, the tallies, the stream's turn) is the purchase component's
 * (read/Purchase.ts).
 */
import { Streams } from "@salesintel/airbyte"
import { Client, type Contact, CreditBudget, type Partitioner } from "@salesintel/core"
import * as Effect from "effect/Effect"
import * as Ref from "effect/Ref"
import * as Stream from "effect/Stream"
import * as Suppression from "../bought/Suppression.ts"
import type { ContactSearch } from "../Config.ts"
import * as Purchase from "../read/Purchase.ts"
import type { ReadInput, StreamDefinition } from "../read/StreamDefinition.ts"
import { finish, heldAtStart, heldTally, type Start, startFrom } from "./contacts/ContactsState.ts"
import { type ContactError, type ContactOutput, type Context, searchWork } from "./contacts/Context.ts"
import { estimates, prepare, preparedTallies, revisedAtEnd } from "./contacts/Estimates.ts"
import * as Known from "./contacts/Known.ts"
import * as KnownSources from "./contacts/KnownSources.ts"
import { recordedAtEnd } from "./contacts/LastRead.ts"
import { listedSearch } from "./contacts/Listing.ts"
import { fullRefreshSearches, incrementalSearch } from "./contacts/Searches.ts"

/** A full refresh read by the listing is unfinished once any of its purchases fell short. */
const unfinishedWhenShort = <E, R>(
  unfinished: Ref.Ref<boolean>,
  outputs: Stream.Stream<ContactOutput, E, R>,
): Stream.Stream<ContactOutput, E, R> =>
  Stream.tap(outputs, (output) => (output._tag === "Shortfall" ? Ref.set(unfinished, true) : Effect.void))

/**
 * The searches' purchases. An incremental search after the first diffs against what the ones
 * before bought: one after another. A full refresh's searches are read in turn, overlapping; with
 * people forgotten it goes by the free listing instead (a credited page would carry them), each
 * search's listed contacts bought again, in turn.
 */
const searchPurchases = (
  context: Context,
  searches: ReadonlyArray<ContactSearch>,
  start: Start,
  plans: ReadonlyMap<string, Partitioner.Plan>,
  unfinished: Ref.Ref<boolean>,
) => {
  const each = (
    search: ContactSearch,
    outputs: Stream.Stream<ContactOutput, ContactError, CreditBudget.CreditBudget>,
  ) =>
    recordedAtEnd(start.searches, search, plans.get(search.name), revisedAtEnd(searchWork(search), outputs))
  if (!context.refreshAll)
    return Purchase.inOrder(
      searches.map((search) => each(search, incrementalSearch(context, search, plans.get(search.name)))),
    )
  if (!context.suppressions.empty)
    return Purchase.inOrder(
      searches.map((search) =>
        each(search, unfinishedWhenShort(unfinished, listedSearch(context, search, plans.get(search.name)))),
      ),
    )
  return fullRefreshSearches(context, searches, plans, start.position, unfinished, each)
}

const read = (input: ReadInput) =>
  // Scoped: what the free work looked up in the bought set is kept until the read ends.
  Stream.unwrapScoped(
    Effect.gen(function* () {
      const settings = input.config.contacts
      if (settings === undefined) return Stream.empty
      const incremental = input.syncMode === "incremental"
      const start = yield* startFrom(input)
      const held = heldAtStart(start.known)
      const context: Context = {
        config: input.config,
        client: yield* Client.SalesIntelClient,
        known: start.known,
        refreshAll: !incremental,
        fetchedAt: new Date(input.startedAt).toISOString(),
        checkpoint: start.stateNow(!incremental),
        lastReads: yield* Ref.get(start.searches),
        heldAtStart: held,
        suppressions: input.suppressed ?? Suppression.none,
        alsoInState: () => start.emailsDone.inState(),
      }
      const prepared = yield* prepare(context, start.emailsDone)
      const { available } = yield* (yield* CreditBudget.CreditBudget).snapshot
      const position = yield* Ref.get(start.position)
      const estimated = estimates(context, prepared, position, incremental, available)
      const opening = Stream.make(
        ...start.warnings,
        estimated,
        heldTally(held),
        ...preparedTallies(context, prepared),
      )
      const unfinished = yield* Ref.make(false)
      const searches = searchPurchases(context, settings.searches, start, prepared.plans, unfinished)
      // Stopped before the stream began: nothing checked, so nothing looked up.
      const known = revisedAtEnd(
        Known.work,
        prepared.knownDue === undefined
          ? Stream.empty
          : Known.enrichKnown(context, start.emailsDone, prepared.knownDue),
      )
      const purchases = Purchase.inOrder(KnownSources.configured(settings) ? [searches, known] : [searches])
      return Stream.concat(opening, Stream.concat(purchases, finish(start, incremental, unfinished)))
    }),
  )

export const contacts: StreamDefinition<Contact.Contact> = {
  stream: Streams.streams.contacts,
  credited: true,
  isConfigured: (config) =>
    config.contacts !== undefined &&
    (config.contacts.searches.length > 0 || KnownSources.configured(config.contacts)),
  configuredBy: "contacts.searches, contacts.emails or contacts.known (_file, _query)",
  read,
}
