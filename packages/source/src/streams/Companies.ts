/**
 * The companies stream, as a description over the keyed purchase: technologies appended to
 * companies named by domain (or by name), in batches of up to page_size keys per request, each
 * reserving one credit per key it asks for, one record per company returned. With `from_contacts`
 * it is a substream of contacts: the company domains of the contacts held are keys too
 * (companies/FromContacts.ts).
 *
 * incremental is by key: a domain or name already appended is not bought again until it is older
 * than refresh_after_days. Every key of a batch is marked done once the batch is read to the end
 * (keys that matched no company cost nothing and are not asked for again); those keys are named in
 * a WARN and kept in the state's `unmatched` (companies/Unmatched.ts).
 */
import { Streams } from "@salesintel/airbyte"
import { type ApiError, Client, type CompanyTechnologies, CreditBudget } from "@salesintel/core"
import * as Effect from "effect/Effect"
import * as Schema from "effect/Schema"
import * as Stream from "effect/Stream"
import { BoughtSet } from "../bought/BoughtSet.ts"
import { DatedSetJson, epochDay } from "../bought/DatedSet.ts"
import type { CompaniesConfig, SourceConfig } from "../Config.ts"
import * as KeyedPurchase from "../components/KeyedPurchase.ts"
import * as Output from "../read/Output.ts"
import * as Purchase from "../read/Purchase.ts"
import type { ReadInput, StreamDefinition } from "../read/StreamDefinition.ts"
import { decodeState } from "./common.ts"
import * as FromContacts from "./companies/FromContacts.ts"
import * as Unmatched from "./companies/Unmatched.ts"

export const CompaniesState = Schema.Struct({
  domains: Schema.optionalWith(DatedSetJson, { default: () => ({}) }),
  names: Schema.optionalWith(DatedSetJson, { default: () => ({}) }),
  /** Keys that matched no company when last looked up (a state from before it: none known). */
  unmatched: Schema.optionalWith(Unmatched.UnmatchedState, { default: () => ({ domains: [], names: [] }) }),
  ...FromContacts.stateFields,
})

type KeyKind = Unmatched.KeyKind

const techFilters = (settings: CompaniesConfig) => ({
  ...(settings.tech_category === undefined ? {} : { tech_category: settings.tech_category }),
  ...(settings.tech_subcategory === undefined ? {} : { tech_subcategory: settings.tech_subcategory }),
  ...(settings.tech_product === undefined ? {} : { tech_product: settings.tech_product }),
  ...(settings.tech_vendor === undefined ? {} : { tech_vendor: settings.tech_vendor }),
  ...(settings.is_international === undefined ? {} : { is_international: settings.is_international }),
  ...(settings.verified === undefined ? {} : { verified: settings.verified }),
})

const configuredKeys = (keys: ReadonlyArray<string>) => new Set(keys.map((key) => key.toLowerCase())).size

/** The keys a read asks for: each once (case-folded), and only those `done` has due. */
export const dueKeys = (keys: ReadonlyArray<string>, done: BoughtSet): ReadonlyArray<string> =>
  [...new Set(keys.map((key) => key.toLowerCase()))].filter((key) => done.due(key))

const isConfigured = (config: SourceConfig) =>
  config.companies !== undefined &&
  (config.companies.domains.length + config.companies.names.length > 0 || config.companies.from_contacts)

type Company = CompanyTechnologies.CompanyTechnologies

/** A purchase event, with the kind of key it bought by and where its keys came from. */
type KindEvent = KeyedPurchase.Event<string, Company> & {
  readonly kind: KeyKind
  readonly from: "config" | "contacts"
}

/** One kind of key's purchase, its batches emitted in key order: a batch's keys are done when it is read to the end. */
const purchase = (
  client: Client.SalesIntelClientService,
  input: ReadInput,
  settings: CompaniesConfig,
  kind: KeyKind,
  keys: ReadonlyArray<string>,
  from: KindEvent["from"] = "config",
): Stream.Stream<KindEvent, ApiError.ApiError, CreditBudget.CreditBudget> =>
  KeyedPurchase.run({
    keys: Stream.fromIterable(keys),
    pageSize: input.config.page_size,
    // Batches in flight at once as pages are (KeyedPurchase emits each whole, in key order, so a
    // batch's keys are still marked done once it is read to the end); one at a time, a hundred
    // domains took a round trip each 50.
    concurrency: input.config.concurrency,
    retry: input.config.retry,
    fetch: (batch, paging) =>
      client.appendTechnologies(
        {
          ...(kind === "domains" ? { company_domain: batch } : { company_name: batch }),
          ...techFilters(settings),
        },
        paging,
      ),
    oneRecordPerKey: false,
    matches: Unmatched.matches(kind),
  }).pipe(Stream.map((event) => ({ ...event, kind, from })))

/** How the configured keys of each kind stand (the plan's figures): a tally per kind. */
const standings = (
  settings: CompaniesConfig,
  done: Readonly<Record<KeyKind, BoughtSet>>,
  due: Readonly<Record<KeyKind, ReadonlyArray<string>>>,
  unmatched: Unmatched.UnmatchedState,
) =>
  (["domains", "names"] as const).map((kind) => {
    const matchedNone = new Set(unmatched[kind])
    return Output.tally(`companies ${kind}`, {
      configured: configuredKeys(settings[kind]),
      new: due[kind].filter((key) => !done[kind].has(key)).length,
      stale: due[kind].filter((key) => done[kind].has(key)).length,
      // Never looked up, or matched no company then: at most one credit each, maybe none.
      unconfirmed: due[kind].filter((key) => !done[kind].has(key) || matchedNone.has(key)).length,
    })
  })

