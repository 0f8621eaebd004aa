/**
 * Email enrichment: each email due is looked up with the free preview (every page), and the
 * contacts it matches that are not bought yet (by a search, an earlier email or an earlier run)
 * are bought by match_ids. An email is done once every contact it matches is in the bought set
 * (or it matched nothing). The lookups are made before anything is bought: they size the estimate.
 */
import { type ApiError, type Client, type CreditBudget, Limits, Pager } from "@salesintel/core"
import * as Chunk from "effect/Chunk"
import * as Effect from "effect/Effect"
import * as Stream from "effect/Stream"
import type { BoughtSet } from "../../bought/BoughtSet.ts"
import type { ContactsConfig } from "../../Config.ts"
import * as Output from "../../read/Output.ts"
import { buyNew, type ContactOutput, type Context, toBuy } from "./Context.ts"

/** The emails an enrichment looks up: each once, and in incremental only those due. */
export const pendingEmails = (
  settings: ContactsConfig,
  emailsDone: BoughtSet,
  incremental: boolean,
): ReadonlyArray<string> =>
  [...new Set(settings.emails.map((email) => email.toLowerCase()))].filter(
    (email) => !incremental || emailsDone.due(email),
  )

export interface EmailLookup {
  readonly email: string
  /** The match ids of the contacts the email matches. */
  readonly ids: ReadonlyArray<string>
  /** The listing was stopped (a stop request closed the budget) before it ended. */
  readonly refused: boolean
  /** Pages of the free preview it took. */
  readonly pages: number
}

/** The contacts one email matches, from the free preview (every page). */
export const lookupEmail = (
  client: Client.SalesIntelClientService,
  email: string,
  matchOnJobHistory: boolean,
): Effect.Effect<EmailLookup, ApiError.ApiError, CreditBudget.CreditBudget> =>
  Pager.stream({
    fetch: (paging) => client.previewPeople({ email: [email], matchOnJobHistory }, paging),
    credited: false,
    pageSize: Limits.maxPageSize,
  }).pipe(
    Stream.runCollect,
    Effect.map((events) => {
      const all = Chunk.toReadonlyArray(events)
      const pages = all.flatMap((event) => (event._tag === "PageFetched" ? [event.page] : []))
      return {
        email,
        ids: pages.flatMap((page) => page.items.map((item) => item.record.match_id)),
        refused: all.some((event) => event._tag === "BudgetExhausted"),
        pages: pages.length,
      }
    }),
  )

/** The emails' free lookups, made before anything is bought. */
export interface EmailLookups {
  readonly looked: ReadonlyArray<EmailLookup>
  /** Emails due, not all of them looked up: the stream must say it is incomplete. */
  readonly refused: boolean
  /** Emails due a lookup in this read. */
  readonly pending: number
}

const forgottenEmail = (context: Context, email: string): boolean =>
  !context.suppressions.empty && context.suppressions.has("email", email)

/** The emails configured that were forgotten, as a tally (none when there are none). */
const forgottenTally = (context: Context, settings: ContactsConfig): ReadonlyArray<ContactOutput> => {
  const forgotten = new Set(
    settings.emails.map((email) => email.toLowerCase()).filter((email) => forgottenEmail(context, email)),
  ).size
  return forgotten === 0 ? [] : [Output.tally("emails", { suppressed: forgotten })]
}

export const lookUpEmails = (context: Context, emailsDone: BoughtSet, incremental: boolean) =>
  Effect.gen(function* () {
    const settings = context.config.contacts
    if (settings === undefined || settings.emails.length === 0)
      return { looked: [], refused: false, pending: 0 } satisfies EmailLookups
    // A forgotten email is not even looked up: what it matches is never to be bought.
    const pending = pendingEmails(settings, emailsDone, incremental).filter(
      (email) => !forgottenEmail(context, email),
    )
    const lookups = yield* Effect.forEach(
      pending,
      (email) => lookupEmail(context.client, email, settings.match_on_job_history),
      { concurrency: context.config.concurrency },
    )
    // Where their contacts stand is asked before anything is bought (emailsToBuy), and kept until
    // the read ends (the purchase and the emails marked done ask again).
    yield* context.known.resolveScoped(lookups.flatMap((lookup) => lookup.ids))
    return {
      looked: lookups.filter((lookup) => !lookup.refused),
      refused: lookups.some((lookup) => lookup.refused),
      pending: pending.length,
    } satisfies EmailLookups
  })

/** The contacts the emails looked up match that are not bought, or are due again (in a full refresh, all). */
export const emailsToBuy = (context: Context, lookups: EmailLookups): number =>
  new Set(lookups.looked.flatMap((lookup) => lookup.ids).filter((id) => toBuy(context, id))).size

export const enrichEmails = (context: Context, emailsDone: BoughtSet, lookups: EmailLookups) =>
  Stream.unwrap(
    Effect.gen(function* () {
      const settings = context.config.contacts
      if (settings === undefined || settings.emails.length === 0) return Stream.empty
      const forgotten = forgottenTally(context, settings)
      if (lookups.pending === 0)
        return Stream.make<Array<ContactOutput>>(
          ...forgotten,
          Output.log("INFO", "email enrichment: every email is up to date"),
        )
      const { looked } = lookups
      const unmatched = looked.filter((lookup) => lookup.ids.length === 0).length
      const summary = Output.log(
        "INFO",
        `email enrichment: ${looked.length} emails looked up, ${unmatched} matched nothing, ${looked.length - unmatched} matched`,
      )
      const ids = Stream.make(looked.flatMap((lookup) => lookup.ids))
      const where = { search: null, detail: "contacts email enrichment", work: "emails" }
      const bought = buyNew(context, ids, where, Effect.succeed(lookups.refused))
      // After the purchases: an email whose every contact is now bought needs no lookup again
      // (what the lookup before them said is still held: lookUpEmails).
      const markDone = Stream.fromEffect(
        Effect.suspend(() => {
          emailsDone.record(
            looked
              .filter((lookup) => lookup.ids.every((id) => !context.known.due(id)))
              .map((lookup) => lookup.email),
          )
          return context.checkpoint
        }),
      )
      return Stream.concat(
        Stream.make<Array<ContactOutput>>(...forgotten, summary),
        Stream.concat(bought, markDone),
      )
    }),
  )
