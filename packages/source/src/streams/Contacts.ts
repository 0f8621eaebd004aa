/**
 * The contacts stream, as a description over the shared components: named searches read through
 * the partitioned paged query, and every purchase by match id through the keyed purchase.
 *
 * full_refresh pages the credited search directly (one request per page of records) and
 * checkpoints its position, so a killed run resumes at the next page instead of buying again.
 *
 * incremental and email enrichment are the credit-saving paths, and they share ONE set of
 * contacts bought (`known` in the state): the free preview lists the match ids (of a search, or
 * of each email), the ids are diffed against the set, and only new contacts and those older than
 * refresh_after_days are bought, by match_ids. A contact found by two searches, or by a search and
 * an email, is bought once; a rerun over unchanged data buys nothing.
 * A search of which nothing can be bought already (no contact in the set is fresh) would buy
 * every contact it returns that way, so it is read directly through the credited search instead,
 * as full_refresh does, and its ids go into the set: the same credits and state, half the requests.
 *
 * The state changes only in emission order (never inside a concurrent task), so a checkpoint
 * covers exactly the records emitted before it. full_refresh state is its position, written after
 * every page. The set of ids bought grows with the data, so it is written after every page while
 * small and then amortised (Checkpoints.ts), at the end of each search, and before any failure is
 * reported: only a run killed without warning can re-buy, at most 1/50 of the ids it had.
 */
import { Streams } from "@salesintel/airbyte"
import {
  type ApiError,
  Client,
  type Contact,
  CreditBudget,
  Limits,
  type Page,
  Pager,
  type Partitioner,
} from "@salesintel/core"
import { Chunk, Effect, Ref, Schema, Stream } from "effect"
import type { ContactSearch, ContactsConfig, SourceConfig } from "../Config.ts"
import * as Checkpoints from "../components/Checkpoints.ts"
import * as KeyedPurchase from "../components/KeyedPurchase.ts"
import * as PagedQuery from "../components/PagedQuery.ts"
import { DatedSet, DatedSetJson, epochDay } from "../DatedSet.ts"
import * as Output from "../Output.ts"
import type { StreamDefinition } from "../StreamDefinition.ts"
import { decodeState } from "./common.ts"

const FullRefreshProgress = Schema.Struct({
  /** Keys of the partitions read to the end in the current full refresh. */
  completed: Schema.Array(Schema.String),
  /** The partition being read and the next page to ask for. */
  current: Schema.optional(
    Schema.Struct({ part: Schema.String, next_page: Schema.Int.pipe(Schema.positive()) }),
  ),
})

export const ContactsState = Schema.Struct({
  /** Match ids bought, by the day bought: one set for searches and emails alike. */
  known: Schema.optionalWith(DatedSetJson, { default: () => ({}) }),
  /** Emails looked up for enrichment, by the day. */
  emails: Schema.optionalWith(DatedSetJson, { default: () => ({}) }),
  /** Present while a full refresh is unfinished. */
  full_refresh: Schema.optional(FullRefreshProgress),
})

type ContactOutput = Output.Output<Contact.Contact>

interface Context {
  readonly config: SourceConfig
  readonly client: Client.SalesIntelClientService
  /** The contacts bought, by any path, in this run and before. */
  readonly known: DatedSet
  readonly today: number
  readonly refreshAfterDays: number | undefined
  readonly fetchedAt: string
  readonly checkpoint: Effect.Effect<Output.Checkpoint>
}

const contactRecord = (context: Context, item: Page.Item<Contact.Contact>, search: string | null) =>
  Output.record(Streams.streams.contacts, item, {
    [Streams.addedFields.search]: search,
    [Streams.addedFields.fetchedAt]: context.fetchedAt,
  })

/**
 * A page's outputs, followed by a checkpoint when the bought set's cadence says one is due
 * (Checkpoints.amortized: every page while the set is small, then every 1/50 of it).
 */
const withCheckpointWhenDue = (
  context: Context,
  checkpoints: Checkpoints.Amortized,
  bought: number,
  outputs: ReadonlyArray<ContactOutput>,
): Effect.Effect<ReadonlyArray<ContactOutput>> =>
  Effect.flatMap(checkpoints.due(bought), (due) =>
    due ? Effect.map(context.checkpoint, (checkpoint) => [...outputs, checkpoint]) : Effect.succeed(outputs),
  )

