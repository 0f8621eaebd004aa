/**
 * A saved set that dates purchases after today: a worker whose clock ran ahead wrote it, or a
 * state was edited by hand (Airbyte's acceptance test sends a state of "abnormally large values"
 * and expects a read that emits nothing and checkpoints). What it says was bought is held as
 * bought on that day (DatedSet.isDue: not due before its day has passed), carried forward as it
 * stands, and the read says so in one WARN per stream, naming each set's path and day; refusing it
 * would fail every sync of a worker a day fast, and only removing the state would mend it.
 */
import * as Output from "../read/Output.ts"
import type { DatedAhead } from "./BoughtLedger.ts"
import type { DatedSetJson } from "./DatedSet.ts"

/** What a saved set holds on days after tomorrow: where, on which days, and how many keys. */
export interface Ahead {
  /** The state path of its first such day (`known.99999`), or the ledger's table (`_bought`). */
  readonly path: string
  /** In the destination's ledger (`salesintel sync`): its rows were fetched on those days. */
  readonly inLedger: boolean
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
    inLedger: false,
    first: first[0],
    last: last[0],
    days: days.length,
    keys: days.reduce((sum, [, keys]) => sum + keys, 0),
    noun,
  }
}

/** What a ledger's table (`_bought`, `_known_done`) dates after tomorrow, as a set's `ahead` says it. */
export const inLedger = (
  dated: DatedAhead | undefined,
  noun: Ahead["noun"],
  table = "_bought",
): Ahead | undefined =>
  dated === undefined || dated.keys === 0 ? undefined : { path: table, inLedger: true, ...dated, noun }

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
  const fate =
    dueAnyway === undefined ? "held as bought and not due until then" : `due all the same (${dueAnyway})`
  const clauses = found.map((set, index) => {
    const dated = `${dateOf(set.first)}${set.days > 1 ? ` (and ${set.days - 1} later days, to ${dateOf(set.last)})` : ""}${index === 0 ? `, after today (${dateOf(today)})` : ""}`
    const many = set.keys !== 1
    const keys = `${set.keys} ${set.noun[many ? 1 : 0]}`
    // A ledger dated ahead holds other keys too (bought before the clock ran ahead): it dates some.
    if (set.inLedger)
      return `the ledger (${set.path}) dates ${keys} ${dated}: ${many ? "they are" : "it is"} ${fate}`
    const where = `${index === 0 ? "the saved state's " : ""}${set.path}`
    return `${where} is dated ${dated}: its ${keys} ${many ? "are" : "is"} ${fate}`
  })
  // A ledger is the sync's: its state and its rows' days are forgotten together by --reset-state.
  const ledger = found.some((set) => set.inLedger)
  const advice =
    dueAnyway !== undefined
      ? ""
      : `; if the worker's clock was wrong, remove the stream's state to start it afresh${ledger ? " (salesintel sync --reset-state with the stream's name)" : ""}`
  return [Output.log("WARN", `${clauses.join("; ")}${advice}`)]
}
