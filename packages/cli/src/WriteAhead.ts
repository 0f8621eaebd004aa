/**
 * A sync's credits written ahead of its spending: the run's row in `_sync_runs` carries a mark
 * (its `credits` column) raised in blocks, committed on a connection of its own before a credit of
 * the block is reserved (CreditBudget.writtenAhead). A run killed without warning (SIGKILL, the
 * machine lost) is marked abandoned by the next, and its row still says at least what it may have
 * been charged, at most one block more. A block is max(500, budget / 50) credits: one short
 * UPDATE per block, never one per page, whatever the concurrency.
 */
import { CreditBudget } from "@salesintel/core"
import { type Database, Runs } from "@salesintel/postgres"
import type * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import * as Either from "effect/Either"
import * as Layer from "effect/Layer"
import * as Ref from "effect/Ref"
import type * as Scope from "effect/Scope"

/** The credits one mark covers beyond the last, for a run of `budget` credits. */
export const blockOf = (budget: number): number => Math.max(500, Math.ceil(budget / 50))

export interface WriteAhead {
  /** The run's budget, its reservations held until the mark covering them is committed. */
  readonly budget: (
    inner: CreditBudget.CreditBudgetService,
  ) => Effect.Effect<CreditBudget.CreditBudgetService>
  /** Why a mark could not be recorded (the run then spent nothing past the last one), if one could not. */
  readonly failure: Effect.Effect<string | undefined>
}

/** Where the marks go: a server's row, on a connection of the run's own; or PGlite's mark file. */
export interface Where {
  readonly connection?: Layer.Layer<Database.Database, Database.DatabaseError> | undefined
  readonly file?: string | undefined
}

/**
 * The write-ahead of run `runId`: to its row on `where.connection` (a new connection to the
 * server, opened once for the run and closed with the scope), else to `where.file` (embedded
 * PGlite: one connection, the run's own, whose open transaction would hold the mark back). With
 * neither (a sync in process, without a target's options) the run's credits are recorded at its
 * end only.
 */
export const make = (
  schema: string,
  runId: Runs.RunId,
  budget: number,
  where: Where,
): Effect.Effect<WriteAhead, never, Scope.Scope> =>
  Effect.gen(function* () {
    const failure = yield* Ref.make<string | undefined>(undefined)
    const { connection, file } = where
    if (connection === undefined && file === undefined)
      return { budget: Effect.succeed, failure: Ref.get(failure) }
    const opened = yield* Effect.either(
      connection === undefined ? Effect.succeed(undefined) : Layer.build(connection),
    )
    const fail = (message: string) =>
      Effect.as(
        Ref.set(
          failure,
          `could not record the credits ahead of spending them (${message}): the run spent nothing past its last mark`,
        ),
        false,
      )
    const record = (mark: number): Effect.Effect<boolean> =>
      Either.match(opened, {
        onLeft: (error) => fail(error.message),
        onRight: (context: Context.Context<Database.Database> | undefined) =>
          (context === undefined
            ? Runs.CreditsAhead.write(file ?? "", runId, mark)
            : Effect.provide(Runs.reserveAhead(schema, runId, mark), context)
          ).pipe(
            Effect.as(true),
            Effect.catchAll((error) => fail(error.message)),
          ),
      })
    return {
      budget: (inner) => CreditBudget.writtenAhead(inner, { block: blockOf(budget), record }),
      failure: Ref.get(failure),
    }
  })