// ---------------------------------------------------------------------------------------------
// full_refresh: the credited search, page by page, resumable

/** A search read through the credited search, page by page: as full refresh and a direct first read do. */
const searchQuery = (context: Context, search: ContactSearch): PagedQuery.Options<Contact.Contact> => ({
  client: context.client,
  name: search.name,
  filters: search.filters,
  fetch: context.client.searchPeople,
  credited: true,
  pageSize: context.config.page_size,
  concurrency: context.config.concurrency,
  retry: context.config.retry,
})

/** Records a full refresh of the search still has to read from `position` (its estimate). */
const unreadRecords = (
  name: string,
  plan: Partitioner.Plan,
  position: PagedQuery.Position,
  context: Context,
): number =>
  plan.parts.reduce((sum, part) => {
    const key = PagedQuery.partKey(name, part.filters)
    if (position.completed.includes(key)) return sum
    const read =
      position.current?.part === key ? (position.current.next_page - 1) * context.config.page_size : 0
    return sum + Math.max(0, part.count - read)
  }, 0)

const fullRefreshSearch = (
  context: Context,
  search: ContactSearch,
  plan: Partitioner.Plan | undefined,
  position: Ref.Ref<PagedQuery.Position>,
  unfinished: Ref.Ref<boolean>,
) =>
  Stream.unwrap(
    Effect.gen(function* () {
      const start = yield* Ref.get(position)
      const checkpoints = yield* Checkpoints.amortized(() => context.known.size)
      // Parts not begun after a refusal: summed into one shortfall at the end of the search.
      const skipped = yield* Ref.make(0)
      const pages = PagedQuery.run({ ...searchQuery(context, search), position: start, plan }).pipe(
        Stream.mapEffect((event): Effect.Effect<ReadonlyArray<ContactOutput>> => {
          switch (event._tag) {
            case "Planned":
              return Effect.succeed([])
            case "Warning":
              return Effect.succeed([Output.log("WARN", event.message)])
            case "Page": {
              // Bought, so in the one bought set: an incremental read after it buys none of them.
              for (const item of event.page.items) context.known.add(item.record.match_id, context.today)
              const records = [
                Output.pageRead,
                ...event.page.items.map((item) => contactRecord(context, item, search.name)),
              ]
              return Effect.zipRight(
                event.afterGap
                  ? Effect.void
                  : Ref.update(position, (p) => ({
                      ...p,
                      current: { part: event.part, next_page: event.page.page + 1 },
                    })),
                withCheckpointWhenDue(context, checkpoints, event.page.items.length, records),
              )
            }
            case "Refused":
              // The next run resumes at the refused page, even if later pages landed after it.
              return Effect.as(
                Effect.zipRight(
                  Ref.set(unfinished, true),
                  Ref.update(position, (p) => ({
                    ...p,
                    current: { part: event.part, next_page: event.nextPage },
                  })),
                ),
                [Output.shortfall(event.records, event.records, `contacts search "${search.name}"`)],
              )
            case "Skipped":
              return Effect.as(
                Ref.update(skipped, (n) => n + event.records),
                [],
              )
            case "PartDone":
              return Effect.zipRight(
                Ref.update(position, (p) => ({
                  completed: [...p.completed, event.part],
                  current: undefined,
                })),
                Effect.map(context.checkpoint, (checkpoint) => [checkpoint]),
              )
          }
        }),
        Stream.flattenIterables,
        // Whatever ends the read, what it bought is saved before the failure is reported.
        Stream.catchAll((error) => Stream.concat(Stream.fromEffect(context.checkpoint), Stream.fail(error))),
      )
      const later = Stream.unwrap(
        Effect.map(Ref.get(skipped), (records) =>
          records === 0
            ? Stream.empty
            : Stream.make<Array<ContactOutput>>(
                Output.shortfall(records, records, `contacts search "${search.name}" (parts not begun)`),
              ),
        ),
      )
      return Stream.concat(pages, later)
    }),
  )

// ---------------------------------------------------------------------------------------------
// incremental and emails: free match ids, diffed, bought by match_ids

/**
 * Buys the ids of `candidates` not bought yet (each once), emitting the records and amortised
 * checkpoints; then a shortfall for what the budget (or a stop) left, and a final checkpoint.
 */
