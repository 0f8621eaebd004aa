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
import * as Stream from "effect/Stream"
import * as Suppression from "../bought/Suppression.ts"
import type { SourceConfig } from "../Config.ts"
import * as Output from "../read/Output.ts"
import * as Purchase from "../read/Purchase.ts"
import type { ReadInput, StreamDefinition } from "../read/StreamDefinition.ts"
import { startFrom } from "./companies/CompaniesState.ts"
import * as FromContacts from "./companies/FromContacts.ts"
import {
  type Company,
  heldBy,
  type KindEvent,
  purchase,
  standings,
  unmatchedWarnings,
} from "./companies/Keys.ts"
import * as KnownKeys from "./companies/KnownKeys.ts"

const isConfigured = (config: SourceConfig) =>
  config.companies !== undefined &&
  (config.companies.domains.length + config.companies.names.length > 0 ||
    KnownKeys.configured(config.companies) ||
    config.companies.from_contacts)

/** The domains due less the forgotten ones (names are kept: a name is no domain to test). */
const withoutForgotten = (
  suppressions: Suppression.Matcher,
  start: Pick<Effect.Effect.Success<ReturnType<typeof startFrom>>, "due" | "contacts">,
) => {
  if (suppressions.empty) return { kept: start.due, contacts: start.contacts, forgotten: 0 }
  const keep = (keys: ReadonlyArray<string>) => keys.filter((key) => !suppressions.has("domain", key))
  const domains = keep(start.due.domains)
  const contactsDue = keep(start.contacts.due)
  const forgotten = start.due.domains.length - domains.length + start.contacts.due.length - contactsDue.length
  return {
    kept: { ...start.due, domains },
    contacts: { ...start.contacts, due: contactsDue },
    forgotten,
  }
}

const read = (input: ReadInput) =>
  Stream.unwrap(
    Effect.gen(function* () {
      const settings = input.config.companies
      if (settings === undefined || !isConfigured(input.config)) return Stream.empty
      const client = yield* Client.SalesIntelClient
      const start = yield* startFrom(input, settings)
      const { state, done, configured, unmatched, checkpoint, warnings } = start
      // A forgotten company's domain is never asked for, configured, known or a contact's.
      const { kept: due, contacts, forgotten } = withoutForgotten(input.suppressed ?? Suppression.none, start)
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
        recordBought: (event) => {
          const asked = event.from === "contacts" ? contacts.done : done[event.kind]
          asked.record(event.keys)
          // What each company returned proves held, as its row will: its domains (those not asked
          // by this batch with the appended ones, so the contacts' set keeps only what contacts
          // named) and its name.
          const proven = event.items.map((item) => heldBy(item.record))
          const keys = new Set(event.keys)
          done.domains.record(proven.flatMap((held) => held.domains).filter((key) => !keys.has(key)))
          done.names.record(proven.flatMap((held) => held.names).filter((key) => !keys.has(key)))
        },
        recordUnmatched: (event) => unmatched.record(event.kind, event.keys, event.unmatched),
        unmatchedWarnings: unmatchedWarnings(configured),
        // At the bought sets' cadence: a checkpoint carries every set, and the contacts' may be large.
        everyBatch: false,
        checkpoint,
        bought: contacts.done.size > done.domains.size ? contacts.done : done.domains,
        record: (item) =>
          Output.record(Streams.streams.companies, item, { [Streams.addedFields.fetchedAt]: fetchedAt }),
        detail: "companies",
        work: "companies",
        endpoint: "technologies.append",
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
      const standing = [...standings(configured, done, due, state.unmatched), ...contacts.tallies]
      const opening = Stream.make(
        ...warnings,
        Output.estimate(Math.min(available, keys)),
        ...standing,
        ...(forgotten === 0 ? [] : [Output.tally("companies", { suppressed: forgotten })]),
      )
      return Stream.concat(opening, bought)
    }),
  )

export const companies: StreamDefinition<CompanyTechnologies.CompanyTechnologies> = {
  stream: Streams.streams.companies,
  credited: true,
  isConfigured,
  configuredBy:
    "companies.domains, companies.names, companies.domains_file, companies.domains_query or companies.from_contacts",
  parent: FromContacts.parent,
  read,
}
