/**
 * The contacts stream: named searches read whole (through partitions past 10,000 records) and
 * known emails enriched.
 *
 * full_refresh pages the credited search directly (one request per page of records) and
 * checkpoints its position, so a killed run resumes at the next page instead of buying again.
 *
 * incremental is the credit-saving mode: it walks the free preview, diffs the match ids against
 * the ids already bought (the state), and buys only new contacts and those older than
 * refresh_after_days, by match_ids, in pages of page_size. A rerun over unchanged data buys
 * nothing. Ids are shared by all searches: a contact two searches find is bought once.
 *
 * State is changed only in emission order (never inside a concurrent task), so a checkpoint
 * covers exactly the records emitted before it. full_refresh state is only its position and is
 * written after every page. incremental state holds every id bought, so it is written after every
 * page while small and then amortised (see amortizedCheckpoints), at the end of each search, and
 * before any failure is reported: a 402 or a provider fault loses nothing; only a run killed
 * without warning can re-buy, at most 1/50 of the ids it had.
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
  Partitioner,
} from "@salesintel/core"
import { Effect, Exit, Option, Schema, Stream } from "effect"
import type { ContactSearch, SourceConfig } from "../Config.ts"
import { DatedSet, DatedSetJson, epochDay } from "../DatedSet.ts"
import * as Output from "../Output.ts"
import type { StreamDefinition } from "../StreamDefinition.ts"
import { amortizedCheckpoints, canonicalJson, decodeState } from "./common.ts"

const FullRefreshProgress = Schema.Struct({
  /** Keys of the partitions read to the end in the current full refresh. */
  completed: Schema.Array(Schema.String),
  /** The partition being read and the next page to ask for. */
  current: Schema.optional(
    Schema.Struct({ part: Schema.String, next_page: Schema.Int.pipe(Schema.positive()) }),
  ),
})

export const ContactsState = Schema.Struct({
  /** Match ids bought, by the day bought. */
  known: Schema.optionalWith(DatedSetJson, { default: () => ({}) }),
  /** Emails looked up for enrichment, by the day. */
  emails: Schema.optionalWith(DatedSetJson, { default: () => ({}) }),
  /** Present while a full refresh is unfinished. */
  full_refresh: Schema.optional(FullRefreshProgress),
})

type ContactItem = Page.Item<Contact.Contact>

interface Context {
  readonly config: SourceConfig
  readonly client: Client.SalesIntelClientService
  readonly budget: CreditBudget.CreditBudgetService
  readonly known: DatedSet
  readonly today: number
  readonly fetchedAt: string
}

const contactRecord = (context: Context, item: ContactItem, search: string | null) =>
  Output.record(Streams.streams.contacts, item, {
    [Streams.addedFields.search]: search,
    [Streams.addedFields.fetchedAt]: context.fetchedAt,
  })

/** The search's partitions (just itself when it fits in the paging depth), sized by free previews. */
const partsOf = (context: Context, search: ContactSearch) =>
  Partitioner.plan(search.filters, {
    count: Partitioner.previewCount(context.client),
    concurrency: context.config.concurrency,
  })

const unsplittableWarnings = (
  search: ContactSearch,
  plan: Partitioner.Plan,
): Array<Output.Output<Contact.Contact>> =>
  plan.unsplittable.map((part) =>
    Output.log(
      "WARN",
      `contacts search "${search.name}": ${part.count} records cannot be reached (${part.reason}); filters ${canonicalJson(part.filters)}. Narrow the search to read them.`,
    ),
  )

const depthWarning = (search: ContactSearch, event: Pager.DepthLimitReached) =>
  Output.log(
    "WARN",
    `contacts search "${search.name}": a partition grew past the paging depth while it was read (${event.resultCount ?? "?"} records, ${event.recordsReachable} reachable); the rest is read on the next run.`,
  )

// ---------------------------------------------------------------------------------------------
// full_refresh

