/**
 * What every contacts path shares: the run's settings and client, the one bought set, the record
 * form, and the purchase by match id that the listing paths (a search's free listing, the emails)
 * end in.
 */
import { Streams } from "@salesintel/airbyte"
import type { ApiError, Client, Contact, CreditBudget, Page } from "@salesintel/core"
import * as Effect from "effect/Effect"
import * as Ref from "effect/Ref"
import * as Stream from "effect/Stream"
import type { LedgerError } from "../../bought/BoughtLedger.ts"
import type { BoughtSet } from "../../bought/BoughtSet.ts"
import type * as Suppression from "../../bought/Suppression.ts"
import type { ContactSearch, SourceConfig } from "../../Config.ts"
import type { KnownInputError } from "../../known/Rows.ts"
import * as Output from "../../read/Output.ts"
import * as Purchase from "../../read/Purchase.ts"
import type { HeldAtStart, SearchRead } from "./ContactsState.ts"

export type ContactOutput = Output.Output<Contact.Contact>

/**
 * What ends a contacts read: the provider's errors, the ledger's (bought/BoughtLedger.ts), or a
 * known contacts' file or query that cannot be read (known/Rows.ts).
 */
export type ContactError = ApiError.ApiError | LedgerError | KnownInputError

export interface Context {
  readonly config: SourceConfig
  readonly client: Client.SalesIntelClientService
  /** The contacts bought, by any path, in this run and before. */
  readonly known: BoughtSet
  /**
   * A full refresh: every path buys what it lists again (held or not), once in the run, so the
   * emails' contacts are read again like the searches' and none is deleted by the overwrite.
   */
  readonly refreshAll: boolean
  readonly fetchedAt: string
  /** The stream's state now. */
  readonly checkpoint: Effect.Effect<Output.Checkpoint>
  /** Each search's last read, as the state saved it (what a quick plan estimates from: LastRead.ts). */
  readonly lastReads: Readonly<Record<string, SearchRead>>
  /** The bought set as the read began. */
  readonly heldAtStart: HeldAtStart
  /**
   * The people forgotten (`salesintel forget`): a listed contact it names is never bought, and
   * while there are any the searches go by the free listing only (a credited page would carry them).
   */
  readonly suppressions: Suppression.Matcher
  /**
   * Entries of the identities looked up (the known contacts done), which every checkpoint of the
   * stream carries in the state beside the bought set: the purchases' checkpoint cadence counts
   * them (Purchase's `alongside`), or 100,000 of them written with every page made the state
   * written grow with the square of the records.
   */
  readonly alsoInState: () => number
}

/** Whether a contact was forgotten: where every purchase is decided (toBuy, buyNew). */
export const suppressed = (context: Context, id: string): boolean =>
  !context.suppressions.empty && context.suppressions.has("match_id", id)

export const contactRecord =
  (context: Context, search: string | null) =>
  (item: Page.Item<Contact.Contact>): Output.RecordOutput<Contact.Contact> =>
    Output.record(Streams.streams.contacts, item, {
      [Streams.addedFields.search]: search,
      [Streams.addedFields.fetchedAt]: context.fetchedAt,
    })

/** A search as logs and shortfalls name it. */
export const describeSearch = (search: ContactSearch): string => `contacts search "${search.name}"`

/** The work a search's tallies and estimates count under. */
export const searchWork = (search: ContactSearch): string => `search ${search.name}`

export const matchId = (contact: Contact.Contact): string => contact.match_id

/** The match_id of a contact bought whose record did not decode, when it carries one. */
export const rejectedMatchId = (raw: unknown): string | undefined =>
  Streams.keyOfRaw(Streams.streams.contacts, raw)

/** Whether a listed contact is to be bought (new or due; in a full refresh, any not bought in the run). */
export const toBuy = (context: Context, id: string): boolean =>
  !suppressed(context, id) && Purchase.toBuy(context.known, context.refreshAll, id)

/** The listed ids less the forgotten ones, which are counted in `skipped`. */
const unsuppressed = <E, R>(
  context: Context,
  listed: Stream.Stream<ReadonlyArray<string>, E, R>,
  skipped: Ref.Ref<number>,
): Stream.Stream<ReadonlyArray<string>, E, R> =>
  context.suppressions.empty
    ? listed
    : Stream.mapEffect(listed, (ids) => {
        const kept = ids.filter((id) => !suppressed(context, id))
        return Effect.as(
          Ref.update(skipped, (n) => n + ids.length - kept.length),
          kept,
        )
      })

/**
 * Buys the listed ids not bought yet (each once, in the order listed) by match_ids: the purchase
 * component's diff, tally, shortfall and checkpoints (Purchase.keys). `listingStopped`: the free
 * listing itself was stopped, so more may remain.
 */
export const buyNew = (
  context: Context,
  listed: Stream.Stream<ReadonlyArray<string>, ContactError, CreditBudget.CreditBudget>,
  where: { readonly search: string | null; readonly detail: string; readonly work: string },
  listingStopped: Effect.Effect<boolean>,
): Stream.Stream<ContactOutput, ContactError, CreditBudget.CreditBudget> =>
  Stream.unwrap(
    Effect.map(Ref.make(0), (skipped) =>
      Stream.concat(
        buyListed(context, unsuppressed(context, listed, skipped), where, listingStopped),
        Stream.unwrap(
          Effect.map(Ref.get(skipped), (n) =>
            n === 0
              ? Stream.empty
              : Stream.make<Array<ContactOutput>>(Output.tally(where.work, { suppressed: n })),
          ),
        ),
      ),
    ),
  )

const buyListed = (
  context: Context,
  listed: Stream.Stream<ReadonlyArray<string>, ContactError, CreditBudget.CreditBudget>,
  where: { readonly search: string | null; readonly detail: string; readonly work: string },
  listingStopped: Effect.Effect<boolean>,
): Stream.Stream<ContactOutput, ContactError, CreditBudget.CreditBudget> =>
  Purchase.keys({
    keys: listed,
    again: context.refreshAll,
    purchase: {
      pageSize: context.config.page_size,
      concurrency: context.config.concurrency,
      retry: context.config.retry,
      fetch: (ids, paging) => context.client.searchPeople({ match_ids: ids }, paging),
      oneRecordPerKey: true,
    },
    keyOf: matchId,
    keyOfRejected: rejectedMatchId,
    noun: "contacts",
    listingStopped,
    checkpoint: context.checkpoint,
    bought: context.known,
    alongside: context.alsoInState,
    record: contactRecord(context, where.search),
    detail: where.detail,
    work: where.work,
    endpoint: "people.search",
  })
