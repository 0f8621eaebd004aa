/**
 * The companies' bought set held by their table, as the contacts' is by theirs (Ledger.ts): the
 * companies stream keeps what it bought in its state (the domains and names appended, and the
 * domains of the contacts' companies, each by day), and the `companies` table is the truth of it.
 * A saved state that says less than the table (deleted, emptied by hand, older than the rows) or
 * another day than a row's `fetched_at` is mended from the rows before anything reads it: by
 * `salesintel sync` (a line says so, and the state it commits holds the mended set), by the plan
 * and by `salesintel-pg state` (Ledger.exported), so none of them buys a company the table holds.
 *
 * What a row proves bought: each of its `company_domains` (a domain asked, configured or a
 * contact's company's, as the provider spells it: trimmed, case-folded, as the source asks), and
 * its `company_name` (a name asked that is the company's whole name). A name asked that is only part
 * of one (the provider matches names by "contains") is known by the state alone. A key the table
 * does not hold is left as the state has it: a domain that matched no company costs nothing to ask
 * again, and one the state knows by another spelling is not forgotten. The source records these
 * same keys for each company it buys (`heldBy` in its companies/Keys.ts), so a state a run
 * committed is in step and the mend, which says what it changed, says nothing.
 *
 * The held keys are read in one set-based statement over the table; the state's sets are decoded
 * as the source decodes them (lists, or ids packed by PackedIds) and held in memory only as long as
 * the mend takes, as the source itself holds them for the whole read.
 */
import { type Message, PackedIds, StreamState } from "@salesintel/airbyte"
import * as Effect from "effect/Effect"
import { Database, type DatabaseError } from "../database/Database.ts"
import { fetchedDaySql, qualified } from "../database/Sql.ts"
import { boughtTable } from "../schema/Bookkeeping.ts"

const stream = "companies"

/** The kinds of key a company is bought by, and the state fields that hold each's set. */
type Kind = "domains" | "names"
const fieldsOf: Readonly<Record<Kind, ReadonlyArray<string>>> = {
  // A domain is bought by the config's list or as a contact's company: held in either set.
  domains: ["domains", "contact_domains"],
  names: ["names"],
}

/**
 * The keys the rows prove bought, by kind: each day with the keys whose latest row was fetched on
 * it (each key once), grouped so in SQL (a row a day, not a row a key, crosses the wire).
 */
export type Held = Readonly<Record<Kind, ReadonlyArray<readonly [day: number, keys: ReadonlyArray<string>]>>>

/**
 * The keys the companies table of `schema` holds: one statement, each key once with its latest
 * row's fetched day (a key that returned several companies is as fresh as its latest purchase).
 * None when the table does not exist yet, or the schema is older than the ledger (version 5),
 * which the plan reads without migrating: as the contacts' (Ledger.ts).
 */
export const held = (schema: string): Effect.Effect<Held, DatabaseError, Database> =>
  Effect.gen(function* () {
    const db = yield* Database
    const table = qualified(schema, "companies")
    const out: Record<Kind, Array<readonly [number, ReadonlyArray<string>]>> = { domains: [], names: [] }
    const [present] = yield* db.query(
      "SELECT to_regclass($1) IS NOT NULL AND to_regclass($2) IS NOT NULL AS present",
      [qualified(schema, boughtTable.name), table],
    )
    if (present?.present !== true) return out
    const day = fetchedDaySql("t")
    const rows = yield* db.query(
      `SELECT kind, day, array_agg(key) AS keys FROM (
         SELECT 'domains' AS kind, lower(btrim(d.domain)) AS key, max(${day}) AS day
           FROM ${table} AS t, unnest(t.company_domains) AS d(domain)
          WHERE btrim(d.domain) <> '' GROUP BY 2
         UNION ALL
         SELECT 'names', lower(btrim(t.company_name)), max(${day}) FROM ${table} AS t
          WHERE btrim(t.company_name) <> '' GROUP BY 2
       ) AS held GROUP BY kind, day ORDER BY kind, day`,
    )
    for (const row of rows)
      out[row.kind === "names" ? "names" : "domains"].push([
        Number(row.day),
        (row.keys as Array<unknown>).map(String),
      ])
    return out
  })

/** A day key as the source writes it (DatedSet.ts): a day number, no leading zero. */
const dayKey = /^(0|[1-9]\d{0,5})$/

/**
 * A state's set (day -> keys, a list or packed) as key -> day, the later day winning as the source
 * reads it; undefined when it is not such a set (the source refuses it with its path: the mend
 * leaves it as it is).
 */
