/**
 * What the next incremental read would cost, before it costs anything: the figures behind
 * `salesintel plan`. The plan is the read itself, run dry: `Read.read` over the catalog a sync
 * reads (the same streams, order, turns and credit budget), against a client whose free endpoints
 * are the provider's and whose credited ones are answered by a stand-in (read/StandIn.ts) that
 * charges the budget what the provider would and sends nothing. The streams tally their work as
 * they go (requests, records bought, how each listed key stood against the bought set:
 * Output.Tally), the read passes the tallies on as items, and the plan is those tallies, summed by
 * piece of work (`works`, in which a new stream's work shows with no change here) and the credits
 * the budget counted. Plan and sync agree by construction: there is no second copy of the read's
 * choices here, and nothing here knows a stream's internals (the sections below are views of the
 * works, by their names).
 *
 * - exact (default): each search's free listing is walked as the read walks it, and diffed
 *   against the contacts already bought: the credits are what the next read spends, to the credit.
 * - quick: counts only (the partitioning's requests); a listing is made up from the counts, every
 *   id new, less what the search's last read left held (its record in the contacts state:
 *   streams/contacts/LastRead.ts), the stale among them at the bought set's share of stale: an
 *   estimate, with the bounds of what it could not know (`estimate`). A search with no last read
 *   counts every reachable match, an upper bound.
 *
 * Companies are charged per company returned, which no free request tells: the stand-in returns
 * one company per key (a key may match no company, or several). A key the state knows matched a
 * company when last looked up counts one credit; one never looked up, or that matched none then,
 * counts one at most (a key that matches no company costs nothing): with such keys the plan's
 * credits are an upper bound, and `creditsExact` says so.
 */

import { Catalog, StreamState, Streams } from "@salesintel/airbyte"
import { Client, CreditBudget } from "@salesintel/core"
import * as Effect from "effect/Effect"
import * as Either from "effect/Either"
import * as Schema from "effect/Schema"
import * as Stream from "effect/Stream"
import * as Allowance from "../Allowance.ts"
import { LedgerError } from "../bought/BoughtLedger.ts"
import { DatedSet, DatedSetJson } from "../bought/DatedSet.ts"
import type * as Suppression from "../bought/Suppression.ts"
import type { SourceConfig } from "../Config.ts"
import { definitions } from "../Definitions.ts"
import { StateError } from "../StateError.ts"
import * as KnownSources from "../streams/contacts/KnownSources.ts"
import type * as Output from "./Output.ts"
import { MadeUpListing } from "./Quick.ts"
import * as Read from "./Read.ts"
import { type Mode, standIn } from "./StandIn.ts"

export type { Mode }
export { LedgerError, StateError }

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
  /**
   * Known contacts (emails, names at a domain, profile URLs, match ids, from the config, a file or
   * a query): distinct identities, and those the read looks up (not done, or due again).
   */
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
  /**
   * Of the new and stale, those not known to match a company: never looked up, or that matched none
   * when last looked up. Each costs a credit if it matches a company and nothing if it matches none.
   */
  readonly unconfirmed: number
}

