/**
 * A saved set that dates purchases after today: a worker whose clock ran ahead wrote it, or a
 * state was edited by hand (Airbyte's acceptance test sends a state of "abnormally large values"
 * and expects a read that emits nothing and checkpoints). What it says was bought is held as
 * bought on that day (DatedSet.isDue: not due before its day has passed), carried forward as it
 * stands, and the read says so in one WARN per stream, naming each set's path and day; refusing it
 * would fail every sync of a worker a day fast, and only removing the state would mend it.
 */
import * as Output from "../read/Output.ts"
import type { DatedSetJson } from "./DatedSet.ts"

/** What a saved set holds on days after tomorrow: where, on which days, and how many keys. */
export interface Ahead {
  /** The state path of its first such day: `known.99999`. */
  readonly path: string
  readonly first: number
  readonly last: number
  readonly days: number
  readonly keys: number
  /** What its keys are, one and many: ["contact", "contacts"]. */
  readonly noun: readonly [one: string, many: string]
}

/**
 * The days of `json` (the state's `field`) after tomorrow, or undefined. Tomorrow is not ahead: a
 * machine whose clock is a little ahead may have written it just past midnight UTC.
 */
export const ahead = (
  json: DatedSetJson | undefined,
  field: string,
  noun: Ahead["noun"],
  today: number,
): Ahead | undefined => {
  const days = Object.entries(json ?? {})
    .map(([day, keys]) => [Number(day), keys.length] as const)
    .filter(([day]) => day > today + 1)
    .sort(([a], [b]) => a - b)
  const [first] = days
  const last = days.at(-1)
  if (first === undefined || last === undefined) return undefined
  return {
    path: `${field}.${first[0]}`,
    first: first[0],
    last: last[0],
    days: days.length,
    keys: days.reduce((sum, [, keys]) => sum + keys, 0),
    noun,
  }
}

/** A day number as its date: 99999 is 2243-10-16. */
export const dateOf = (day: number): string => new Date(day * 86_400_000).toISOString().slice(0, 10)

/**
 * Why a read buys what a set dates ahead all the same (a full refresh buys every key it meets, 0
 * days buys each on every run), or undefined: it holds it.
 */
export const dueAnyway = (incremental: boolean, refreshAfterDays: number | undefined): string | undefined => {
  if (!incremental) return "a full refresh buys them again"
  return refreshAfterDays === 0 ? "refresh_after_days is 0: every run buys them again" : undefined
}

/**
 * One WARN for a stream's sets dated ahead, or none. `dueAnyway`: why the read buys them again all
 * the same (a full refresh, refresh_after_days 0), when it does; otherwise they are held.
 */
export const warning = (
  sets: ReadonlyArray<Ahead | undefined>,
  today: number,
  dueAnyway: string | undefined,
): ReadonlyArray<Output.Log> => {
  const found = sets.filter((set): set is Ahead => set !== undefined)
  if (found.length === 0) return []
  const clauses = found.map((set, index) => {
    const later = set.days > 1 ? ` (and ${set.days - 1} later days, to ${dateOf(set.last)})` : ""
    const after = index === 0 ? `, after today (${dateOf(today)})` : ""
    const many = set.keys !== 1
    const what = `its ${set.keys} ${set.noun[many ? 1 : 0]} ${many ? "are" : "is"}`
    const fate =
      dueAnyway === undefined ? "held as bought and not due until then" : `due all the same (${dueAnyway})`
    return `${index === 0 ? "the saved state's " : ""}${set.path} is dated ${dateOf(set.first)}${later}${after}: ${what} ${fate}`
  })
  const advice =
    dueAnyway === undefined
      ? "; if the worker's clock was wrong, remove the stream's state to start it afresh"
      : ""
  return [Output.log("WARN", `${clauses.join("; ")}${advice}`)]
}
