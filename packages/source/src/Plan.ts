/**
 * What the next incremental read would cost, before it costs anything: the figures behind
 * `salesintel plan`. Free requests only (the preview and the taxonomy): the plan runs under a
 * credit budget of zero, so a credited request could not even be reserved, let alone sent.
 *
 * It reuses what the read itself runs, so the two cannot drift apart: each search's partitions
 * and free listing (PagedQuery, with the stream's own preview query), the email lookups, the
 * companies' due keys, the saved state's Schemas, and the same dedup (a contact found by two
 * searches, or by a search and an email, is bought once).
 *
 * - exact (default): walks each search's free listing as the read will and diffs the ids against
 *   the contacts already bought: the credits are what the next read spends, to the credit.
 * - quick: counts only (one request per partition count); a search's credits are its reachable
 *   matches, an upper bound, since which of them are bought is not known without the listing.
 *
 * The credits are allotted in read order (searches, emails, then companies) within the budget,
 * as the read spends them. Companies are charged per company returned, which no free request
 * tells: they are counted at one credit per key due (a key may match no company, or several).
 */
import { StreamState } from "@salesintel/airbyte"
import { type ApiError, Client, CreditBudget, Limits, type Partitioner } from "@salesintel/core"
import { Effect, Either, Stream } from "effect"
import type { ContactSearch, SourceConfig } from "./Config.ts"
import * as PagedQuery from "./components/PagedQuery.ts"
import { DatedSet, epochDay } from "./DatedSet.ts"
import { StateError } from "./StateError.ts"
import { CompaniesState, dueKeys } from "./streams/Companies.ts"
import { ContactsState, lookupEmail, pendingEmails, previewQuery } from "./streams/Contacts.ts"
import { decodeState } from "./streams/common.ts"
import { productQueries } from "./streams/Taxonomy.ts"

export { StateError }

export type Mode = "exact" | "quick"

export interface Requests {
  readonly free: number
  readonly credited: number
}

export interface SearchPlan {
  readonly name: string
  /** The search's matches, as the preview counts them. */
  readonly matches: number
  /** Partitions the read needs to reach them past the 10,000-record paging depth. */
  readonly partitions: number
  /** Matches no partition can reach (the read warns about them); not counted anywhere below. */
  readonly unreachable: number
  /** Exact only: matches already bought and not due again. */
  readonly bought: number | undefined
  /** Exact only: matches never bought. */
  readonly new: number | undefined
  /** Exact only: matches bought before and due again (refresh_after_days). */
  readonly stale: number | undefined
  /** Exact only: matches an earlier search of this read buys (bought once). */
  readonly earlier: number | undefined
  /** Contacts to buy: new + stale (exact), or every reachable match (quick, an upper bound). */
  readonly due: number
  /** What the read spends on it, within what the budget has left when its turn comes. */
  readonly credits: number
  readonly requests: Requests
}

export interface EmailsPlan {
  /** Distinct emails configured, and those the read looks up (not done, or due again). */
  readonly configured: number
  readonly lookedUp: number
  /** Contacts the emails looked up match. */
  readonly matches: number
  readonly bought: number
  readonly new: number
  readonly stale: number
  readonly earlier: number
  readonly due: number
  readonly credits: number
  readonly requests: Requests
}

export interface KeysPlan {
  readonly configured: number
  /** Never appended. */
  readonly new: number
  /** Appended before and due again (refresh_after_days). */
  readonly stale: number
}

export interface CompaniesPlan {
  readonly domains: KeysPlan
  readonly names: KeysPlan
  /** Keys the read asks for: new + stale of both. */
  readonly due: number
  /** At one credit per key due, within the budget (a key may match no company, or several). */
  readonly credits: number
  readonly requests: Requests
}

export interface TaxonomyPlan {
  readonly productQueries: number
  readonly requests: Requests
}

/**
 * What refreshing the records bought before costs: those due again (refresh_after_days), the
 * observations the loader compares with the last ones to find what changed.
 */
export interface RefreshPlan {
  /**
   * Contacts bought before and due again: exact, those the searches and emails still match (each
   * once); quick, every contact of the saved state due again (an upper bound).
   */
  readonly contacts: number
  /** Company keys (domains and names) appended before and due again. */
  readonly companies: number
  /** At one credit per contact and per company key (included in `creditsNeeded`). */
  readonly credits: number
}