const buyNew = (
  context: Context,
  candidates: Stream.Stream<string, ApiError.ApiError, CreditBudget.CreditBudget>,
  search: string | null,
  detail: string,
  previewRefused: Ref.Ref<boolean>,
) =>
  Stream.unwrap(
    Effect.gen(function* () {
      const queued = new Set<string>()
      const unbought = yield* Ref.make(0)
      const checkpoints = yield* Checkpoints.amortized(() => context.known.size)
      const fresh = candidates.pipe(
        Stream.filter((id) => {
          if (queued.has(id) || !context.known.needsBuying(id, context.today, context.refreshAfterDays))
            return false
          queued.add(id)
          return true
        }),
      )
      const purchases = KeyedPurchase.run({
        keys: fresh,
        pageSize: context.config.page_size,
        concurrency: context.config.concurrency,
        retry: context.config.retry,
        fetch: (ids, paging) => context.client.searchPeople({ match_ids: ids }, paging),
        oneRecordPerKey: true,
      }).pipe(
        Stream.mapEffect((event): Effect.Effect<ReadonlyArray<ContactOutput>> => {
          if (event._tag !== "Bought")
            return Effect.as(
              Ref.update(unbought, (n) => n + event.keys.length),
              [],
            )
          for (const item of event.items) context.known.add(item.record.match_id, context.today)
          const records = [
            Output.pageRead,
            ...event.items.map((item) => contactRecord(context, item, search)),
          ]
          return withCheckpointWhenDue(context, checkpoints, event.items.length, records)
        }),
        Stream.flattenIterables,
        // Whatever ends the walk, the ids bought so far are saved before the failure is reported.
        Stream.catchAll((error) => Stream.concat(Stream.fromEffect(context.checkpoint), Stream.fail(error))),
      )
      const closing = Stream.unwrap(
        Effect.gen(function* () {
          const left = yield* Ref.get(unbought)
          const refused = yield* Ref.get(previewRefused)
          const outputs: Array<ContactOutput> = []
          if (left > 0 || refused)
            outputs.push(
              Output.shortfall(
                left,
                left,
                `${detail} (new or stale contacts${refused ? "; the free listing was stopped too, so more may remain" : ""})`,
              ),
            )
          outputs.push(yield* context.checkpoint)
          return Stream.fromIterable(outputs)
        }),
      )
      return Stream.concat(purchases, closing)
    }),
  )

/** The free listing of a search's match ids, as an incremental read walks it (and a plan too). */
export const previewQuery = (
  client: Client.SalesIntelClientService,
  config: SourceConfig,
  search: ContactSearch,
): PagedQuery.Options<Contact.PreviewContact> => ({
  client,
  name: search.name,
  filters: search.filters,
  fetch: client.previewPeople,
  credited: false,
  pageSize: Limits.maxPageSize,
  concurrency: config.concurrency,
  retry: config.retry,
})

/**
 * What an incremental read of a search will buy, at least: its reachable matches less every
 * contact already bought and fresh (exact on a first run, when nothing is bought).
 */
const incrementalEstimate = (context: Context, plan: Partitioner.Plan): number =>
  Math.max(
    0,
    plan.parts.reduce((sum, part) => sum + part.count, 0) -
      context.known.countFresh(context.today, context.refreshAfterDays),
  )

const previewSearch = (context: Context, search: ContactSearch, plan: Partitioner.Plan | undefined) =>
  Stream.unwrap(
    Effect.gen(function* () {
      const previewRefused = yield* Ref.make(false)
      const warnings = yield* Ref.make<ReadonlyArray<string>>([])
      const ids = PagedQuery.run({ ...previewQuery(context.client, context.config, search), plan }).pipe(
        Stream.mapEffect((event) => {
          switch (event._tag) {
            case "Page":
              return Effect.succeed(event.page.items.map((item) => item.record.match_id))
            case "Refused":
            case "Skipped":
              return Effect.as(Ref.set(previewRefused, true), [])
            case "Warning":
              return Effect.as(
                Ref.update(warnings, (all) => [...all, event.message]),
                [],
              )
            case "Planned":
            case "PartDone":
              return Effect.succeed([])
          }
        }),
        Stream.flattenIterables,
      )
      const logged = Stream.unwrap(
        Effect.map(Ref.get(warnings), (all) =>
          Stream.fromIterable(all.map((message): ContactOutput => Output.log("WARN", message))),
        ),
      )
      const bought = buyNew(context, ids, search.name, `contacts search "${search.name}"`, previewRefused)
      return Stream.concat(bought, logged)
    }),
  )

