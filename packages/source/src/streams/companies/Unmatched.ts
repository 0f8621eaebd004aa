/**
 * Company keys that match no company. Append returns nothing for a domain or name the provider
 * knows no company by, and charges nothing for it, so such a key would pass silently: a batch read
 * to its end says which of its keys no returned company matched, the read names them in a WARN,
 * and the state keeps them, so a plan can tell the keys known to match a company (one credit each)
 * from those it cannot know (at most one each).
 */
import type { Page } from "@salesintel/core"
import * as Effect from "effect/Effect"
import * as Ref from "effect/Ref"
import * as Schema from "effect/Schema"
import * as Output from "../../read/Output.ts"

export type KeyKind = "domains" | "names"

/** The keys that matched no company when last looked up, by kind (a kind with none left out). */
export const UnmatchedState = Schema.Struct({
  domains: Schema.optionalWith(Schema.Array(Schema.String), { default: () => [] }),
  names: Schema.optionalWith(Schema.Array(Schema.String), { default: () => [] }),
})
export type UnmatchedState = typeof UnmatchedState.Type

/** Every string a record holds, however deep, but its technologies' (a product is no company name). */
const stringsOf = (value: unknown): ReadonlyArray<string> => {
  if (typeof value === "string") return [value.toLowerCase()]
  if (Array.isArray(value)) return value.flatMap(stringsOf)
  if (typeof value === "object" && value !== null)
    return Object.entries(value).flatMap(([key, inner]) => (key === "technologies" ? [] : stringsOf(inner)))
  return []
}

/** A domain as written in a config or a record: no scheme, no `www.`, no trailing slash. */
const bareDomain = (text: string) =>
  text
    .replace(/^https?:\/\//, "")
    .replace(/^www\./, "")
    .replace(/\/$/, "")

/**
 * Whether a company returned matched a (lower-cased) key: a domain is one of the record's values,
 * as the provider matches it (exactly); a name is in one, as it matches names ("contains").
 */
export const matches =
  (kind: KeyKind) =>
  (key: string, item: Page.Item<unknown>): boolean => {
    const values = stringsOf(item.raw)
    if (kind === "names") return values.some((value) => value.includes(key))
    const domain = bareDomain(key)
    return values.some((value) => bareDomain(value) === domain)
  }

const named = 20

const advice: Record<KeyKind, string> = {
  domains: "a domain is matched exactly: check the spelling, without www. or a path",
  names:
    "a name matches the companies whose name contains it: check the spelling, or try a shorter form without inc, corp or llc",
}

/**
 * The WARN for one kind: how many of the keys looked up matched nothing, the first 20 by name (as
 * the config spells them), then how many more.
 */
export const warning = (
  kind: KeyKind,
  lookedUp: number,
  unmatched: ReadonlyArray<string>,
  spelled: (key: string) => string,
  /** Where the keys came from: the config's list, or the company domains of the contacts held. */
  from: "config" | "contacts" = "config",
): Output.Log => {
  const listed = unmatched.slice(0, named).map(spelled).join(", ")
  const more = unmatched.length > named ? ` and ${unmatched.length - named} more` : ""
  const them = unmatched.length === 1 ? "it" : "them"
  return Output.log(
    "WARN",
    `${unmatched.length} of the ${lookedUp} ${kind} ${from === "config" ? `in companies.${kind}` : "of your contacts' companies (from_contacts)"} looked up matched no company at the provider, so nothing was charged for ${them}: ${listed}${more} (${advice[kind]})`,
  )
}

/** The keys of each kind that matched no company when last looked up, as the read learns them. */
export const standing = (saved: UnmatchedState) =>
  Effect.map(
    Ref.make<Readonly<Record<KeyKind, ReadonlySet<string>>>>({
      domains: new Set(saved.domains),
      names: new Set(saved.names),
    }),
    (ref) => ({
      /** A batch read to its end: its keys that matched leave the set, those that did not join it. */
      record: (kind: KeyKind, keys: ReadonlyArray<string>, unmatched: ReadonlyArray<string>) =>
        Ref.update(ref, (now) => {
          const next = new Set(now[kind])
          for (const key of keys) next.delete(key)
          for (const key of unmatched) next.add(key)
          return { ...now, [kind]: next }
        }),
      /** The state's `unmatched`, sorted, or nothing when every key looked up matched. */
      toJson: Effect.map(Ref.get(ref), (now) => {
        const sorted = (kind: KeyKind) => (now[kind].size === 0 ? {} : { [kind]: [...now[kind]].sort() })
        const json = { ...sorted("domains"), ...sorted("names") }
        return Object.keys(json).length === 0 ? {} : { unmatched: json }
      }),
    }),
  )