/** The configured spelling of a (lower-cased) key, for the user's eyes. */
const spellingOf = (settings: CompaniesConfig) => {
  const spelled = new Map<string, string>()
  for (const key of [...settings.domains, ...settings.names])
    if (!spelled.has(key.toLowerCase())) spelled.set(key.toLowerCase(), key)
  return (key: string) => spelled.get(key) ?? key
}

/** One WARN per kind (and per origin: the config, the contacts) whose keys looked up by this read matched no company. */
const unmatchedWarnings =
  (settings: CompaniesConfig) =>
  (events: ReadonlyArray<Extract<KindEvent, { readonly _tag: "Unmatched" }>>): ReadonlyArray<Output.Log> =>
    (
      [
        ["domains", "config"],
        ["names", "config"],
        ["domains", "contacts"],
      ] as const
    ).flatMap(([kind, from]) => {
      const ofKind = events.filter((event) => event.kind === kind && event.from === from)
      const unmatched = ofKind.flatMap((event) => event.unmatched)
      if (unmatched.length === 0) return []
      const lookedUp = ofKind.reduce((sum, event) => sum + event.keys.length, 0)
      return [Unmatched.warning(kind, lookedUp, unmatched, spellingOf(settings), from)]
    })

/** Where a read stands as it begins: what was appended, the keys due, and the state to checkpoint. */
const startFrom = (input: ReadInput, settings: CompaniesConfig) =>
  Effect.gen(function* () {
    const state = yield* decodeState("companies", CompaniesState, input.state)
    const today = epochDay(input.startedAt)
    yield* BoughtSet.checkDays(state.domains, "companies", "domains", today)
    yield* BoughtSet.checkDays(state.names, "companies", "names", today)
    // A full refresh asks for every key again (bought 0 days ago is due).
    const refresh = input.syncMode === "incremental" ? settings.refresh_after_days : 0
    const done: Record<KeyKind, BoughtSet> = {
      domains: BoughtSet.fromJson(state.domains, today, refresh),
      names: BoughtSet.fromJson(state.names, today, refresh),
    }
    const due = {
      domains: dueKeys(settings.domains, done.domains),
      names: dueKeys(settings.names, done.names),
    }
    const contacts = yield* FromContacts.keys(input, settings, state, done.domains, today, refresh)
    const unmatched = yield* Unmatched.standing(state.unmatched)
    const checkpoint = Effect.map(unmatched.toJson, (json) =>
      Output.checkpoint({
        domains: done.domains.toJson(),
        names: done.names.toJson(),
        ...json,
        ...contacts.toJson(),
      }),
    )
    return { state, done, due, contacts, unmatched, checkpoint }
  })

const read = (input: ReadInput) =>
  Stream.unwrap(
    Effect.gen(function* () {
      const settings = input.config.companies
      if (settings === undefined || !isConfigured(input.config)) return Stream.empty
      const client = yield* Client.SalesIntelClient
      const { state, done, due, contacts, unmatched, checkpoint } = yield* startFrom(input, settings)
      const fetchedAt = new Date(input.startedAt).toISOString()
      const bought = Purchase.keyedBatches<Company, KindEvent, ApiError.ApiError, CreditBudget.CreditBudget>({
        // The configured keys first, then the contacts' companies.
        events: Stream.concat(
          Stream.concat(
            purchase(client, input, settings, "domains", due.domains),
            purchase(client, input, settings, "names", due.names),
          ),
          purchase(client, input, settings, "domains", contacts.due, "contacts"),
        ),
        recordBought: (event) =>
          (event.from === "contacts" ? contacts.done : done[event.kind]).record(event.keys),
        recordUnmatched: (event) => unmatched.record(event.kind, event.keys, event.unmatched),
        unmatchedWarnings: unmatchedWarnings(settings),
        // At the bought sets' cadence: a checkpoint carries every set, and the contacts' may be large.
        everyBatch: false,
        checkpoint,
        bought: contacts.done.size > done.domains.size ? contacts.done : done.domains,
        record: (item) =>
          Output.record(Streams.streams.companies, item, { [Streams.addedFields.fetchedAt]: fetchedAt }),
        detail: "companies",
        work: "companies",
        // At least one credit per key left: append charges per company returned.
        shortfall: (left) =>
          Effect.succeed(
            left === 0
              ? undefined
              : Output.shortfall(left, left, "companies (at least one credit per domain or name left)"),
          ),
      })
      // One record per key as a rule (a key may match no company, or several): within the budget.
      const { available } = yield* (yield* CreditBudget.CreditBudget).snapshot
      const keys = due.domains.length + due.names.length + contacts.due.length
      const standing = [...standings(settings, done, due, state.unmatched), ...contacts.tallies]
      return Stream.concat(Stream.make(Output.estimate(Math.min(available, keys)), ...standing), bought)
    }),
  )

export const companies: StreamDefinition<CompanyTechnologies.CompanyTechnologies> = {
  stream: Streams.streams.companies,
  credited: true,
  isConfigured,
  parent: FromContacts.parent,
  read,
}
