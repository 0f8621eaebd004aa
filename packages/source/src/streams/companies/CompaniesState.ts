/**
 * The companies stream's state: the domains and names appended, by the day (so refresh_after_days
 * keeps them fresh), the keys that matched no company when last looked up, and the contacts'
 * companies (companies/FromContacts.ts); what a read starts from, and its checkpoint.
 */
import * as Effect from "effect/Effect"
import * as Schema from "effect/Schema"
import * as Ahead from "../../bought/Ahead.ts"
import { BoughtSet } from "../../bought/BoughtSet.ts"
import { DatedSetJson, epochDay } from "../../bought/DatedSet.ts"
import type { CompaniesConfig } from "../../Config.ts"
import * as Output from "../../read/Output.ts"
import type { ReadInput } from "../../read/StreamDefinition.ts"
import { decodeState } from "../common.ts"
import * as FromContacts from "./FromContacts.ts"
import { dueKeys } from "./Keys.ts"
import * as KnownKeys from "./KnownKeys.ts"
import * as Unmatched from "./Unmatched.ts"

export const CompaniesState = Schema.Struct({
  domains: Schema.optionalWith(DatedSetJson, { default: () => ({}) }),
  names: Schema.optionalWith(DatedSetJson, { default: () => ({}) }),
  /** Keys that matched no company when last looked up (a state from before it: none known). */
  unmatched: Schema.optionalWith(Unmatched.UnmatchedState, { default: () => ({ domains: [], names: [] }) }),
  ...FromContacts.stateFields,
})

type KeyKind = Unmatched.KeyKind

/** Where a read stands as it begins: what was appended, the keys due, and the state to checkpoint. */
export const startFrom = (input: ReadInput, settings: CompaniesConfig) =>
  Effect.gen(function* () {
    const state = yield* decodeState("companies", CompaniesState, input.state)
    const today = epochDay(input.startedAt)
    const incremental = input.syncMode === "incremental"
    // A full refresh asks for every key again (bought 0 days ago is due).
    const refresh = incremental ? settings.refresh_after_days : 0
    const warnings = Ahead.warning(
      [
        Ahead.ahead(state.domains, "domains", ["domain", "domains"], today),
        Ahead.ahead(state.names, "names", ["name", "names"], today),
        Ahead.ahead(state.contact_domains, "contact_domains", ["contact domain", "contact domains"], today),
      ],
      today,
      Ahead.dueAnyway(incremental, settings.refresh_after_days),
    )
    const done: Record<KeyKind, BoughtSet> = {
      domains: BoughtSet.fromJson(state.domains, today, refresh),
      names: BoughtSet.fromJson(state.names, today, refresh),
    }
    // The config's keys, then a file's or a query's (checked before the read began: Read.ts).
    const listed = KnownKeys.configured(settings)
      ? yield* KnownKeys.keys(settings)
      : { domains: [], names: [] }
    const configured = {
      domains: [...settings.domains, ...listed.domains],
      names: [...settings.names, ...listed.names],
    }
    const due = {
      domains: dueKeys(configured.domains, done.domains),
      names: dueKeys(configured.names, done.names),
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
    return { state, done, due, configured, contacts, unmatched, checkpoint, warnings }
  })
