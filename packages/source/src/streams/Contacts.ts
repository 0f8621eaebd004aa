/**
 * The contacts stream: named searches and email enrichment, bought into ONE set of contacts
 * (`known` in the state), so a contact found by two searches, by a search and an email, or by a
 * full refresh and a later incremental read, is bought once, and a rerun over unchanged data buys
 * nothing. The ways a search is read are in contacts/Searches.ts, the emails in contacts/Emails.ts,
 * the estimate in contacts/Estimates.ts; what every purchase becomes is the engine's
 * (read/Purchase.ts).
 *
 * The state changes only in emission order (never inside a concurrent task), so a checkpoint
 * covers exactly the records emitted before it. A full refresh also keeps its position (the parts
 * read, the next page), written after every part, so a killed run resumes where it stopped.
 */
import { Streams } from "@salesintel/airbyte"
import { Client, type Contact, CreditBudget } from "@salesintel/core"
import * as Effect from "effect/Effect"
import * as Ref from "effect/Ref"
import * as Schema from "effect/Schema"
import * as Stream from "effect/Stream"
import { BoughtSet } from "../bought/BoughtSet.ts"
import { DatedSetJson, epochDay } from "../bought/DatedSet.ts"
import type { ContactSearch } from "../Config.ts"
import type * as PagedQuery from "../components/PagedQuery.ts"
import * as Output from "../read/Output.ts"
import * as Purchase from "../read/Purchase.ts"
import type { ReadInput, StreamDefinition } from "../read/StreamDefinition.ts"
import { decodeState } from "./common.ts"
import type { ContactError, ContactOutput, Context } from "./contacts/Context.ts"
import { searchWork } from "./contacts/Context.ts"
import { enrichEmails } from "./contacts/Emails.ts"
import { estimates, prepare, preparedTallies, revisedAtEnd } from "./contacts/Estimates.ts"
import { fullRefreshSearches, incrementalSearch } from "./contacts/Searches.ts"

const FullRefreshProgress = Schema.Struct({
  /** Keys of the partitions read to the end in the current full refresh. */
  completed: Schema.Array(Schema.String),
  /** The partition being read and the next page to ask for. */
  current: Schema.optional(
    Schema.Struct({ part: Schema.String, next_page: Schema.Int.pipe(Schema.positive()) }),
  ),
})

export const ContactsState = Schema.Struct({
  /**
   * Match ids bought, by the day bought: one set for searches and emails alike; or "ledger" when
   * the set is in the destination's ledger (bought/BoughtLedger.ts).
   */
  known: Schema.optionalWith(Schema.Union(DatedSetJson, Schema.Literal(Streams.inLedger)), {
    default: () => ({}),
  }),
  /** Emails looked up for enrichment, by the day. */
  emails: Schema.optionalWith(DatedSetJson, { default: () => ({}) }),
  /** Present while a full refresh is unfinished. */
  full_refresh: Schema.optional(FullRefreshProgress),
})

/** The sets and the position a read starts from, and the checkpoint of them as they stand. */
const startFrom = (input: ReadInput, state: typeof ContactsState.Type) =>
  Effect.gen(function* () {
    const today = epochDay(input.startedAt)
    const refresh = input.config.contacts?.refresh_after_days
    yield* BoughtSet.checkDays(state.known, "contacts", "known", today)
    yield* BoughtSet.checkDays(state.emails, "contacts", "emails", today)
    const known = yield* BoughtSet.saved(state.known, "contacts", today, refresh)
    // A full refresh looks every configured email up again (free), and ends holding those alone:
    // an email no longer configured is not left "done" while the overwrite deletes its contacts.
    const emailsDone = BoughtSet.fromJson(
      input.syncMode === "incremental" ? state.emails : {},
      today,
      refresh,
    )
    const position = yield* Ref.make<PagedQuery.Position>({
      completed: state.full_refresh?.completed ?? [],
      current: state.full_refresh?.current,
    })
    const stateNow = (withPosition: boolean) =>
      Effect.map(Ref.get(position), (p) =>
        Output.checkpoint({
          known: known.toJson(),
          emails: emailsDone.toJson(),
          ...(withPosition
            ? {
                full_refresh: {
                  completed: [...p.completed],
                  ...(p.current === undefined ? {} : { current: p.current }),
                },
              }
            : {}),
        }),
      )
    return { known, emailsDone, position, stateNow }
  })

const read = (input: ReadInput) =>
  Stream.unwrap(
    Effect.gen(function* () {
      const settings = input.config.contacts
      if (settings === undefined) return Stream.empty
      const incremental = input.syncMode === "incremental"
      const { known, emailsDone, position, stateNow } = yield* startFrom(
        input,
        yield* decodeState("contacts", ContactsState, input.state),
      )
      const unfinished = yield* Ref.make(false)
      const context: Context = {
        config: input.config,
        client: yield* Client.SalesIntelClient,
        known,
        refreshAll: !incremental,
        fetchedAt: new Date(input.startedAt).toISOString(),
        checkpoint: stateNow(!incremental),
      }
      const prepared = yield* prepare(context, emailsDone, incremental)
      const { available } = yield* (yield* CreditBudget.CreditBudget).snapshot
      const estimated = estimates(context, prepared, yield* Ref.get(position), incremental, available)
      const revised = (
        search: ContactSearch,
        outputs: Stream.Stream<ContactOutput, ContactError, CreditBudget.CreditBudget>,
      ) => revisedAtEnd(searchWork(search), outputs)
      // An incremental search after the first diffs against what the ones before bought: one
      // after another. A full refresh's searches are read in turn, overlapping.
      const searches = incremental
        ? Purchase.inOrder(
            settings.searches.map((search) =>
              revised(search, incrementalSearch(context, search, prepared.plans.get(search.name))),
            ),
          )
        : fullRefreshSearches(context, settings.searches, prepared.plans, position, unfinished, revised)
      const lookups = prepared.lookups ?? { looked: [], refused: true, pending: settings.emails.length }
      const emails = revisedAtEnd("emails", enrichEmails(context, emailsDone, lookups))
      // A full refresh that read everything starts afresh next time; it says how many of the
      // contacts held before it did not find again (an overwrite deletes their rows).
      const finish = Stream.unwrap(
        Effect.map(Ref.get(unfinished), (left) =>
          Stream.concat(
            incremental || left
              ? Stream.empty
              : Stream.make(Output.tally("contacts held", { notReadAgain: known.heldNotBoughtAgain() })),
            Stream.fromEffect(stateNow(!incremental && left)),
          ),
        ),
      )
      // What the bought set holds as the read begins (the plan's "contacts in the saved state").
      const held = Output.tally("contacts held", {
        inState: known.size,
        staleInState: known.size - known.countFresh(),
      })
      const started = Stream.make(estimated, held, ...preparedTallies(context, prepared))
      // The emails buy after the searches, when there are any.
      const purchases = Purchase.inOrder(settings.emails.length === 0 ? [searches] : [searches, emails])
      return Stream.concat(started, Stream.concat(purchases, finish))
    }),
  )

export const contacts: StreamDefinition<Contact.Contact> = {
  stream: Streams.streams.contacts,
  credited: true,
  isConfigured: (config) =>
    config.contacts !== undefined &&
    (config.contacts.searches.length > 0 || config.contacts.emails.length > 0),
  read,
}