const fullRefreshSearch = (
  context: Context,
  search: ContactSearch,
  progress: { completed: Array<string>; current: { part: string; next_page: number } | undefined },
  checkpoint: () => Output.Checkpoint,
  onShortfall: () => void,
) =>
  Stream.unwrap(
    Effect.gen(function* () {
      const plan = yield* partsOf(context, search)
      const pageSize = context.config.page_size
      const parts = Stream.fromIterable(plan.parts).pipe(
        Stream.flatMap((part) => {
          const key = `${search.name}:${canonicalJson(part.filters)}`
          if (progress.completed.includes(key)) return Stream.empty
          const startPage = progress.current?.part === key ? progress.current.next_page : 1
          let stopped = false
          const pages = Pager.stream({
            fetch: (paging) => context.client.searchPeople(part.filters, paging),
            credited: true,
            pageSize,
            concurrency: context.config.concurrency,
            startPage,
            expectedRecords: part.count,
          }).pipe(
            Stream.mapConcat((event): ReadonlyArray<Output.Output<Contact.Contact>> => {
              switch (event._tag) {
                case "PageFetched": {
                  progress.current = { part: key, next_page: event.page.page + 1 }
                  return [
                    ...event.page.items.map((item) => contactRecord(context, item, search.name)),
                    checkpoint(),
                  ]
                }
                case "BudgetExhausted": {
                  stopped = true
                  onShortfall()
                  const left =
                    event.recordsRemaining ?? Math.max(0, part.count - (event.nextPage - 1) * pageSize)
                  return [
                    Output.shortfall(
                      left,
                      left,
                      `contacts search "${search.name}" (from page ${event.nextPage} of a part)`,
                    ),
                  ]
                }
                case "DepthLimitReached":
                  return [depthWarning(search, event)]
              }
            }),
          )
          const finish = Stream.suspend(() => {
            if (stopped) return Stream.empty
            progress.completed.push(key)
            progress.current = undefined
            return Stream.make(checkpoint())
          })
          return Stream.concat(pages, finish)
        }),
      )
      return Stream.concat(Stream.fromIterable(unsplittableWarnings(search, plan)), parts)
    }),
  )

// ---------------------------------------------------------------------------------------------
// incremental

type Purchase =
  | { readonly _tag: "Bought"; readonly items: ReadonlyArray<ContactItem> }
  | { readonly _tag: "Unbought"; readonly ids: ReadonlyArray<string> }

/**
 * Buys one batch of match ids through the credited search, reserving one credit per id (the most
 * the page can hold). A batch the budget cannot cover is not requested; once one is refused, later
 * batches are not tried either, so the shortfall is counted, not scattered.
 */
const buyBatch = (context: Context, refused: { value: boolean }) => (ids: ReadonlyArray<string>) =>
  Effect.acquireUseRelease(
    Effect.suspend(() =>
      refused.value
        ? Effect.succeed(Option.none<CreditBudget.Reservation>())
        : context.budget.reserve(ids.length),
    ),
    (reservation): Effect.Effect<Purchase, ApiError.ApiError> => {
      if (Option.isNone(reservation)) {
        refused.value = true
        return Effect.succeed({ _tag: "Unbought", ids })
      }
      return Effect.map(
        context.client.searchPeople({ match_ids: ids }, { page: 1, pageSize: ids.length }),
        (page): Purchase => ({ _tag: "Bought", items: page.items }),
      )
    },
    (reservation, exit) =>
      Option.match(reservation, {
        onNone: () => Effect.void,
        onSome: (held) =>
          Exit.isSuccess(exit) && exit.value._tag === "Bought"
            ? context.budget.settle(held, exit.value.items.length)
            : context.budget.release(held),
      }),
  )

