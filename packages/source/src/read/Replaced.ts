/**
 * The streams whose destination replaces the table (Catalog.replacesTable: a full refresh into
 * `overwrite`, or a refresh that deletes the earlier generations), checked before the source's
 * `read` spends a credit. On a read that exits 0 the Airbyte platform marks every stream complete,
 * and such a destination then replaces the table with what the read sent: a stream the budget cut
 * would leave only this read's part, and one with nothing configured an empty table. So:
 *
 * - a selected stream with nothing configured is refused (`unconfigured`);
 * - a credited one the budget cannot finish, as the plan counts it (the read run dry: free
 *   requests only), is refused with the plan's figures (`budgetProblem`);
 * - one cut anyway (a stop, a count that grew since the plan) fails the read at its end
 *   (Read.ts, unfinishedReplaced).
 *
 * Streams read incrementally into `append` or `append_dedup` keep every earlier row: a budget stop
 * there ends the read with exit 0, the streams INCOMPLETE and their state saved.
 */
import { Catalog, Message } from "@salesintel/airbyte"
import type { Client } from "@salesintel/core"
import * as Effect from "effect/Effect"
import * as Either from "effect/Either"
import * as Option from "effect/Option"
import type * as Allowance from "../Allowance.ts"
import type { SourceConfig } from "../Config.ts"
import { definitionOf } from "../Definitions.ts"
import * as CostPlan from "./CostPlan.ts"
import type * as Read from "./Read.ts"
import { failureTypeOf, scrubber } from "./Read.ts"

const replaced = (catalog: Catalog.ConfiguredCatalog) =>
  catalog.streams.flatMap((entry, index) => (Catalog.replacesTable(entry) ? [{ entry, index }] : []))

/** A stream the destination replaces that has nothing configured: refused, naming what to configure. */
export const unconfigured = (
  config: SourceConfig,
  catalog: Catalog.ConfiguredCatalog,
): Either.Either<void, string> => {
  for (const { entry, index } of replaced(catalog)) {
    const definition = definitionOf(entry.stream.name)
    if (definition === undefined || definition.isConfigured(config)) continue
    return Either.left(
      `invalid catalog at streams[${index}]: stream ${entry.stream.name} is selected as ${Catalog.replacementOf(entry)}, so the destination replaces its table with what this read sends, but nothing is configured for it (${definition.configuredBy}): the table would be emptied. Configure ${definition.configuredBy}, or deselect ${entry.stream.name}. Nothing was bought.`,
    )
  }
  return Either.void
}

export interface BudgetInputs {
  readonly config: SourceConfig
  readonly catalog: Catalog.ConfiguredCatalog
  /** The read's state input, as given (the plan decodes it as the read does). */
  readonly state: unknown
  readonly now: number
  /** Where the credit allowance stands: the read may spend only what it has left, if less than the budget. */
  readonly allowance?: Allowance.Standing | undefined
}

/**
 * The refusal, with the dry read's figures: what it buys within the budget and leaves unread.
 * A budget that finishes the read covers what it spent and left, plus one page (a page is reserved
 * whole, at page_size, before it is bought, since the provider may return more than it counted).
 */
const refusal = (
  inputs: BudgetInputs,
  plan: CostPlan.Plan,
  cut: ReadonlyArray<{ readonly entry: Catalog.ConfiguredStream; readonly ended: Read.StreamSummary }>,
): Message.TraceErrorMessage => {
  const names = cut.map(({ entry }) => entry.stream.name).join(" and ")
  const what = cut
    .map(
      ({ entry, ended }) =>
        `${entry.stream.name} (${Catalog.replacementOf(entry)}): it buys ${ended.creditsSpent} and leaves ${ended.recordsLeft > 0 ? ended.recordsLeft : "some"} records unread`,
    )
    .join("; ")
  const left = plan.cut.reduce((sum, stream) => sum + stream.creditsNeeded, 0)
  const enough = plan.credits + left + inputs.config.page_size
  return Message.traceError(
    "config_error",
    `the credit budget cannot finish ${names}, whose destination replaces the table with what this read sends. The plan (the read run dry, free requests only) within ${plan.creditLimit < inputs.config.credit_budget ? `the ${plan.creditLimit} credits credit_allowance has left this ${inputs.allowance?.per ?? "period"} (credit_budget ${inputs.config.credit_budget})` : `credit_budget ${inputs.config.credit_budget}`}: ${what}. Cut short, the table would hold only this read's part, and the rows bought before would be dropped. Raise credit_budget to ${enough} (what the plan buys and leaves, and a page), or sync ${names} incremental | append_dedup, which keeps what earlier reads bought and resumes where a budget stops it. Nothing was bought.`,
    Date.now(),
  )
}

/**
 * The TRACE error that refuses the read before its first credit, when a credited stream the
 * destination replaces would be cut by the budget; none when there is no such stream (no plan is
 * made then) or the budget covers them. A plan that fails ends the read as that failure would.
 */
export const budgetProblem = (
  inputs: BudgetInputs,
): Effect.Effect<Option.Option<Message.TraceErrorMessage>, never, Client.SalesIntelClient> => {
  const credited = replaced(inputs.catalog).filter(
    ({ entry }) => definitionOf(entry.stream.name)?.credited === true,
  )
  if (credited.length === 0) return Effect.succeed(Option.none())
  const scrub = scrubber(inputs.config)
  return CostPlan.plan({
    config: inputs.config,
    state: inputs.state,
    mode: "exact",
    now: inputs.now,
    catalog: inputs.catalog,
    allowance: inputs.allowance,
  }).pipe(
    Effect.map((plan) => {
      const cut = credited.flatMap(({ entry }) => {
        const ended = plan.cut.find((stream) => stream.stream === entry.stream.name)
        return ended === undefined ? [] : [{ entry, ended }]
      })
      return cut.length === 0 ? Option.none() : Option.some(refusal(inputs, plan, cut))
    }),
    Effect.catchAll((error) =>
      Effect.succeed(Option.some(Message.traceError(failureTypeOf(error), scrub(error.message), Date.now()))),
    ),
  )
}
