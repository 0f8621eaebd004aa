/**
 * What a sync that stopped early (at its budget, or on a signal) left to buy, from the estimate
 * `salesintel plan` makes: the plan of the next sync, from what the run committed (the target's
 * state and held keys, read under the run's lock), in exact mode, free requests only. The read's
 * own count cannot know it: a read stopped early never listed what it did not reach (the searches
 * after the one it stopped in, the companies of contacts not bought yet).
 */
import { Database } from "@salesintel/postgres"
import { HeldKeys, KnownRows } from "@salesintel/source"
import * as Effect from "effect/Effect"
import * as Plan from "./Plan.ts"
import * as QueryRows from "./QueryRows.ts"

/** The plan's figure for everything still due, in all and per stream (credits, one per record). */
export interface Remaining {
  readonly credits: number
  readonly byStream: Readonly<Record<string, number>>
}

/** Everything due, per stream, as the plan counts it (Plan.creditsNeeded is their sum). */
export const fromPlan = (plan: {
  readonly creditsNeeded: number
  readonly works: ReadonlyArray<{ readonly stream: string; readonly due: number }>
}): Remaining => {
  const byStream: Record<string, number> = {}
  for (const work of plan.works) byStream[work.stream] = (byStream[work.stream] ?? 0) + work.due
  return { credits: plan.creditsNeeded, byStream }
}

/** How long a run waits for the plan at its end; past it the summary says to run `salesintel plan`. */
export const planTimeout = "2 minutes"

/**
 * The plan of the next plain sync of `config` on `schema` (the database in context), or why it
 * could not be made (the provider out of reach, or a plan longer than `planTimeout`: a stopped run
 * must end): never a failure of the run that asks.
 */
export const remaining = (
  config: unknown,
  schema: string,
  now: number,
  keySource?: string | undefined,
): Effect.Effect<Remaining | { readonly unknown: string }, never, Database.Database> =>
  Plan.savedIn(schema, Plan.heldKeysWanted(config)).pipe(
    Effect.flatMap(({ state, held }) =>
      Effect.flatMap(Database.Database, (db) =>
        Plan.makePlan({ config, state, mode: "exact", now, keySource }).pipe(
          Effect.provideService(HeldKeys.HeldKeys, held),
          // A config's query of known records runs on this database, as the sync ran it.
          Effect.provideService(KnownRows.QueryRows, QueryRows.onDatabase(db)),
        ),
      ),
    ),
    Effect.map(fromPlan),
    Effect.catchAll((error) => Effect.succeed({ unknown: error.message })),
    Effect.timeoutTo({
      duration: planTimeout,
      onSuccess: (left): Remaining | { readonly unknown: string } => left,
      onTimeout: () => ({ unknown: `it took more than ${planTimeout}: run salesintel plan for the figure` }),
    }),
  )