export interface CompaniesPlan {
  readonly domains: KeysPlan
  readonly names: KeysPlan
  /** Keys the read asks for: new + stale of every kind (the contacts' companies too). */
  readonly due: number
  /** Of those, the keys not known to match a company (their credits are an upper bound). */
  readonly unconfirmed: number
  /**
   * At one credit per key due, within the budget (a key may match no company, or several): at
   * most this when some are unconfirmed.
   */
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

/**
 * Quick mode: how far `credits` may be from what the next read spends, and why. Without listing
 * ids it cannot know which held contacts left a search while as many others joined it (each one
 * a credit it does not count), nor which held contacts are the stale ones (taken at the set's
 * share), nor which companies the contacts due belong to (one new company each, at most).
 */
export interface QuickEstimate {
  /** The fewest credits the read can spend: stale taken at their fewest, no company for a contact due. */
  readonly creditsAtLeast: number
  /** The most: every contact taken as held replaced by a new one (and its company), within the budget. */
  readonly creditsAtMost: number
  /** Contacts taken as held and fresh, and as stale, from the searches' last reads. */
  readonly heldTaken: number
  readonly staleTaken: number
  /** Searches with no last read under their filters: every match counted. */
  readonly searchesUnknown: ReadonlyArray<string>
  /** What it could not know, in words. */
  readonly unknowns: ReadonlyArray<string>
}

export interface Plan {
  readonly mode: Mode
  /** The streams read in full (a full refresh buys everything again); incremental otherwise. */
  readonly fullRefresh: ReadonlyArray<string>
  /** What the next read spends: the work due, within the budget (at most this unless `creditsExact`). */
  readonly credits: number
  /**
   * Whether `credits` is exact: not in quick mode, and no company key it counts is unconfirmed
   * (one that matches no company costs nothing, so their credit is an upper bound).
   */
  readonly creditsExact: boolean
  /** What all the work due would cost, budget or not. */
  readonly creditsNeeded: number
  readonly creditBudget: number
  /** What the read may spend: creditBudget, or less where the credit allowance has less left. */
  readonly creditLimit: number
  /** Where the credit allowance stands before the read (spent this period, left, renewal); undefined without one. */
  readonly allowance: Allowance.Standing | undefined
  /** Contacts and company keys met that were forgotten (`salesintel forget`): passed over, never bought. */
  readonly suppressed: number
  /** The streams the read leaves unfinished (the budget does not cover their work due), as the dry read ended them. */
  readonly cut: ReadonlyArray<Read.StreamSummary>
  readonly contacts:
    | {
        /** Contacts in the saved state, and how many of them are due again. */
        readonly inState: number
        readonly staleInState: number
        readonly searches: ReadonlyArray<SearchPlan>
        readonly emails: EmailsPlan | undefined
        /**
         * A full refresh of the contacts read to its end: the contacts held before it that its
         * searches and emails do not find again. An overwrite deletes their rows; buying them back
         * costs one credit each. Undefined for an incremental read, or a full refresh the budget cuts.
         */
        readonly notReadAgain: number | undefined
      }
    | undefined
  readonly companies: CompaniesPlan | undefined
  readonly taxonomy: TaxonomyPlan | undefined
  /** The part of the work due that refreshes records bought before. */
  readonly refresh: RefreshPlan
  /** Every piece of work the dry read tallied, in the order it first tallied (the sections above are views of these). */
  readonly works: ReadonlyArray<WorkPlan>
  /** The requests the read makes, and how long they take at the rate limit. */
  readonly requests: Requests & { readonly total: number }
  readonly requestsPerMinute: number
  readonly seconds: number
  /** Quick mode's bounds and what it could not know; undefined in exact mode. */
  readonly estimate: QuickEstimate | undefined
}

export interface PlanOptions {
  readonly config: SourceConfig
  /** The saved states (the source's --state input, or what the target's `_state` holds). */
  readonly state: unknown
  readonly mode: Mode
  /** The read's "now" (epoch ms): what refresh_after_days is counted from. */
  readonly now: number
  /** Streams the read refreshes in full (`salesintel sync --full-refresh`); the rest incremental. */
  readonly fullRefresh?: ReadonlyArray<string> | undefined
  /** The catalog read, where it is not a sync's (the source's `read`, Replaced.ts); `fullRefresh` is then ignored. */
  readonly catalog?: Catalog.ConfiguredCatalog | undefined
  /** Where the credit allowance stands: the dry read spends at most what it has left. */
  readonly allowance?: Allowance.Standing | undefined
  /** The people and companies forgotten (`salesintel forget`): the read passes them over, tallied `suppressed`. */
  readonly suppressed?: Suppression.Matcher | undefined
}

type Counts = Readonly<Partial<Record<Output.Count, number>>>
type Tallies = ReadonlyMap<string, Counts>

/**
 * A piece of a stream's work, as the dry read tallied it (Output.Tally): what it would buy and
 * ask. A stream's work shows here (and in `salesintel plan`) as soon as it tallies, with no change
 * to this file.
 */
export interface WorkPlan {
  readonly stream: string
  /** The piece of work: `search <name>`, `emails`, `companies domains`, `taxonomy`, ... */
  readonly work: string
  /** Records it buys, one credit each, within the budget. */
  readonly credits: number
  /** Keys due: never bought (new) or bought before and due again (stale), budget or not. */
  readonly due: number
  readonly requests: Requests
  /** Every count it tallied (Output.Count). */
  readonly counts: Counts
}

const add = (tallies: Tallies, tally: Pick<Output.Tally, "work" | "counts">): Tallies => {
  const counts: Partial<Record<Output.Count, number>> = { ...tallies.get(tally.work) }
  for (const [name, n] of Object.entries(tally.counts) as Array<[Output.Count, number]>)
    counts[name] = (counts[name] ?? 0) + n
  return new Map(tallies).set(tally.work, counts)
}

const worksOf = (tallies: Tallies, streams: ReadonlyMap<string, string>): ReadonlyArray<WorkPlan> =>
  [...tallies].map(([work, counts]) => ({
    stream: streams.get(work) ?? "",
    work,
    credits: counts.bought ?? 0,
    due: dueIn(counts),
    requests: requestsIn(counts),
    counts,
  }))

const decodeInput = (state: unknown) =>
  Either.match(StreamState.decode(state), {
    onLeft: (description) => Effect.fail(new StateError({ stream: "(all)", path: "(root)", description })),
    onRight: Effect.succeed,
  })

/** The catalog a sync reads: every stream, incremental where it has it, except those refreshed in full. */
const catalogOf = (fullRefresh: ReadonlyArray<string>): Catalog.ConfiguredCatalog => {
  const incremental = Catalog.configuredAll("incremental", Streams.names)
  const refreshed = Catalog.configuredAll("full_refresh", fullRefresh)
  return {
    streams: incremental.streams.map(
      (entry) => refreshed.streams.find((r) => r.stream.name === entry.stream.name) ?? entry,
    ),
  }
}

interface Dry {
  readonly tallies: Tallies
  /** The stream each piece of work belongs to. */
  readonly streams: ReadonlyMap<string, string>
  readonly summary: Read.ReadSummary | undefined
}

/**
 * The read itself (Read.read, the engine a sync runs: the same catalog, order, turns and budget),
 * its tallies summed by work; and the credits it spent, as the budget counts them. A read that
 * fails fails the plan with its error.
 */
const runDry = (
  config: SourceConfig,
  states: StreamState.InputState,
  startedAt: number,
  catalog: Catalog.ConfiguredCatalog,
  mode: Mode,
  allowance: Allowance.Standing | undefined,
  suppressed: Suppression.Matcher | undefined,
) =>
  Effect.gen(function* () {
    // The rules a read keeps for a destination it does not know are the source's, not the plan's.
    const { items } = Read.read({
      config,
      catalog,
      state: states,
      startedAt,
      ownDestination: true,
      allowance,
      suppressed,
    })
    const start: Dry = { tallies: new Map(), streams: new Map(), summary: undefined }
    const dry = yield* Stream.runFold(items, start, (sum, item) => {
      if (item._tag === "Tally")
        return {
          ...sum,
          tallies: add(sum.tallies, item),
          streams: sum.streams.has(item.work)
            ? sum.streams
            : new Map(sum.streams).set(item.work, item.stream),
        }
      return item._tag === "Summary" ? { ...sum, summary: item.summary } : sum
    })
    const failure = dry.summary?.failure
    if (failure !== undefined)
      return yield* failure.error === undefined ? Effect.die(failure.message) : Effect.fail(failure.error)
    return {
      works: worksOf(dry.tallies, dry.streams),
      tallies: dry.tallies,
      spent: dry.summary?.creditsSpent ?? 0,
      cut: (dry.summary?.streams ?? []).filter((stream) => stream.incomplete),
    }
  }).pipe(
    Effect.provide(CreditBudget.layer(Allowance.limitOf(config.credit_budget, allowance))),
    // Quick: the listings are made up, so the searches' last reads stand for the diff (read/Quick.ts).
    mode === "quick" ? Effect.provideService(MadeUpListing, { madeUp: true }) : (effect) => effect,
  )

const requestsIn = (counts: Counts | undefined): Requests => ({
  free: counts?.freeRequests ?? 0,
  credited: counts?.creditedRequests ?? 0,
})

const dueIn = (counts: Counts | undefined) => (counts?.new ?? 0) + (counts?.stale ?? 0)

const searchPlan = (tallies: Tallies, mode: Mode, name: string): SearchPlan => {
  const counts = tallies.get(`search ${name}`)
  const exact = (value: number | undefined) => (mode === "exact" ? (value ?? 0) : undefined)
  return {
    name,
    matches: counts?.matches ?? 0,
    partitions: counts?.partitions ?? 0,
    unreachable: counts?.unreachable ?? 0,
    bought: exact(counts?.held),
    new: exact(counts?.new),
    stale: exact(counts?.stale),
    earlier: exact(counts?.earlier),
    due: dueIn(counts),
    credits: counts?.bought ?? 0,
    requests: requestsIn(counts),
  }
}

const emailsPlan = (tallies: Tallies): EmailsPlan => {
  const counts = tallies.get("emails")
  return {
    configured: counts?.configured ?? 0,
    lookedUp: counts?.lookedUp ?? 0,
    matches: counts?.listed ?? 0,
    bought: counts?.held ?? 0,
    new: counts?.new ?? 0,
    stale: counts?.stale ?? 0,
    earlier: counts?.earlier ?? 0,
    due: dueIn(counts),
    credits: counts?.bought ?? 0,
    requests: requestsIn(counts),
  }
}

const keysPlan = (counts: Counts | undefined): KeysPlan => ({
  configured: counts?.configured ?? 0,
  new: counts?.new ?? 0,
  stale: counts?.stale ?? 0,
  unconfirmed: counts?.unconfirmed ?? 0,
})

/** The companies' figures: the configured keys by kind; what is due and unconfirmed over every work of the stream. */
const companiesPlan = (tallies: Tallies, works: ReadonlyArray<WorkPlan>): CompaniesPlan => {
  const domains = tallies.get("companies domains")
  const names = tallies.get("companies names")
  const bought = tallies.get("companies")
  const ofStream = works.filter((work) => work.stream === "companies")
  return {
    domains: keysPlan(domains),
    names: keysPlan(names),
    due: ofStream.reduce((sum, work) => sum + work.due, 0),
    unconfirmed: ofStream.reduce((sum, work) => sum + (work.counts.unconfirmed ?? 0), 0),
    credits: bought?.bought ?? 0,
    requests: requestsIn(bought),
  }
}

/** The contacts part of the plan: the bought set as saved, then each search and the emails. */
const contactsPlan = (options: PlanOptions, tallies: Tallies): Plan["contacts"] => {
  const settings = options.config.contacts
  if (settings === undefined) return undefined
  const held = tallies.get("contacts held")
  return {
    inState: held?.inState ?? 0,
    staleInState: held?.staleInState ?? 0,
    searches: settings.searches.map((search) => searchPlan(tallies, options.mode, search.name)),
    emails: KnownSources.configured(settings) ? emailsPlan(tallies) : undefined,
    notReadAgain: held?.notReadAgain,
  }
}

const setSize = (json: unknown): number =>
  Either.match(Schema.decodeUnknownEither(DatedSetJson)(json ?? {}), {
    onLeft: () => 0,
    onRight: (set) => DatedSet.fromJson(set).size,
  })

/**
 * How many companies not held the first n contacts due work at, from the saved sets: C contacts
 * held, whose companies appended are H. Taken as a uniform occupancy (C contacts over N companies
 * fill N(1 - e^(-C/N)) of them), N is what makes that H; the next n fill N(e^(-C/N) - e^(-(C+n)/N))
 * more. Undefined (one each) when either set holds none; n when every contact held had a company
 * of its own.
 */
const newCompaniesOf = (states: StreamState.InputState): ((n: number) => number) | undefined => {
  const field = (stream: string, name: string): unknown => {
    const state = states.get(stream)
    return typeof state === "object" && state !== null ? (state as Record<string, unknown>)[name] : undefined
  }
  const held = setSize(field("contacts", "known"))
  const companies = setSize(field("companies", "contact_domains"))
  if (held === 0 || companies === 0) return undefined
  if (companies >= held) return (n) => n
  const filled = (n: number, over: number) => over * (1 - Math.exp(-n / over))
  // filled(held, N) grows with N from 0 towards held: bisect for `companies` (bounded: 100 halvings).
  let [low, high] = [companies, companies * 2]
  for (let i = 0; i < 100 && filled(held, high) < companies; i++) high *= 2
  for (let i = 0; i < 100; i++) {
    const middle = (low + high) / 2
    if (filled(held, middle) < companies) low = middle
    else high = middle
  }
  return (n) => Math.min(n, filled(held + n, high) - companies)
}

/** The plan of the next read of `config` from `state` (incremental, or `fullRefresh`); free requests only. */
export const plan = (options: PlanOptions): Effect.Effect<Plan, Read.ReadError, Client.SalesIntelClient> =>
  Effect.gen(function* () {
    const { config } = options
    const states = yield* decodeInput(options.state)
    const real = yield* Client.SalesIntelClient
    const catalog = options.catalog ?? catalogOf(options.fullRefresh ?? [])
    const fullRefresh =
      options.catalog === undefined
        ? (options.fullRefresh ?? [])
        : catalog.streams
            .filter((entry) => Catalog.syncModeOf(entry).syncMode === "full_refresh")
            .map((entry) => entry.stream.name)
    const { works, tallies, spent, cut } = yield* runDry(
      config,
      states,
      options.now,
      catalog,
      options.mode,
      options.allowance,
      options.suppressed,
    ).pipe(
      Effect.provideService(
        Client.SalesIntelClient,
        // A substream's keys come from its parent's records: the stand-in's must carry them.
        standIn(real, options.mode, {
          records: Object.values(definitions).some((definition) => definition.parent?.(config) !== undefined),
          newCompanies: options.mode === "quick" ? newCompaniesOf(states) : undefined,
        }),
      ),
    )
    const contacts = contactsPlan(options, tallies)
    const companies = config.companies === undefined ? undefined : companiesPlan(tallies, works)
    const taxonomy =
      config.taxonomy === undefined
        ? undefined
        : {
            productQueries: tallies.get("taxonomy")?.queries ?? 0,
            requests: requestsIn(tallies.get("taxonomy")),
          }
    const free = works.reduce((sum, work) => sum + work.requests.free, 0)
    const credited = works.reduce((sum, work) => sum + work.requests.credited, 0)
    // A key not known to match a company costs a credit or nothing: an upper bound where its stream buys.
    const bounded = works.some(
      (work) =>
        (work.counts.unconfirmed ?? 0) > 0 &&
        works.some((other) => other.stream === work.stream && other.credits > 0),
    )
    return {
      mode: options.mode,
      fullRefresh,
      credits: spent,
      creditsExact: options.mode === "exact" && !bounded,
      creditsNeeded: works.reduce((sum, work) => sum + work.due, 0),
      suppressed: works.reduce((sum, work) => sum + (work.counts.suppressed ?? 0), 0),
      works,
      creditBudget: config.credit_budget,
      creditLimit: Allowance.limitOf(config.credit_budget, options.allowance),
      allowance: options.allowance,
      cut,
      contacts,
      companies,
      taxonomy,
      refresh: refreshOf(options.mode, contacts, works),
      requests: { free, credited, total: free + credited },
      requestsPerMinute: config.requests_per_minute,
      seconds: ((free + credited) * 60) / config.requests_per_minute,
      estimate:
        options.mode === "quick"
          ? quickEstimate(Allowance.limitOf(config.credit_budget, options.allowance), config, works, spent)
          : undefined,
    } satisfies Plan
  })

/** The refresh part of a plan's work, from the contact and company figures. */
const refreshOf = (mode: Mode, contacts: Plan["contacts"], works: ReadonlyArray<WorkPlan>): RefreshPlan => {
  const staleMatches =
    (contacts?.searches.reduce((sum, search) => sum + (search.stale ?? 0), 0) ?? 0) +
    (contacts?.emails?.stale ?? 0)
  const refreshedContacts = mode === "quick" ? (contacts?.staleInState ?? 0) : staleMatches
  const refreshedCompanies = works
    .filter((work) => work.stream === "companies")
    .reduce((sum, work) => sum + (work.counts.stale ?? 0), 0)
  return {
    contacts: refreshedContacts,
    companies: refreshedCompanies,
    credits: refreshedContacts + refreshedCompanies,
  }
}

/**
 * A quick plan's bounds, from the searches' estimates (streams/contacts/LastRead.ts). At most: each
 * contact taken as held and fresh is new instead, and every contact due brings a company of its
 * own (when the companies of contacts are bought). At least: the contacts no held set can cover
 * (the largest search's matches past every contact held) and the fewest stale the bought set
 * allows, and no contact due brings a company not held; the rest of the work (emails, configured
 * companies) as planned.
 */
const quickEstimate = (
  limit: number,
  config: SourceConfig,
  works: ReadonlyArray<WorkPlan>,
  spent: number,
): QuickEstimate => {
  const searches = works.filter((work) => work.work.startsWith("search "))
  const sum = (count: Output.Count) => searches.reduce((total, work) => total + (work.counts[count] ?? 0), 0)
  const most = (of: (work: WorkPlan) => number) => searches.reduce((top, work) => Math.max(top, of(work)), 0)
  const heldTaken = sum("estimatedHeld")
  const staleTaken = sum("estimatedStale")
  const contactsBought = searches.reduce((total, work) => total + work.credits, 0)
  const fromContacts = works.find((work) => work.work === "companies from contacts")
  const companiesBought = works.find((work) => work.work === "companies")?.credits ?? 0
  const ofContacts = Math.min(companiesBought, fromContacts?.due ?? 0)
  const inState = works.find((work) => work.work === "contacts held")?.counts.inState ?? 0
  const uncovered = Math.max(
    0,
    most((work) => (work.counts.matches ?? 0) - (work.counts.unreachable ?? 0)) - inState,
  )
  const staleAtLeast = most((work) => (work.counts.estimatedStale ?? 0) - (work.counts.staleOver ?? 0))
  const others = Math.max(0, spent - contactsBought - ofContacts)
  const searchesUnknown = searches
    .filter((work) => (work.counts.unknownLastRead ?? 0) > 0)
    .map((work) => work.work.slice("search ".length))
  return {
    creditsAtLeast: Math.min(spent, others + Math.min(contactsBought, uncovered + staleAtLeast)),
    creditsAtMost: Math.min(
      limit,
      spent +
        heldTaken * (config.companies?.from_contacts === true ? 2 : 1) +
        (fromContacts === undefined ? 0 : Math.max(0, contactsBought - ofContacts)),
    ),
    heldTaken,
    staleTaken,
    searchesUnknown,
    unknowns: unknownsOf({ heldTaken, staleTaken, staleOver: sum("staleOver"), ofContacts, searchesUnknown }),
  }
}

/** What a quick plan could not know, in words. */
const unknownsOf = (figures: {
  readonly heldTaken: number
  readonly staleTaken: number
  readonly staleOver: number
  readonly ofContacts: number
  readonly searchesUnknown: ReadonlyArray<string>
}): ReadonlyArray<string> => {
  const unknown = figures.searchesUnknown
  return [
    figures.heldTaken > 0
      ? `which of the ${figures.heldTaken} contacts taken as held (the searches' last reads) left their search while others joined it: each joiner not held is a credit more`
      : undefined,
    figures.staleTaken > 0
      ? `which held contacts are due again: ${figures.staleTaken} taken as stale at the bought set's share, ${figures.staleOver} of them perhaps not`
      : undefined,
    figures.ofContacts > 0
      ? `which companies the contacts due work at: ${figures.ofContacts} taken as new, at the target's companies per contact held (from none to one each)`
      : undefined,
    unknown.length > 0
      ? `what ${unknown.join(", ")} hold${unknown.length === 1 ? "s" : ""}: no last read under ${unknown.length === 1 ? "its" : "their"} filters, so every match is counted (an upper bound)`
      : undefined,
  ].filter((line) => line !== undefined)
}