const incrementalSearch = (
  context: Context,
  search: ContactSearch,
  refreshAfterDays: number | undefined,
  checkpoint: () => Output.Checkpoint,
) =>
  Stream.unwrap(
    Effect.gen(function* () {
      const plan = yield* partsOf(context, search)
      const queued = new Set<string>()
      const refused = { value: false }
      const checkpoints = amortizedCheckpoints(() => context.known.size)
      let unbought = 0
      const candidates = Stream.fromIterable(plan.parts).pipe(
        Stream.flatMap((part) =>
          Pager.stream({
            fetch: (paging) => context.client.previewPeople(part.filters, paging),
            credited: false,
            pageSize: Limits.maxPageSize,
            concurrency: context.config.concurrency,
            expectedRecords: part.count,
          }),
        ),
        Stream.mapConcat((event) => {
          if (event._tag !== "PageFetched") return []
          const fresh: Array<string> = []
          for (const item of event.page.items) {
            const id = item.record.match_id
            if (queued.has(id) || !context.known.needsBuying(id, context.today, refreshAfterDays)) continue
            queued.add(id)
            fresh.push(id)
          }
          return fresh
        }),
      )
      const purchases = candidates.pipe(
        Stream.grouped(context.config.page_size),
        Stream.mapEffect((chunk) => buyBatch(context, refused)([...chunk]), {
          concurrency: context.config.concurrency,
        }),
        Stream.mapConcat((purchase): ReadonlyArray<Output.Output<Contact.Contact>> => {
          if (purchase._tag === "Unbought") {
            unbought += purchase.ids.length
            return []
          }
          for (const item of purchase.items) context.known.add(item.record.match_id, context.today)
          const records = [
            Output.pageRead,
            ...purchase.items.map((item) => contactRecord(context, item, search.name)),
          ]
          return checkpoints.due(purchase.items.length) ? [...records, checkpoint()] : records
        }),
        // Whatever ends the walk, the ids bought so far are saved before the failure is reported.
        Stream.catchAll((error) => Stream.concat(Stream.sync(checkpoint), Stream.fail(error))),
        (outputs) => Stream.concat(outputs, Stream.sync(checkpoint)),
      )
      const summary = Stream.suspend(() =>
        unbought === 0
          ? Stream.empty
          : Stream.make(
              Output.shortfall(
                unbought,
                unbought,
                `contacts search "${search.name}" (new or stale contacts)`,
              ),
            ),
      )
      return Stream.concat(
        Stream.fromIterable(unsplittableWarnings(search, plan)),
        Stream.concat(purchases, summary),
      )
    }),
  )

// ---------------------------------------------------------------------------------------------
// email enrichment

/** Groups matched emails so that each group's expected records fit one page where possible. */
export const batchByExpected = (
  lookups: ReadonlyArray<{ readonly email: string; readonly count: number }>,
  pageSize: number,
): Array<{ emails: Array<string>; expected: number }> => {
  const batches: Array<{ emails: Array<string>; expected: number }> = []
  let current: { emails: Array<string>; expected: number } | undefined
  for (const lookup of lookups) {
    if (lookup.count === 0) continue
    if (
      current === undefined ||
      current.expected + lookup.count > pageSize ||
      current.emails.length >= pageSize
    ) {
      current = { emails: [], expected: 0 }
      batches.push(current)
    }
    current.emails.push(lookup.email)
    current.expected += lookup.count
  }
  return batches
}

