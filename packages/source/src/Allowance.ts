/**
 * The credit allowance: credits a calendar period (a UTC day, a week from Monday, a month) may
 * spend across runs, beside the per-run credit_budget. A run may spend at most
 * min(credit_budget, what the period has left).
 *
 * What the period spent before a run comes from where the run can know it: under `salesintel
 * sync`, the target's records of its runs (`_sync_runs.credits`, killed runs included); in a pipe,
 * the state. There each credited stream's STATE carries the allowance's part (`credit_allowance`:
 * the period it counts, and what that period had spent at that checkpoint, this run included); the
 * next read takes the largest figure among the streams for the current period and ignores an older
 * period's. The part is taken out of a stream's state before the stream reads it.
 */
import { ParseIssue } from "@salesintel/core"
import * as Either from "effect/Either"
import type * as ParseResult from "effect/ParseResult"
import * as Schema from "effect/Schema"
import { StateError } from "./StateError.ts"

export const Per = Schema.Literal("day", "week", "month").annotations({
  message: (issue: ParseResult.ParseIssue) => ({
    message: `Expected "day", "week" or "month" (calendar periods in UTC; a week starts on Monday), actual ${JSON.stringify(issue.actual)}`,
    override: true,
  }),
})
export type Per = typeof Per.Type

export const AllowanceConfig = Schema.Struct({
  credits: Schema.Int.pipe(Schema.nonNegative()).annotations({
    message: (issue: ParseResult.ParseIssue) => ({
      message: `Expected a whole number of credits, 0 or more, such as 30000, actual ${JSON.stringify(issue.actual)}`,
      override: true,
    }),
  }),
  per: Per,
})
export type AllowanceConfig = typeof AllowanceConfig.Type

const dayMillis = 86_400_000

/** The UTC calendar period holding `now`: its start and when the next begins (epoch ms). */
export const periodOf = (per: Per, now: number): { readonly start: number; readonly renewsAt: number } => {
  const date = new Date(now)
  const day = Date.UTC(date.getUTCFullYear(), date.getUTCMonth(), date.getUTCDate())
  switch (per) {
    case "day":
      return { start: day, renewsAt: day + dayMillis }
    case "week": {
      // getUTCDay: Sunday 0; the week starts on Monday.
      const start = day - ((date.getUTCDay() + 6) % 7) * dayMillis
      return { start, renewsAt: start + 7 * dayMillis }
    }
    case "month":
      return {
        start: Date.UTC(date.getUTCFullYear(), date.getUTCMonth(), 1),
        renewsAt: Date.UTC(date.getUTCFullYear(), date.getUTCMonth() + 1, 1),
      }
  }
}

/** Where the period's spending was counted from. */
export type Source = "runs" | "state" | "unknown"

/** Where an allowance stands as a run begins. */
export interface Standing {
  readonly credits: number
  readonly per: Per
  readonly periodStart: number
  readonly renewsAt: number
  /** What the period spent before this run. */
  readonly spent: number
  /** What the period has left: credits - spent, never below 0. */
  readonly left: number
  /** runs: the target's records; state: the state passed in; unknown: a pipe given no state (counted as 0). */
  readonly source: Source
}

export const standingOf = (
  allowance: AllowanceConfig,
  now: number,
  spent: number,
  source: Source,
): Standing => {
  const { start, renewsAt } = periodOf(allowance.per, now)
  return {
    credits: allowance.credits,
    per: allowance.per,
    periodStart: start,
    renewsAt,
    spent,
    left: Math.max(0, allowance.credits - spent),
    source,
  }
}

/** What a run may spend: its credit_budget, or less where the allowance has less left. */
export const limitOf = (budget: number, standing: Standing | undefined): number =>
  standing === undefined ? budget : Math.min(budget, standing.left)

/** The allowance, not the budget, is what limits the run. */
export const binds = (budget: number, standing: Standing | undefined): standing is Standing =>
  standing !== undefined && standing.left < budget

export const iso = (millis: number): string => new Date(millis).toISOString()

