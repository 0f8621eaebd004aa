/**
 * The companies' keys and their purchase: the configured domains and names due (each once,
 * case-folded), how each kind stands against what was appended (the plan's figures), the keyed
 * purchase of one kind of key (an append per batch of up to page_size keys), and the warnings for
 * keys that matched no company.
 */
import type { ApiError, Client, CompanyTechnologies, CreditBudget } from "@salesintel/core"
import * as Stream from "effect/Stream"
import type { BoughtSet } from "../../bought/BoughtSet.ts"
import type { CompaniesConfig } from "../../Config.ts"
import * as KeyedPurchase from "../../components/KeyedPurchase.ts"
import * as Output from "../../read/Output.ts"
import type { ReadInput } from "../../read/StreamDefinition.ts"
import * as Unmatched from "./Unmatched.ts"

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

export type Company = CompanyTechnologies.CompanyTechnologies

/** Spaces trimmed and case folded, as SQL's lower(btrim(...)). */
const folded = (text: string) => text.replace(/^ +| +$/g, "").toLowerCase()

/**
 * The keys a company bought proves held: each of its domains and its whole name, trimmed and
 * case-folded. They are what the loader reads back from its row to mend a state that says less
 * than the companies table (HeldCompanies.ts in @salesintel/postgres, the SQL twin, over the
 * `company_domains` and `company_name` columns, which take these same fields). A read records them
 * with the keys it asked, so its state says what the table holds.
 */
export const heldBy = (
  company: Company,
): { readonly domains: ReadonlyArray<string>; readonly names: ReadonlyArray<string> } => {
  const domains = (company.company_domains ?? company.company?.domains ?? [])
    .map(folded)
    .filter((domain) => domain.length > 0)
  const name = company.company_name ?? company.company?.name
  const names = name === undefined || name === null || folded(name).length === 0 ? [] : [folded(name)]
  return { domains, names }
}

/** A purchase event, with the kind of key it bought by and where its keys came from. */
export type KindEvent = KeyedPurchase.Event<string, Company> & {
  readonly kind: KeyKind
  readonly from: "config" | "contacts"
}

/** One kind of key's purchase, its batches emitted in key order: a batch's keys are done when it is read to the end. */
export const purchase = (
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

/** The keys of each kind the config names: its lists, and a file's or a query's rows. */
export type Configured = Readonly<Record<KeyKind, ReadonlyArray<string>>>

/** How the configured keys of each kind stand (the plan's figures): a tally per kind. */
export const standings = (
  settings: Configured,
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
const spellingOf = (settings: Configured) => {
  const spelled = new Map<string, string>()
  for (const key of [...settings.domains, ...settings.names])
    if (!spelled.has(key.toLowerCase())) spelled.set(key.toLowerCase(), key)
  return (key: string) => spelled.get(key) ?? key
}

/** One WARN per kind (and per origin: the config, the contacts) whose keys looked up by this read matched no company. */
export const unmatchedWarnings =
  (settings: Configured) =>
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