const enrichEmails = (
  context: Context,
  emailsDone: DatedSet,
  incremental: boolean,
  checkpoint: () => Output.Checkpoint,
) =>
  Stream.unwrap(
    Effect.gen(function* () {
      const settings = context.config.contacts
      if (settings === undefined || settings.emails.length === 0) return Stream.empty
      const refresh = settings.refresh_after_days
      const pending = [...new Set(settings.emails.map((email) => email.toLowerCase()))].filter(
        (email) => !incremental || emailsDone.needsBuying(email, context.today, refresh),
      )
      if (pending.length === 0)
        return Stream.make(Output.log("INFO", "email enrichment: every email is up to date"))
      const matchOnJobHistory = settings.match_on_job_history
      // One free preview per email says which emails match and how many records each brings.
      const lookups = yield* Effect.forEach(
        pending,
        (email) =>
          Effect.map(
            Partitioner.previewCount(context.client)({ email: [email], matchOnJobHistory }),
            (count) => ({ email, count }),
          ),
        { concurrency: context.config.concurrency },
      )
      const unmatched = lookups.filter((lookup) => lookup.count === 0)
      const batches = batchByExpected(lookups, context.config.page_size)
      let stopped = false
      let left = 0
      const unmatchedOutputs = Stream.suspend(() => {
        for (const lookup of unmatched) emailsDone.add(lookup.email, context.today)
        return Stream.make(
          Output.log(
            "INFO",
            `email enrichment: ${pending.length} emails looked up, ${unmatched.length} matched nothing, ${lookups.length - unmatched.length} matched`,
          ),
          checkpoint(),
        )
      })
      const bought = Stream.fromIterable(batches).pipe(
        Stream.flatMap((batch) => {
          if (stopped) {
            left += batch.expected
            return Stream.empty
          }
          const pages = Pager.stream({
            fetch: (paging) =>
              context.client.searchPeople({ email: batch.emails, matchOnJobHistory }, paging),
            credited: true,
            pageSize: context.config.page_size,
            maxRecords: batch.expected,
            concurrency: context.config.concurrency,
          }).pipe(
            Stream.mapConcat((event): ReadonlyArray<Output.Output<Contact.Contact>> => {
              if (event._tag === "BudgetExhausted") {
                stopped = true
                left += event.recordsRemaining ?? batch.expected
                return []
              }
              if (event._tag !== "PageFetched") return []
              for (const item of event.page.items) context.known.add(item.record.match_id, context.today)
              return [Output.pageRead, ...event.page.items.map((item) => contactRecord(context, item, null))]
            }),
          )
          const done = Stream.suspend(() => {
            if (stopped) return Stream.empty
            for (const email of batch.emails) emailsDone.add(email, context.today)
            return Stream.make(checkpoint())
          })
          return Stream.concat(pages, done)
        }),
      )
      const summary = Stream.suspend(() =>
        left === 0 ? Stream.empty : Stream.make(Output.shortfall(left, left, "contacts email enrichment")),
      )
      return Stream.concat(unmatchedOutputs, Stream.concat(bought, summary))
    }),
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
        const context: Context = {
          config: input.config,
          client: yield* Client.SalesIntelClient,
          budget: yield* CreditBudget.CreditBudget,
          known: DatedSet.fromJson(state.known),
          today: epochDay(input.startedAt),
          fetchedAt: new Date(input.startedAt).toISOString(),
        }
        const emailsDone = DatedSet.fromJson(state.emails)
        const incremental = input.syncMode === "incremental"
        const progress = {
          completed: [...(state.full_refresh?.completed ?? [])],
          current: state.full_refresh?.current,
        }
        let fullRefreshUnfinished = false
        const checkpoint = () =>
          Output.checkpoint({
            known: context.known.toJson(),
            emails: emailsDone.toJson(),
            ...(incremental
              ? {}
              : { full_refresh: { completed: progress.completed, current: progress.current } }),
          })
        const searches = Stream.fromIterable(settings.searches).pipe(
          Stream.flatMap((search) =>
            incremental
              ? incrementalSearch(context, search, settings.refresh_after_days, checkpoint)
              : fullRefreshSearch(context, search, progress, checkpoint, () => {
                  fullRefreshUnfinished = true
                }),
          ),
        )
        // A full refresh that read everything starts afresh next time.
        const finish = Stream.suspend(() => {
          if (incremental || fullRefreshUnfinished) return Stream.make(checkpoint())
          return Stream.make(
            Output.checkpoint({ known: context.known.toJson(), emails: emailsDone.toJson() }),
          )
        })
        return Stream.concat(
          searches,
          Stream.concat(enrichEmails(context, emailsDone, incremental, checkpoint), finish),
        )
      }),
    ),
}
