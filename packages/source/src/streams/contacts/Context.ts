/**
 * What every contacts path shares: the run's settings and client, the one bought set, the record
 * form, and the purchase by match id that the listing paths (a search's free listing, the emails)
 * end in.
 */
import { Streams } from "@salesintel/airbyte"
import type { ApiError, Client, Contact, CreditBudget, Page } from "@salesintel/core"
import * as Effect from "effect/Effect"
import type * as Ref from "effect/Ref"
import * as Stream from "effect/Stream"
import type { LedgerError } from "../../bought/BoughtLedger.ts"
import type { BoughtSet } from "../../bought/BoughtSet.ts"
import type { ContactSearch, SourceConfig } from "../../Config.ts"
import * as KeyedPurchase from "../../components/KeyedPurchase.ts"
import * as Output from "../../read/Output.ts"
import * as Purchase from "../../read/Purchase.ts"

export type ContactOutput = Output.Output<Contact.Contact>

/** What ends a contacts read: the provider's errors, or the ledger's (bought/BoughtLedger.ts). */
export type ContactError = ApiError.ApiError | LedgerError

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
}

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

type Standing = "earlier" | "new" | "stale" | "held"

/**
 * Where a listed key stands: queued or bought by this run already, never bought, due again, or
 * held (in a full refresh nothing is held: what was bought before is bought again).
 */
const standing = (context: Context, queued: ReadonlySet<string>, id: string): Standing => {
  const { known } = context
  if (queued.has(id) || known.boughtThisRun(id)) return "earlier"
  if (!known.has(id)) return "new"
  return context.refreshAll || known.due(id) ? "stale" : "held"
}

/** Whether a listed key is to be bought (new or due; in a full refresh, anything not bought in the run). */
export const toBuy = (context: Context, id: string): boolean =>
  context.refreshAll ? !context.known.boughtThisRun(id) : context.known.due(id)

/**
 * Buys the ids of `candidates` not bought yet (each once, in the order listed) by match_ids, then
 * a shortfall for what the budget (or a stop) left, a tally of how the listed ids stood, and a
 * closing checkpoint. `listingStopped`: the free listing itself was stopped, so more may remain.
 */
export const buyNew = (
  context: Context,
  candidates: Stream.Stream<string, ContactError, CreditBudget.CreditBudget>,
  where: { readonly search: string | null; readonly detail: string; readonly work: string },
  listingStopped: Ref.Ref<boolean>,
): Stream.Stream<ContactOutput, ContactError, CreditBudget.CreditBudget> =>
  Stream.suspend(() => {
    const queued = new Set<string>()
    const counts: Record<Standing, number> = { earlier: 0, new: 0, stale: 0, held: 0 }
    const fresh = candidates.pipe(
      Stream.filter((id) => {
        const stands = standing(context, queued, id)
        // Sorted: what its lookup said is no longer needed (a key bought later is in the set).
        context.known.settle([id])
        counts[stands]++
        if (stands === "new" || stands === "stale") queued.add(id)
        return stands === "new" || stands === "stale"
      }),
    )
    const tallied = Stream.suspend(() =>
      Stream.make(
        Output.tally(where.work, {
          ...counts,
          listed: counts.earlier + counts.new + counts.stale + counts.held,
        }),
      ),
    )
    const bought = Purchase.keyedBatches({
      events: KeyedPurchase.run({
        keys: fresh,
        pageSize: context.config.page_size,
        concurrency: context.config.concurrency,
        retry: context.config.retry,
        fetch: (ids, paging) => context.client.searchPeople({ match_ids: ids }, paging),
        oneRecordPerKey: true,
      }),
      checkpoint: context.checkpoint,
      bought: context.known,
      record: contactRecord(context, where.search),
      detail: where.detail,
      work: where.work,
      recordBought: (event) => {
        const ids = event.items.map((item) => item.record.match_id)
        context.known.record(ids)
        // Bought: the set says "earlier" for it from now on, so the queue need not hold it.
        for (const id of ids) queued.delete(id)
      },
      everyBatch: false,
      shortfall: (left) =>
        Effect.map(listingStopped.get, (stopped) =>
          left > 0 || stopped
            ? Output.shortfall(
                left,
                left,
                `${where.detail} (new or stale contacts${stopped ? "; the free listing was stopped too, so more may remain" : ""})`,
              )
            : undefined,
        ),
    })
    return Stream.concat(bought, tallied)
  })