/** The line a run says when the allowance stops it (or left it nothing to spend). */
export const reachedLine = (standing: Standing, spentNow: number): string =>
  `credit allowance reached: ${(standing.spent + spentNow).toLocaleString("en-US")} of ${standing.credits.toLocaleString("en-US")} credits spent this ${standing.per} (${spentNow.toLocaleString("en-US")} by this run); it renews at ${iso(standing.renewsAt)}, when the rest is due`

/** The key of a stream's state that holds the allowance's part. */
export const stateKey = "credit_allowance"

const StatePart = Schema.Struct({
  per: Per,
  period_start: Schema.String.pipe(
    Schema.filter(
      (text) => !Number.isNaN(Date.parse(text)) || "an ISO date-time such as 2026-11-27T00:00:00.000Z",
    ),
  ),
  spent: Schema.Int.pipe(Schema.nonNegative()),
})
export type StatePart = typeof StatePart.Type

/** The allowance's part of a STATE: the period, and what it spent up to this checkpoint. */
export const statePart = (standing: Standing, spentNow: number): StatePart => ({
  per: standing.per,
  period_start: iso(standing.periodStart),
  spent: standing.spent + spentNow,
})

const isObject = (value: unknown): value is Readonly<Record<string, unknown>> =>
  typeof value === "object" && value !== null && !Array.isArray(value)

/** A stream's state without the allowance's part: what the stream itself reads. */
export const withoutPart = (state: unknown): unknown => {
  if (!isObject(state) || !(stateKey in state)) return state
  const { [stateKey]: _, ...rest } = state
  return rest
}

/** A stream's allowance part, if it has one; one that does not decode is refused with its stream and path. */
const partOf = (stream: string, streamState: unknown): Either.Either<StatePart | undefined, StateError> => {
  if (!isObject(streamState) || !(stateKey in streamState)) return Either.right(undefined)
  return Either.mapLeft(
    Schema.decodeUnknownEither(StatePart, { onExcessProperty: "error" })(streamState[stateKey]),
    (error) => {
      const issue = ParseIssue.fromParseError(error, [stateKey])
      return new StateError({
        stream,
        path: issue.path,
        description: issue.description,
        advice: `Remove ${stateKey} from that stream's state to count this period's spending from nothing, or pass the state the last read wrote.`,
      })
    },
  )
}

/**
 * What the current period spent, as the state says it: the largest figure any stream's part gives
 * for this period (a part of another period, or of another `per`, counts nothing). A part that does
 * not decode is refused with its stream and path, never read as nothing spent.
 */
export const spentInState = (
  state: ReadonlyMap<string, unknown>,
  allowance: AllowanceConfig,
  now: number,
): Either.Either<number, StateError> => {
  const { start } = periodOf(allowance.per, now)
  return Either.map(
    Either.all([...state].map(([stream, streamState]) => partOf(stream, streamState))),
    (parts) =>
      parts.reduce(
        (most, part) =>
          part !== undefined && part.per === allowance.per && Date.parse(part.period_start) === start
            ? Math.max(most, part.spent)
            : most,
        0,
      ),
  )
}

/** The WARN of a pipe given no state: what the period spent before cannot be known. */
export const unknownLine = (standing: Standing): string =>
  `credit_allowance: no state given, so what this ${standing.per} spent before this read is not known; it is counted as 0 (this read may spend up to ${standing.credits.toLocaleString("en-US")}); pass the last read's state (--state) for the allowance to hold across reads`

/** The allowance's figures, as plan and status show them. */
export const describe = (standing: Standing): string =>
  `credit allowance: ${standing.spent.toLocaleString("en-US")} of ${standing.credits.toLocaleString("en-US")} credits spent this ${standing.per} (since ${iso(standing.periodStart)}), ${standing.left.toLocaleString("en-US")} left; renews at ${iso(standing.renewsAt)}${standing.source === "unknown" ? " (no state given: what was spent before is not known)" : ""}`

/** The allowance's figures as JSON (snake_case, times in ISO UTC). */
export const toJson = (standing: Standing) => ({
  credits: standing.credits,
  per: standing.per,
  period_start: iso(standing.periodStart),
  spent: standing.spent,
  left: standing.left,
  renews_at: iso(standing.renewsAt),
  counted_from: standing.source,
})