export interface Plan {
  readonly mode: Mode
  /** What the next read spends: the work due, within the budget. */
  readonly credits: number
  /** What all the work due would cost, budget or not. */
  readonly creditsNeeded: number
  readonly creditBudget: number
  readonly contacts:
    | {
        /** Contacts in the saved state, and how many of them are due again. */
        readonly inState: number
        readonly staleInState: number
        readonly searches: ReadonlyArray<SearchPlan>
        readonly emails: EmailsPlan | undefined
      }
    | undefined
  readonly companies: CompaniesPlan | undefined
  readonly taxonomy: TaxonomyPlan | undefined
  /** The part of the work due that refreshes records bought before. */
  readonly refresh: RefreshPlan
  /** The requests the read makes, and how long they take at the rate limit. */
  readonly requests: Requests & { readonly total: number }
  readonly requestsPerMinute: number
  readonly seconds: number
}

export interface PlanOptions {
  readonly config: SourceConfig
  /** The saved states (the source's --state input, or what the target's `_state` holds). */
  readonly state: unknown
  readonly mode: Mode
  /** The read's "now" (epoch ms): what refresh_after_days is counted from. */
  readonly now: number
}

/**
 * The work a read does, as the request counter sees it. Every figure the request counts need,
 * kept apart from how they are counted so that `requestsOf` is the one place to change when the
 * read's way of fetching changes.
 */
export type Work =
  | {
      readonly _tag: "Search"
      /** Count requests the partition plan took. */
      readonly countRequests: number
      /** Each partition's count. */
      readonly partCounts: ReadonlyArray<number>
      /** Contacts bought (= credits). */
      readonly credits: number
      /**
       * Read straight through the credited search (nothing of it fresh, the budget covering it):
       * no free listing, one credited request per page of each partition.
       */
      readonly direct: boolean
    }
  | { readonly _tag: "Emails"; readonly lookupPages: number; readonly credits: number }
  | { readonly _tag: "Companies"; readonly domainsBought: number; readonly namesBought: number }
  | { readonly _tag: "Taxonomy"; readonly categoryRequests: number; readonly productPages: number }

const pagesOf = (records: number, pageSize: number) => Math.ceil(records / pageSize)

/**
 * The requests a read makes for `work`, as the read fetches today:
 * - a search: its partition counts, then its free listing page by page (50 ids a page), then
 *   its purchases by match_ids in batches of page_size ids; or, read directly (`direct`: nothing
 *   of it bought and fresh yet, the budget covering it), its partition counts and then each
 *   partition's credited pages, page_size records a page, for the same credits.
 * - emails: each email's free listing, then the purchases in batches of page_size ids;
 * - companies: batches of page_size keys per kind (one page each when a key names one company);
 * - taxonomy: one request for the categories, and each product term's pages.
 */
export const requestsOf = (work: Work, pageSize: number): Requests => {
  switch (work._tag) {
    case "Search":
      if (work.direct)
        return {
          free: work.countRequests,
          credited: work.partCounts.reduce((sum, count) => sum + pagesOf(count, pageSize), 0),
        }
      return {
        free:
          work.countRequests +
          work.partCounts.reduce((sum, count) => sum + pagesOf(count, Limits.maxPageSize), 0),
        credited: pagesOf(work.credits, pageSize),
      }
    case "Emails":
      return { free: work.lookupPages, credited: pagesOf(work.credits, pageSize) }
    case "Companies":
      return {
        free: 0,
        credited: pagesOf(work.domainsBought, pageSize) + pagesOf(work.namesBought, pageSize),
      }
    case "Taxonomy":
      return { free: work.categoryRequests + work.productPages, credited: 0 }
  }
}

const sumRequests = (all: ReadonlyArray<Requests>): Requests => ({
  free: all.reduce((sum, r) => sum + r.free, 0),
  credited: all.reduce((sum, r) => sum + r.credited, 0),
})

/** The budget as the read spends it: each piece of work in turn takes what it needs of what is left. */
const allotter = (budget: number) => {
  let left = budget
  const allot = (due: number): number => {
    const granted = Math.min(due, left)
    left -= granted
    return granted
  }
  return Object.assign(allot, { left: (): number => left })
}

/** Sorts match ids the way the read does: fresh, new, stale, or bought earlier in this read. */
const classifier = (known: DatedSet, today: number, refreshAfterDays: number | undefined) => {
  const buying = new Set<string>()
  return () => {
    const counts = { bought: 0, new: 0, stale: 0, earlier: 0 }
    const add = (id: string) => {
      if (buying.has(id)) counts.earlier++
      else if (!known.has(id)) {
        counts.new++
        buying.add(id)
      } else if (known.needsBuying(id, today, refreshAfterDays)) {
        counts.stale++
        buying.add(id)
      } else counts.bought++
    }
    return { counts, add }
  }
}

