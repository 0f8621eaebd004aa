/**
 * What a credit allowance's current period spent, as the target's runs record it (Runs.spentBetween:
 * every run started in the period, killed ones included): what `sync`, `plan` and `status` count
 * the allowance from.
 */
import { type Database, Runs } from "@salesintel/postgres"
import { Allowance, Config } from "@salesintel/source"
import * as Effect from "effect/Effect"
import * as Either from "effect/Either"

/** The config's allowance, if it has one (a config that does not decode has none here: its command says why). */
export const allowanceOf = (configJson: unknown): Allowance.AllowanceConfig | undefined => {
  const decoded = Config.decode(configJson)
  return Either.isRight(decoded) ? decoded.right.credit_allowance : undefined
}

/** The credits the runs of `schema` spent in the allowance's period holding `now`; undefined without an allowance. */
export const spent = (
  configJson: unknown,
  schema: string,
  now: number,
): Effect.Effect<number | undefined, Database.DatabaseError, Database.Database> => {
  const allowance = allowanceOf(configJson)
  if (allowance === undefined) return Effect.succeed(undefined)
  const { start, renewsAt } = Allowance.periodOf(allowance.per, now)
  return Runs.spentBetween(schema, new Date(start), new Date(renewsAt))
}

/** Where the allowance stands on `schema` at `now`; undefined without an allowance. */
export const standing = (
  configJson: unknown,
  schema: string,
  now: number,
): Effect.Effect<Allowance.Standing | undefined, Database.DatabaseError, Database.Database> =>
  Effect.map(spent(configJson, schema, now), (credits) => {
    const allowance = allowanceOf(configJson)
    return allowance === undefined || credits === undefined
      ? undefined
      : Allowance.standingOf(allowance, now, credits, "runs")
  })
