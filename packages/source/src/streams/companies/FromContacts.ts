/**
 * `companies.from_contacts`: the companies stream as a substream of contacts. Its keys are the
 * company domains (Streams.derivedKeys) of the contacts held, each once:
 * - those this read's contacts stream emitted (ReadInput.parentKeys: the engine begins companies
 *   once contacts ended);
 * - in `salesintel sync`, those of every contact the target holds (HeldKeys);
 * - through the pipe, where nothing holds the contacts bought before, the state keeps what it
 *   needs: the domains appended because a contact named them (`contact_domains`, by day, so they
 *   are kept fresh by refresh_after_days) and those met but not appended yet
 *   (`pending_contact_domains`: the budget or a stop left them).
 * A domain also configured in `companies.domains` is bought there (counted `earlier` here); one
 * appended within refresh_after_days, by either, is held.
 */
import { Streams } from "@salesintel/airbyte"
import * as Effect from "effect/Effect"
import * as Option from "effect/Option"
import * as Schema from "effect/Schema"
import { BoughtSet } from "../../bought/BoughtSet.ts"
import { DatedSet, DatedSetJson } from "../../bought/DatedSet.ts"
import { HeldKeys } from "../../bought/HeldKeys.ts"
import type { CompaniesConfig, SourceConfig } from "../../Config.ts"
import * as Output from "../../read/Output.ts"
import type { Parent, ReadInput } from "../../read/StreamDefinition.ts"
import type { UnmatchedState } from "./Unmatched.ts"

/** The companies state's fields for the contacts' companies (a state from before them: none). */
export const stateFields = {
  /** Company domains appended because a contact named them, by the day appended. */
  contact_domains: Schema.optionalWith(DatedSetJson, { default: () => ({}) }),
  /** Company domains of contacts met and not appended yet. */
  pending_contact_domains: Schema.optionalWith(Schema.Array(Schema.String), { default: () => [] }),
}

interface State {
  readonly contact_domains: DatedSetJson
  readonly pending_contact_domains: ReadonlyArray<string>
  readonly unmatched: UnmatchedState
}

const companyDomain = Streams.derivedKeys.contacts.company_domain
const key: Streams.DerivedKey = { stream: "contacts", key: "company_domain" }

/** With `from_contacts`, companies reads the keys contacts' records give. */
export const parent = (config: SourceConfig): Parent | undefined =>
  config.companies?.from_contacts === true
    ? {
        key,
        keyOf: (record) =>
          Streams.isDecodedBy(Streams.streams.contacts, record) ? companyDomain(record.value) : undefined,
      }
    : undefined

/** Every contact domain known to this read: met now, held by the target, kept in the state. */
const met = (input: ReadInput, state: State) =>
  Effect.gen(function* () {
    const held = yield* Effect.serviceOption(HeldKeys)
    const fromTarget = Option.isSome(held) ? yield* held.value.keys(key) : []
    const keys = new Set<string>(input.parentKeys)
    for (const key of fromTarget) keys.add(key)
    for (const key of state.pending_contact_domains) keys.add(key)
    for (const [key] of DatedSet.fromJson(state.contact_domains).entries()) keys.add(key)
    return keys
  })

type Standing = "earlier" | "new" | "stale" | "held"

/**
 * The contacts' company domains this read appends (sorted, so a budget that cuts them cuts the
 * same ones in the plan and the sync), their standing as a tally, and the state's fields as the
 * read goes: `done` records what is bought.
 */
export const keys = (
  input: ReadInput,
  settings: CompaniesConfig,
  state: State,
  configuredDone: BoughtSet,
  today: number,
  refresh: number | undefined,
) =>
  Effect.gen(function* () {
    const done = BoughtSet.fromJson(state.contact_domains, today, refresh)
    const known = settings.from_contacts ? yield* met(input, state) : new Set<string>()
    const configured = new Set(settings.domains.map((domain) => domain.toLowerCase()))
    const matchedNone = new Set(state.unmatched.domains)
    const standing = (key: string): Standing => {
      if (configured.has(key)) return "earlier"
      const sets = [done, configuredDone].filter((set) => set.has(key))
      if (sets.length === 0) return "new"
      return sets.some((set) => !set.due(key)) ? "held" : "stale"
    }
    const counts: Record<Standing, number> = { earlier: 0, new: 0, stale: 0, held: 0 }
    const due: Array<string> = []
    let unconfirmed = 0
    for (const key of known) {
      const stands = standing(key)
      counts[stands]++
      if (stands !== "new" && stands !== "stale") continue
      due.push(key)
      if (stands === "new" || matchedNone.has(key)) unconfirmed++
    }
    due.sort()
    const tallies = settings.from_contacts
      ? [Output.tally("companies from contacts", { listed: known.size, ...counts, unconfirmed })]
      : []
    // Kept as they were when from_contacts is off, so turning it on again loses nothing.
    const toJson = () => ({
      contact_domains: done.toJson(),
      pending_contact_domains: settings.from_contacts
        ? due.filter((key) => done.due(key))
        : [...state.pending_contact_domains],
    })
    return { done, due, tallies, toJson }
  })