const decodeSet = (value: unknown): Map<string, number> | undefined => {
  if (value === undefined) return new Map()
  if (typeof value !== "object" || value === null || Array.isArray(value)) return undefined
  const set = new Map<string, number>()
  for (const [day, keys] of Object.entries(value)) {
    if (!dayKey.test(day)) return undefined
    const list = typeof keys === "string" ? unpacked(keys) : keys
    if (!Array.isArray(list) || !list.every((key) => typeof key === "string")) return undefined
    for (const key of list as ReadonlyArray<string>) set.set(key, Math.max(set.get(key) ?? 0, Number(day)))
  }
  return set
}

const unpacked = (packed: string): ReadonlyArray<string> | undefined => {
  if (!packed.startsWith(PackedIds.packedPrefix)) return undefined
  try {
    return PackedIds.unpack(packed)
  } catch {
    return undefined
  }
}

/** key -> day in the state's form: by day, in day order, each day's keys as a list. */
const encodeSet = (set: ReadonlyMap<string, number>): Record<string, ReadonlyArray<string>> => {
  const byDay = new Map<number, Array<string>>()
  for (const [key, day] of set) {
    const keys = byDay.get(day)
    if (keys === undefined) byDay.set(day, [key])
    else keys.push(key)
  }
  return Object.fromEntries(
    [...byDay.keys()].sort((a, b) => a - b).map((day) => [String(day), byDay.get(day) ?? []]),
  )
}

/** What a mend changed: keys the state lacked, keys whose day was not their rows'. */
export interface Mended {
  readonly added: number
  readonly redated: number
}

/**
 * The companies state `state` (undefined: none saved) with the keys `held` written in: a key no
 * set of its kind holds is added to the first (the domains appended, the names appended), a key a
 * set holds on another day gets its rows' day there. Every other field, and every set the mend
 * did not change, is left exactly as it was; a set that does not decode leaves the state as it is.
 */
export const mendState = (
  state: Message.JsonObject | undefined,
  held: Held,
): { readonly state: Message.JsonObject | undefined; readonly mended: Mended } => {
  const none = { state, mended: { added: 0, redated: 0 } }
  const fields = [...fieldsOf.domains, ...fieldsOf.names]
  const sets = new Map(fields.map((field) => [field, decodeSet(state?.[field])]))
  if ([...sets.values()].some((set) => set === undefined)) return none
  const changed = new Set<string>()
  let added = 0
  let redated = 0
  for (const kind of ["domains", "names"] as const) {
    const holding = fieldsOf[kind].map(
      (field) => [field, sets.get(field) ?? new Map<string, number>()] as const,
    )
    for (const [day, keys] of held[kind])
      for (const key of keys) {
        let holders = 0
        for (const [field, set] of holding) {
          const was = set.get(key)
          if (was === undefined) continue
          holders++
          if (was === day) continue
          set.set(key, day)
          changed.add(field)
          redated++
        }
        if (holders > 0) continue
        const [field, set] = holding[0] ?? [kind, new Map<string, number>()]
        set.set(key, day)
        changed.add(field)
        added++
      }
  }
  if (changed.size === 0) return none
  const rewritten = Object.fromEntries(
    [...changed].map((field) => [field, encodeSet(sets.get(field) ?? new Map())]),
  )
  return { state: { ...(state ?? {}), ...rewritten }, mended: { added, redated } }
}

/**
 * `saved` (every stream's saved state) with the companies' mended from the table of `schema`
 * (`mendState`), and what the mend changed. A companies state appears where the table holds rows
 * and none was saved.
 */
export const mend = (
  schema: string,
  saved: ReadonlyArray<StreamState.SavedStreamState>,
): Effect.Effect<
  { readonly saved: ReadonlyArray<StreamState.SavedStreamState>; readonly mended: Mended },
  DatabaseError,
  Database
> =>
  Effect.map(held(schema), (keys) => {
    const index = saved.findIndex((entry) => entry.stream.stream_descriptor.name === stream)
    const { state, mended } = mendState(saved[index]?.stream.stream_state, keys)
    if (state === undefined || (mended.added === 0 && mended.redated === 0)) return { saved, mended }
    const entry = StreamState.saved(stream, state)
    return {
      saved: index < 0 ? [...saved, entry] : saved.map((old, at) => (at === index ? entry : old)),
      mended,
    }
  })

/** What a mend did, in a line for the user; undefined when the state was in step with the table. */
export const describeMended = (schema: string, mended: Mended): string | undefined => {
  const parts = [
    ...(mended.added > 0
      ? [
          `${mended.added} domains and names of the companies held in ${schema}.companies were missing from their saved state in ${schema}._state: added back from the rows (they will not be bought again)`,
        ]
      : []),
    ...(mended.redated > 0
      ? [
          `${mended.redated} domains and names had another day in the saved state than their rows' fetched_at: mended to the rows' day (refresh_after_days counts from when a row was fetched)`,
        ]
      : []),
  ]
  return parts.length === 0 ? undefined : `companies: ${parts.join("; ")}`
}
