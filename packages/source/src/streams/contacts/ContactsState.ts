/**
 * The contacts stream's state: ONE set of the contacts bought (`known`), by searches and emails
 * alike, the emails looked up, and a full refresh's position; what a read starts from, and its
 * checkpoint as it stands.
 *
 * The state changes only in emission order (never inside a concurrent task), so a checkpoint
 * covers exactly the records emitted before it. A full refresh also keeps its position (the parts
 * read, the next page), written after every part, so a killed run resumes where it stopped.
 */
import { Streams } from "@salesintel/airbyte"
import type { Contact } from "@salesintel/core"
import * as Effect from "effect/Effect"
import * as Ref from "effect/Ref"
import * as Schema from "effect/Schema"
import * as Stream from "effect/Stream"
import * as Ahead from "../../bought/Ahead.ts"
import { BoughtSet } from "../../bought/BoughtSet.ts"
import { DatedSetJson, epochDay } from "../../bought/DatedSet.ts"
import type * as PagedQuery from "../../components/PagedQuery.ts"
import * as Output from "../../read/Output.ts"
import type { ReadInput } from "../../read/StreamDefinition.ts"
import { decodeState } from "../common.ts"
import * as KnownDone from "./KnownDone.ts"

const FullRefreshProgress = Schema.Struct({
  /** Keys of the partitions read to the end in the current full refresh. */
  completed: Schema.Array(Schema.String),
  /**
   * The partition being read, the next page to ask for, and the page size of its pages (so that a
   * resume at another `page_size` neither skips nor re-buys: components/PagedQuery.ts `partStart`).
   */
  current: Schema.optional(
    Schema.Struct({
      part: Schema.String,
      next_page: Schema.Int.pipe(Schema.positive()),
      page_size: Schema.optional(Schema.Int.pipe(Schema.positive())),
    }),
  ),
})

/**
 * What a search's last read left held: its reachable matches then, and how many of them were held
 * when it ended (all but those the budget or a stop left), under the filters it had. A quick plan
 * (read/Quick.ts), which cannot list ids, takes those as still held; a search whose filters
 * changed has no record.
 */
export const SearchRead = Schema.Struct({
  filters: Schema.String,
  matches: Schema.Int.pipe(Schema.nonNegative()),
  held: Schema.Int.pipe(Schema.nonNegative()),
  /**
   * Of the contacts it last found to buy (new, stale, or bought by an earlier search of the read),
   * those an earlier search bought: the share of its due that overlaps the searches before it.
   */
  overlap: Schema.optional(
    Schema.Struct({
      earlier: Schema.Int.pipe(Schema.nonNegative()),
      of: Schema.Int.pipe(Schema.nonNegative()),
    }),
  ),
})
export type SearchRead = typeof SearchRead.Type

export const ContactsState = Schema.Struct({
  /**
   * Match ids bought, by the day bought: one set for searches and emails alike; or "ledger" when
   * the set is in the destination's ledger (bought/BoughtLedger.ts).
   */
  known: Schema.optionalWith(Schema.Union(DatedSetJson, Schema.Literal(Streams.inLedger)), {
    default: () => ({}),
  }),
  /**
   * The known contacts' identities looked up and found held, by the day (named for the emails, the
   * first kind); or "ledger" when they are in the destination's `_known_done` (KnownDone.ts).
   */
  emails: Schema.optionalWith(Schema.Union(DatedSetJson, Schema.Literal(Streams.inLedger)), {
    default: () => ({}),
  }),
  /** Present while a full refresh is unfinished. */
  full_refresh: Schema.optional(FullRefreshProgress),
  /** Each search's last read, by its name (SearchRead). */
  searches: Schema.optionalWith(Schema.Record({ key: Schema.String, value: SearchRead }), {
    default: () => ({}),
  }),
})

/** Where a read starts: the sets, a full refresh's position, and the checkpoint of them as they stand. */
export interface Start {
  readonly known: BoughtSet
  readonly emailsDone: KnownDone.KnownDone
  readonly position: Ref.Ref<PagedQuery.Position>
  /** Each search's last read: as saved, and as this read's searches end (SearchRead). */
  readonly searches: Ref.Ref<Readonly<Record<string, SearchRead>>>
  /** The state now; with a full refresh's position while it is unfinished. */
  readonly stateNow: (withPosition: boolean) => Effect.Effect<Output.Checkpoint>
  /** What the read says of the saved sets before it begins: those dated after today (bought/Ahead.ts). */
  readonly warnings: ReadonlyArray<Output.Log>
}

/** The saved state decoded (refused with its path if it does not decode), and what the read starts from. */
export const startFrom = (input: ReadInput) =>
  Effect.gen(function* () {
    const state = yield* decodeState("contacts", ContactsState, input.state)
    const today = epochDay(input.startedAt)
    const refresh = input.config.contacts?.refresh_after_days
    const incremental = input.syncMode === "incremental"
    const known = yield* BoughtSet.saved(state.known, "contacts", today, refresh)
    const emailsDone = yield* KnownDone.saved(state.emails, today, refresh, incremental)
    // A set moved into a ledger takes its rows' days there: what the ledger dates ahead is said.
    const warnings = Ahead.warning(
      [
        known.inLedger || state.known === Streams.inLedger
          ? Ahead.inLedger(known.aheadInLedger, ["contact", "contacts"])
          : Ahead.ahead(state.known, "known", ["contact", "contacts"], today),
        emailsDone.ahead,
      ],
      today,
      Ahead.dueAnyway(incremental, refresh),
    )
    const position = yield* Ref.make<PagedQuery.Position>({
      completed: state.full_refresh?.completed ?? [],
      current: state.full_refresh?.current,
    })
    const searches = yield* Ref.make<Readonly<Record<string, SearchRead>>>(state.searches)
    const stateNow = (withPosition: boolean) =>
      Effect.map(Effect.all([Ref.get(position), Ref.get(searches)]), ([p, read]) =>
        Output.checkpoint({
          known: known.toJson(),
          emails: emailsDone.toJson(),
          ...(Object.keys(read).length === 0 ? {} : { searches: read }),
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
    return { known, emailsDone, position, searches, stateNow, warnings } satisfies Start
  })

/** What the bought set holds as the read begins (the plan's "contacts in the saved state"). */
/** The bought set as the read began: its keys, and those due again. */
export interface HeldAtStart {
  readonly inState: number
  readonly staleInState: number
}

export const heldTally = (held: HeldAtStart): Output.Output<Contact.Contact> =>
  Output.tally("contacts held", { ...held })

/** What the bought set holds as the read begins. */
export const heldAtStart = (known: BoughtSet): HeldAtStart => ({
  inState: known.size,
  staleInState: known.size - known.countFresh(),
})

/**
 * The read's closing checkpoint. A full refresh that read everything starts afresh next time; it
 * says how many of the contacts held before it did not find again (an overwrite deletes their rows).
 */
export const finish = (start: Start, incremental: boolean, unfinished: Ref.Ref<boolean>) =>
  Stream.unwrap(
    Effect.map(Ref.get(unfinished), (left) =>
      Stream.concat(
        incremental || left
          ? Stream.empty
          : Stream.make<Array<Output.Output<Contact.Contact>>>(
              Output.tally("contacts held", { notReadAgain: start.known.heldNotBoughtAgain() }),
            ),
        Stream.fromEffect(start.stateNow(!incremental && left)),
      ),
    ),
  )