/** The emails an enrichment looks up: each once, and in incremental only those due. */
export const pendingEmails = (
  settings: ContactsConfig,
  emailsDone: DatedSet,
  today: number,
  incremental: boolean,
): ReadonlyArray<string> =>
  [...new Set(settings.emails.map((email) => email.toLowerCase()))].filter(
    (email) => !incremental || emailsDone.needsBuying(email, today, settings.refresh_after_days),
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

/**
 * A search nothing of which is bought (no contact in the set is fresh), with the budget to read it
 * whole: every contact it returns would be bought by the free listing's path too, so it is read
 * like a full refresh, straight through the credited search (one request per page instead of a
 * preview page and a purchase), and the ids go into the bought set. Same credits, same state, about
 * half the requests. Its parts are disjoint, so no part buys what another bought. A failure lets
 * the pages in flight land first (they are paid for), and the ids are saved before it is reported.
 */
const directSearch = (context: Context, search: ContactSearch, plan: Partitioner.Plan) =>
  Stream.unwrap(
    Effect.gen(function* () {
      const checkpoints = yield* Checkpoints.amortized(() => context.known.size)
      const skipped = yield* Ref.make(0)
      const reachable = plan.parts.reduce((sum, part) => sum + part.count, 0)
      const pages = PagedQuery.run({
        ...searchQuery(context, search),
        plan,
        landInFlightOnFailure: true,
      }).pipe(
        Stream.mapEffect((event): Effect.Effect<ReadonlyArray<ContactOutput>> => {
          switch (event._tag) {
            case "Planned":
              return Effect.succeed([])
            case "Warning":
              return Effect.succeed([Output.log("WARN", event.message)])
            case "Page": {
              for (const item of event.page.items) context.known.add(item.record.match_id, context.today)
              const records = [
                Output.pageRead,
                ...event.page.items.map((item) => contactRecord(context, item, search.name)),
              ]
              return withCheckpointWhenDue(context, checkpoints, event.page.items.length, records)
            }
            case "Refused":
              // The next run lists the rest with the free preview: it holds bought ids now.
              return Effect.succeed([
                Output.shortfall(event.records, event.records, `contacts search "${search.name}"`),
              ])
            case "Skipped":
              return Effect.as(
                Ref.update(skipped, (n) => n + event.records),
                [],
              )
            case "PartDone":
              return Effect.succeed([])
          }
        }),
        Stream.flattenIterables,
        Stream.catchAll((error) => Stream.concat(Stream.fromEffect(context.checkpoint), Stream.fail(error))),
      )
      const closing = Stream.unwrap(
        Effect.gen(function* () {
          const records = yield* Ref.get(skipped)
          const outputs: Array<ContactOutput> = []
          if (records > 0)
            outputs.push(
              Output.shortfall(records, records, `contacts search "${search.name}" (parts not begun)`),
            )
          outputs.push(yield* context.checkpoint)
          return Stream.fromIterable(outputs)
        }),
      )
      const said = Output.log(
        "INFO",
        `contacts search "${search.name}": none of its ${reachable} contacts bought yet (or every contact bought is due for refresh), read directly through the credited search`,
      )
      return Stream.concat(Stream.make<Array<ContactOutput>>(said), Stream.concat(pages, closing))
    }),
  )

/**
 * Whichever path costs fewer requests for the same credits. The free listing buys only the
 * contacts not bought (or stale); when no contact in the set is fresh, that is every contact the
 * search returns, and the direct read spends the same credits in about half the requests. It also
 * needs the budget to cover the whole search (plus the last page of each part, which reserves a
 * full page): a budget that cannot is spent contact by contact through the listing instead.
 */
const incrementalSearch = (context: Context, search: ContactSearch, plan: Partitioner.Plan | undefined) =>
  Stream.unwrap(
    Effect.gen(function* () {
      const budget = yield* CreditBudget.CreditBudget
      const { available, closed } = yield* budget.snapshot
      if (plan === undefined || closed || context.known.hasFresh(context.today, context.refreshAfterDays))
        return previewSearch(context, search, plan)
      const reachable = plan.parts.reduce((sum, part) => sum + part.count, 0)
      return reachable + plan.parts.length * context.config.page_size <= available
        ? directSearch(context, search, plan)
        : previewSearch(context, search, plan)
    }),
  )

/** The emails' free lookups, made before anything is bought (they size the estimate). */
interface EmailLookups {
  readonly looked: ReadonlyArray<EmailLookup>
  /** Emails due, none of them looked up yet: the stream must say it is incomplete. */
  readonly refused: boolean
  /** Emails due a lookup in this read. */
  readonly pending: number
}

const lookUpEmails = (context: Context, emailsDone: DatedSet, incremental: boolean) =>
  Effect.gen(function* () {
    const settings = context.config.contacts
    if (settings === undefined || settings.emails.length === 0)
      return { looked: [], refused: false, pending: 0 } satisfies EmailLookups
    const pending = pendingEmails(settings, emailsDone, context.today, incremental)
    const lookups = yield* Effect.forEach(
      pending,
      (email) => lookupEmail(context.client, email, settings.match_on_job_history),
      { concurrency: context.config.concurrency },
    )
    return {
      looked: lookups.filter((lookup) => !lookup.refused),
      refused: lookups.some((lookup) => lookup.refused),
      pending: pending.length,
    } satisfies EmailLookups
  })

/** The contacts the emails looked up match that are not bought, or are due again. */
const emailsToBuy = (context: Context, lookups: EmailLookups): number =>
  new Set(
    lookups.looked
      .flatMap((lookup) => lookup.ids)
      .filter((id) => context.known.needsBuying(id, context.today, context.refreshAfterDays)),
  ).size

/**
 * Email enrichment: each email's free preview listed the contacts it matches (`lookUpEmails`);
 * those not bought yet (by a search, an earlier email or an earlier run) are bought by match_ids.
 * An email is done once every contact it matches is in the bought set (or it matched nothing).
 */
const enrichEmails = (context: Context, emailsDone: DatedSet, lookups: EmailLookups) =>
  Stream.unwrap(
    Effect.gen(function* () {
      if (context.config.contacts === undefined || context.config.contacts.emails.length === 0)
        return Stream.empty
      if (lookups.pending === 0)
        return Stream.make<Array<ContactOutput>>(
          Output.log("INFO", "email enrichment: every email is up to date"),
        )
      const { looked } = lookups
      const unmatched = looked.filter((lookup) => lookup.ids.length === 0).length
      const summary = Output.log(
        "INFO",
        `email enrichment: ${looked.length} emails looked up, ${unmatched} matched nothing, ${looked.length - unmatched} matched`,
      )
      const bought = buyNew(
        context,
        Stream.fromIterable(looked.flatMap((lookup) => lookup.ids)),
        null,
        "contacts email enrichment",
        yield* Ref.make(lookups.refused),
      )
      // After the purchases: an email whose every contact is now bought needs no lookup again.
      const markDone = Stream.unwrap(
        Effect.gen(function* () {
          for (const lookup of looked)
            if (
              lookup.ids.every(
                (id) => !context.known.needsBuying(id, context.today, context.refreshAfterDays),
              )
            )
              emailsDone.add(lookup.email, context.today)
          return Stream.make<Array<ContactOutput>>(yield* context.checkpoint)
        }),
      )
      return Stream.concat(Stream.make<Array<ContactOutput>>(summary), Stream.concat(bought, markDone))
    }),
  )

/**
 * The free work of a read, done before its first credited request so that the stream's estimate
 * covers the whole run from the start: every search's partitions (sized with the free counts) and
 * every email's lookup. Skipped when a stop was requested before the stream began.
 */
const prepare = (context: Context, emailsDone: DatedSet, incremental: boolean) =>
  Effect.gen(function* () {
    const budget = yield* CreditBudget.CreditBudget
    const searches = context.config.contacts?.searches ?? []
    if ((yield* budget.snapshot).closed)
      return { plans: new Map<string, Partitioner.Plan>(), lookups: undefined }
    const plans = yield* Effect.forEach(searches, (search) =>
      Effect.map(
        PagedQuery.plan({
          client: context.client,
          filters: search.filters,
          concurrency: context.config.concurrency,
        }),
        (plan) => [search.name, plan] as const,
      ),
    )
    const lookups = yield* lookUpEmails(context, emailsDone, incremental)
    return { plans: new Map(plans), lookups }
  })

/** The estimate's key of a search's records (revised to what it read once it ends). */
const searchKey = (search: ContactSearch) => `search ${search.name}`

/**
 * Each search's estimate, then the emails', within what the budget has left, in read order: a
 * full refresh reads what its partitions hold past its position, an incremental read buys what is
 * not bought and fresh (an upper bound where searches overlap, revised as each one ends).
 */
const estimates = (
  context: Context,
  plans: ReadonlyMap<string, Partitioner.Plan>,
  position: PagedQuery.Position,
  lookups: EmailLookups | undefined,
  incremental: boolean,
  available: number,
): ContactOutput => {
  const searches = context.config.contacts?.searches ?? []
  const wanted = [
    ...searches.map((search): [string, number] => {
      const plan = plans.get(search.name)
      if (plan === undefined) return [searchKey(search), 0]
      const records = incremental
        ? incrementalEstimate(context, plan)
        : unreadRecords(search.name, plan, position, context)
      return [searchKey(search), records]
    }),
    ...(lookups === undefined ? [] : [["emails", emailsToBuy(context, lookups)] as [string, number]]),
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
const revisedAtEnd = (
  key: string,
  outputs: Stream.Stream<ContactOutput, ApiError.ApiError, CreditBudget.CreditBudget>,
) =>
  Stream.unwrap(
    Effect.map(Ref.make(0), (records) =>
      Stream.concat(
        outputs.pipe(
          Stream.tap((output) =>
            output._tag === "Record" ? Ref.update(records, (n) => n + 1) : Effect.void,
          ),
        ),
        Stream.fromEffect(Effect.map(Ref.get(records), (read) => Output.estimate(read, key))),
      ),
    ),
  )

// ---------------------------------------------------------------------------------------------

export const contacts: StreamDefinition<Contact.Contact> = {
  stream: Streams.streams.contacts,
  isConfigured: (config) =>
    config.contacts !== undefined &&
    (config.contacts.searches.length > 0 || config.contacts.emails.length > 0),
  read: (input) =>
    Stream.unwrap(
      Effect.gen(function* () {
        const settings = input.config.contacts
        if (settings === undefined) return Stream.empty
        const state = yield* decodeState("contacts", ContactsState, input.state)
        const incremental = input.syncMode === "incremental"
        const known = DatedSet.fromJson(state.known)
        const emailsDone = DatedSet.fromJson(state.emails)
        const position = yield* Ref.make<PagedQuery.Position>({
          completed: state.full_refresh?.completed ?? [],
          current: state.full_refresh?.current,
        })
        const unfinished = yield* Ref.make(false)
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
        const context: Context = {
          config: input.config,
          client: yield* Client.SalesIntelClient,
          known,
          today: epochDay(input.startedAt),
          refreshAfterDays: settings.refresh_after_days,
          fetchedAt: new Date(input.startedAt).toISOString(),
          checkpoint: stateNow(!incremental),
        }
        const budget = yield* CreditBudget.CreditBudget
        const { plans, lookups } = yield* prepare(context, emailsDone, incremental)
        const { available } = yield* budget.snapshot
        const estimated = estimates(context, plans, yield* Ref.get(position), lookups, incremental, available)
        const searches = Stream.fromIterable(settings.searches).pipe(
          Stream.flatMap((search) =>
            revisedAtEnd(
              searchKey(search),
              incremental
                ? incrementalSearch(context, search, plans.get(search.name))
                : fullRefreshSearch(context, search, plans.get(search.name), position, unfinished),
            ),
          ),
        )
        const emails = revisedAtEnd(
          "emails",
          enrichEmails(
            context,
            emailsDone,
            lookups ?? { looked: [], refused: true, pending: settings.emails.length },
          ),
        )
        // A full refresh that read everything starts afresh next time.
        const finish = Stream.unwrap(
          Effect.map(Ref.get(unfinished), (left) => Stream.fromEffect(stateNow(!incremental && left))),
        )
        return Stream.concat(Stream.make(estimated), Stream.concat(searches, Stream.concat(emails, finish)))
      }),
    ),
}