const decodeInput = (state: unknown) =>
  Either.match(StreamState.decode(state), {
    onLeft: (description) => Effect.fail(new StateError({ stream: "(all)", path: "(root)", description })),
    onRight: Effect.succeed,
  })

/** The plan of the next incremental read of `config` from `state`; free requests only. */
export const plan = (
  options: PlanOptions,
): Effect.Effect<Plan, ApiError.ApiError | StateError, Client.SalesIntelClient> =>
  Effect.gen(function* () {
    const { config, mode } = options
    const client = yield* Client.SalesIntelClient
    const states = yield* decodeInput(options.state)
    const today = epochDay(options.now)
    const allot = allotter(config.credit_budget)
    const requests: Array<Requests> = []

    // Read order: taxonomy (free), contacts (searches, then emails), companies.
    let taxonomy: TaxonomyPlan | undefined
    if (config.taxonomy !== undefined) {
      const queries = productQueries(config)
      const pages = yield* Effect.forEach(
        queries,
        (filters) =>
          Effect.map(client.taxonomyProducts(filters, { page: 1, pageSize: 1 }), (page) =>
            Math.max(1, pagesOf(Math.min(page.resultCount ?? 0, Limits.maxDepth), Limits.maxPageSize)),
          ),
        { concurrency: config.concurrency },
      )
      const taxonomyRequests = requestsOf(
        { _tag: "Taxonomy", categoryRequests: 1, productPages: pages.reduce((a, b) => a + b, 0) },
        config.page_size,
      )
      requests.push(taxonomyRequests)
      taxonomy = { productQueries: queries.length, requests: taxonomyRequests }
    }

    let contacts: Plan["contacts"]
    const contactSettings = config.contacts
    if (contactSettings !== undefined) {
      const state = yield* decodeState("contacts", ContactsState, states.get("contacts"))
      const known = DatedSet.fromJson(state.known)
      const refresh = contactSettings.refresh_after_days
      const classify = classifier(known, today, refresh)
      const freshInState = known.hasFresh(today, refresh)

      const planSearch = (search: ContactSearch) =>
        Effect.gen(function* () {
          let partition: Partitioner.Plan | undefined
          const sorted = classify()
          if (mode === "quick") {
            partition = yield* PagedQuery.partition(client, search.filters, config.concurrency)
          } else {
            yield* PagedQuery.run(previewQuery(client, config, search)).pipe(
              Stream.runForEach((event) =>
                Effect.sync(() => {
                  if (event._tag === "Planned") partition = event.plan
                  else if (event._tag === "Page")
                    for (const item of event.page.items) sorted.add(item.record.match_id)
                }),
              ),
            )
          }
          const parts = partition?.parts ?? []
          const reachable = parts.reduce((sum, part) => sum + part.count, 0)
          const due = mode === "quick" ? reachable : sorted.counts.new + sorted.counts.stale
          // As the read chooses (streams/Contacts.ts incrementalSearch): directly when no contact
          // bought is fresh (none in the state, and none bought by an earlier search of this read:
          // the searches are the first to spend, so nothing of the budget is spent yet) and the
          // budget covers the search plus the last page of each partition.
          const direct =
            !freshInState &&
            allot.left() === config.credit_budget &&
            reachable + parts.length * config.page_size <= allot.left()
          const credits = allot(due)
          const searchRequests = requestsOf(
            {
              _tag: "Search",
              countRequests: partition?.countRequests ?? 0,
              partCounts: parts.map((part) => part.count),
              credits,
              direct,
            },
            config.page_size,
          )
          requests.push(searchRequests)
          const exact = <A>(value: A): A | undefined => (mode === "exact" ? value : undefined)
          return {
            name: search.name,
            matches: partition?.total ?? 0,
            partitions: parts.length,
            unreachable: (partition?.unsplittable ?? []).reduce((sum, part) => sum + part.count, 0),
            bought: exact(sorted.counts.bought),
            new: exact(sorted.counts.new),
            stale: exact(sorted.counts.stale),
            earlier: exact(sorted.counts.earlier),
            due,
            credits,
            requests: searchRequests,
          } satisfies SearchPlan
        })
      // In order, one at a time: an earlier search's contacts are bought once (as the read does).
      const searches = yield* Effect.forEach(contactSettings.searches, planSearch)

      let emails: EmailsPlan | undefined
      if (contactSettings.emails.length > 0) {
        const emailsDone = DatedSet.fromJson(state.emails)
        const pending = pendingEmails(contactSettings, emailsDone, today, true)
        const lookups = yield* Effect.forEach(
          pending,
          (email) => lookupEmail(client, email, contactSettings.match_on_job_history),
          { concurrency: config.concurrency },
        )
        const sorted = classify()
        for (const lookup of lookups) for (const id of lookup.ids) sorted.add(id)
        const due = sorted.counts.new + sorted.counts.stale
        const credits = allot(due)
        const emailRequests = requestsOf(
          { _tag: "Emails", lookupPages: lookups.reduce((sum, l) => sum + l.pages, 0), credits },
          config.page_size,
        )
        requests.push(emailRequests)
        emails = {
          configured: new Set(contactSettings.emails.map((email) => email.toLowerCase())).size,
          lookedUp: pending.length,
          matches: lookups.reduce((sum, lookup) => sum + lookup.ids.length, 0),
          ...sorted.counts,
          due,
          credits,
          requests: emailRequests,
        }
      }
      contacts = {
        inState: known.size,
        staleInState: known.size - known.countFresh(today, refresh),
        searches,
        emails,
      }
    }

    let companies: CompaniesPlan | undefined
    const companySettings = config.companies
    if (companySettings !== undefined) {
      const state = yield* decodeState("companies", CompaniesState, states.get("companies"))
      const refresh = companySettings.refresh_after_days
      const keysPlan = (keys: ReadonlyArray<string>, done: DatedSet) => {
        const due = dueKeys(keys, done, today, refresh)
        const fresh = due.filter((key) => !done.has(key)).length
        return {
          due: due.length,
          plan: {
            configured: new Set(keys.map((k) => k.toLowerCase())).size,
            new: fresh,
            stale: due.length - fresh,
          },
        }
      }
      const domains = keysPlan(companySettings.domains, DatedSet.fromJson(state.domains))
      const names = keysPlan(companySettings.names, DatedSet.fromJson(state.names))
      // Domains first, then names, as the read buys them.
      const domainsBought = allot(domains.due)
      const namesBought = allot(names.due)
      const companyRequests = requestsOf({ _tag: "Companies", domainsBought, namesBought }, config.page_size)
      requests.push(companyRequests)
      companies = {
        domains: domains.plan,
        names: names.plan,
        due: domains.due + names.due,
        credits: domainsBought + namesBought,
        requests: companyRequests,
      }
    }

    const dueCredits = [
      ...(contacts?.searches.map((s) => s.due) ?? []),
      contacts?.emails?.due ?? 0,
      companies?.due ?? 0,
    ]
    const spent = [
      ...(contacts?.searches.map((s) => s.credits) ?? []),
      contacts?.emails?.credits ?? 0,
      companies?.credits ?? 0,
    ]
    const total = sumRequests(requests)
    const requestsPerMinute = config.requests_per_minute
    const refresh = refreshOf(mode, contacts, companies)
    return {
      mode,
      credits: spent.reduce((a, b) => a + b, 0),
      creditsNeeded: dueCredits.reduce((a, b) => a + b, 0),
      creditBudget: config.credit_budget,
      contacts,
      companies,
      taxonomy,
      refresh,
      requests: { ...total, total: total.free + total.credited },
      requestsPerMinute,
      seconds: ((total.free + total.credited) * 60) / requestsPerMinute,
    } satisfies Plan
    // A budget of zero: every credited reservation is refused, so no credited request can be sent.
  }).pipe(Effect.provide(CreditBudget.layer(0)))

/** The refresh part of a plan's work, from the contact and company figures. */
const refreshOf = (
  mode: Mode,
  contacts: Plan["contacts"],
  companies: CompaniesPlan | undefined,
): RefreshPlan => {
  const staleMatches =
    (contacts?.searches.reduce((sum, search) => sum + (search.stale ?? 0), 0) ?? 0) +
    (contacts?.emails?.stale ?? 0)
  const refreshedContacts = mode === "quick" ? (contacts?.staleInState ?? 0) : staleMatches
  const refreshedCompanies = (companies?.domains.stale ?? 0) + (companies?.names.stale ?? 0)
  return {
    contacts: refreshedContacts,
    companies: refreshedCompanies,
    credits: refreshedContacts + refreshedCompanies,
  }
}
