/**
 * The forgotten people and companies taken out of the saved states: the contacts' bought set
 * (`known`, when the state holds it rather than the ledger) and emails looked up (`emails`), the
 * companies' domains appended (`domains`, `contact_domains`) and those that matched none
 * (`unmatched.domains`). A bought set is a record of days to ids, a day's ids a list or packed
 * (PackedIds); what is left of a day is written back the same way, an emptied day dropped.
 */
import { PackedIds } from "@salesintel/airbyte"
import * as Effect from "effect/Effect"
import { Database, type DatabaseError } from "../database/Database.ts"
import { qualified } from "../database/Sql.ts"

/** As the source writes a day (DatedSet.packAt): this many ids or more are packed. */
const packAt = 64

type Json = unknown

const isObject = (value: Json): value is Readonly<Record<string, Json>> =>
  typeof value === "object" && value !== null && !Array.isArray(value)

/** A dated set without `gone`'s ids, and how many it lost. */
const datedWithout = (
  set: Json,
  gone: ReadonlySet<string>,
): { readonly set: Json; readonly removed: number } => {
  if (!isObject(set)) return { set, removed: 0 }
  let removed = 0
  const days: Record<string, Json> = {}
  for (const [day, ids] of Object.entries(set)) {
    const list =
      typeof ids === "string" ? PackedIds.unpack(ids) : Array.isArray(ids) ? ids.map(String) : undefined
    if (list === undefined) {
      days[day] = ids
      continue
    }
    const kept = list.filter((id) => !gone.has(id.toLowerCase()) && !gone.has(id))
    removed += list.length - kept.length
    if (kept.length === list.length) days[day] = ids
    else if (kept.length > 0) days[day] = kept.length >= packAt ? PackedIds.pack(kept) : kept
  }
  return { set: days, removed }
}

/** A state with the given fields' dated sets (and unmatched domains) less `gone`. */
export const stateWithout = (
  state: Json,
  fields: ReadonlyArray<string>,
  gone: ReadonlySet<string>,
  unmatched: boolean,
): { readonly state: Json; readonly removed: number } => {
  if (!isObject(state)) return { state, removed: 0 }
  let removed = 0
  const next: Record<string, Json> = { ...state }
  for (const field of fields) {
    const result = datedWithout(state[field], gone)
    removed += result.removed
    if (result.removed > 0) next[field] = result.set
  }
  const lists = state.unmatched
  if (unmatched && isObject(lists) && Array.isArray(lists.domains)) {
    const kept = lists.domains.filter(
      (domain) => !(typeof domain === "string" && gone.has(domain.toLowerCase())),
    )
    removed += lists.domains.length - kept.length
    next.unmatched = { ...lists, domains: kept }
  }
  return { state: next, removed }
}

/** What goes from the saved states: people by match id or email, companies by domain. */
export interface Gone {
  readonly people: ReadonlyArray<string>
  readonly domains: ReadonlyArray<string>
}

/** Takes what goes out of the saved states (unless `dryRun`); how many entries went. */
export const without = (
  schema: string,
  gone: Gone,
  dryRun: boolean,
): Effect.Effect<number, DatabaseError, Database> =>
  Effect.gen(function* () {
    const db = yield* Database
    const table = qualified(schema, "_state")
    const rows = yield* db.query(
      `SELECT stream, state FROM ${table} WHERE stream IN ('contacts', 'companies') AND state IS NOT NULL`,
    )
    let removed = 0
    for (const row of rows) {
      const contacts = row.stream === "contacts"
      const result = contacts
        ? stateWithout(row.state, ["known", "emails"], new Set(gone.people), false)
        : stateWithout(row.state, ["domains", "contact_domains"], new Set(gone.domains), true)
      removed += result.removed
      if (result.removed > 0 && !dryRun)
        yield* db.query(`UPDATE ${table} SET state = $2::jsonb WHERE stream = $1`, [
          row.stream,
          JSON.stringify(result.state),
        ])
    }
    return removed
  })
