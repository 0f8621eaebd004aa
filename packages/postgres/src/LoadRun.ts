/**
 * `salesintel-pg load`: a load of JSON lines recorded as a run in `_sync_runs`, one at a time per
 * target (RunLifecycle). Each STATE goes to `onStateCommitted` once it has committed with its data
 * (what an Airbyte destination emits), the run row's records with it; the input's LOG and TRACE
 * lines go to `onSourceMessage`. The run fails on a TRACE error from the source, and when an
 * overwrite stream did not end complete (the input ended early: nothing was emptied). On `stop`
 * (a signal) it stops reading, keeps what committed up to the last STATE and ends `interrupted`.
 */
import type { Readable } from "node:stream"
import { type Catalog, type Message, Ndjson } from "@salesintel/airbyte"
import * as Deferred from "effect/Deferred"
import * as Effect from "effect/Effect"
import * as Either from "effect/Either"
import * as Ref from "effect/Ref"
import * as Stream from "effect/Stream"
import type { Database, DatabaseError } from "./database/Database.ts"
import * as Ledger from "./ledger/Ledger.ts"
import * as Loader from "./load/Loader.ts"
import type * as Ddl from "./migrate/Ddl.ts"
import * as RunLifecycle from "./runs/RunLifecycle.ts"
import type * as RunLock from "./runs/RunLock.ts"
import * as Runs from "./runs/Runs.ts"
import type * as StopSignal from "./runs/StopSignal.ts"

export interface LoadRunOptions {
  readonly schema: string
  readonly syncModes: Catalog.DestinationSyncModes | undefined
  readonly batchSize: number
  readonly onSourceMessage: (message: Message.LogMessage | Message.TraceErrorMessage) => Effect.Effect<void>
  readonly onStateCommitted: (message: Message.StateMessage) => Effect.Effect<void>
  /** The loader's own word to the user (a ledger mended from the tables). */
  readonly onNotice?: (line: string) => Effect.Effect<void>
  /** Completed on a graceful stop (StopSignal.listen); none by default. */
  readonly stop?: Deferred.Deferred<StopSignal.Signal>
  /** Who this run is (for another run's "in use by" message), and whether to wait for a holder. */
  readonly lock?: { readonly owner: string; readonly wait?: RunLock.Wait }
}

export interface LoadRunOutcome {
  readonly runId: Runs.RunId
  readonly summary: Loader.LoadSummary
  readonly status: "succeeded" | "failed" | "interrupted"
  /** Why it failed (a source TRACE error, an overwrite left incomplete). */
  readonly error: string | undefined
  /** The signal that stopped it, when interrupted. */
  readonly signal: StopSignal.Signal | undefined
  readonly abandoned: ReadonlyArray<Runs.RunId>
}

/**
 * Why the run failed although every message loaded, if it did; `cutOff`: the position of a last
 * line cut short; `messages`: how many the input held (none: an empty input, never a success).
 */
const failureOf = (
  summary: Loader.LoadSummary,
  cutOff: number | undefined,
  messages: number,
): string | undefined => {
  const reasons = [
    ...(messages === 0 && cutOff === undefined
      ? [
          "the input was empty: no message at all (salesintel-pg load reads the source's Airbyte messages on stdin; was its output connected?); nothing was loaded",
        ]
      : []),
    ...(cutOff === undefined
      ? []
      : [
          `the input ended in the middle of message ${cutOff} (its writer stopped while writing it): that line was not loaded`,
        ]),
    ...summary.sourceErrors.map((m) => m.trace.error.message),
    ...(summary.endedEarly.length > 0
      ? [
          `the input ended while ${summary.endedEarly.join(", ")} had not reported its end (the source stopped in the middle?): what committed stays, ${summary.uncommittedRecords} records after the last STATE were not loaded`,
        ]
      : []),
    ...(summary.overwritesIncomplete.length > 0
      ? [
          `the input ended before ${summary.overwritesIncomplete.join(", ")} completed: the overwrite was not finished, older rows kept`,
        ]
      : []),
  ]
  return reasons.length > 0 ? reasons.join("; ") : undefined
}

export const loadRun = (
  input: Readable,
  options: LoadRunOptions,
): Effect.Effect<
  LoadRunOutcome,
  DatabaseError | Ddl.SchemaTooNew | Ndjson.InvalidMessage | Loader.LoadFailure | RunLock.RunLocked,
  Database
> =>
  Effect.scoped(
    Effect.gen(function* () {
      const { schema } = options
      const stop = options.stop ?? (yield* Deferred.make<StopSignal.Signal>())
      const { runId, abandoned, reconciled } = yield* RunLifecycle.begin(
        schema,
        // The load that begins is the one a pipe's exported state was reserved for (Lease.ts).
        RunLifecycle.stoppable(
          { ...(options.lock ?? { owner: "salesintel-pg load" }), lease: "consume" },
          stop,
        ),
      )
      for (const changed of reconciled) {
        const line = Ledger.describeReconciled(schema, changed)
        if (line !== undefined && options.onNotice !== undefined) yield* options.onNotice(line)
      }
      // On a stop the input is cut off (interruptWhen below); a read waiting on an open pipe
      // would hold that up until more input came, so the pipe is closed shortly after.
      yield* Effect.forkScoped(
        Deferred.await(stop).pipe(
          Effect.zipRight(Effect.sleep(100)),
          Effect.zipRight(Effect.sync(() => input.destroy())),
        ),
      )
      // The records per stream of the last commit: what the run row says, updated in that commit.
      const committed = yield* Ref.make<Readonly<Record<string, Runs.StreamFigures>>>({})
      const cutOff = yield* Ref.make<number | undefined>(undefined)
      const received = yield* Ref.make(0)
      const messages = Ndjson.fromReadable(input, { onCutOff: (position) => Ref.set(cutOff, position) }).pipe(
        Stream.mapChunksEffect((chunk) =>
          Effect.as(
            Ref.update(received, (n) => n + chunk.length),
            chunk,
          ),
        ),
      )
      const outcome = yield* Effect.either(
        Loader.load(messages.pipe(Stream.interruptWhen(Deferred.await(stop))), {
          schema,
          runId,
          ...(options.syncModes === undefined ? {} : { syncModes: options.syncModes }),
          batchSize: options.batchSize,
          ensureSchema: false,
          endedOnItsOwn: Effect.map(Deferred.isDone(stop), (stopped) => !stopped),
          onMessage: options.onSourceMessage,
          beforeCommit: ({ records, rejected }) => {
            const figures = Runs.figuresOf(records, rejected)
            return Effect.zipRight(Runs.progress(schema, runId, figures), Ref.set(committed, figures))
          },
          onStateCommitted: options.onStateCommitted,
        }),
      )
      const signal = (yield* Deferred.isDone(stop)) ? yield* Deferred.await(stop) : undefined
      const streams = yield* Ref.get(committed)
      if (Either.isLeft(outcome)) {
        yield* RunLifecycle.end(
          schema,
          runId,
          { status: "failed", streams, error: outcome.left.message },
          true,
        )
        return yield* Effect.fail(outcome.left)
      }
      const summary = outcome.right
      const error = failureOf(summary, yield* Ref.get(cutOff), yield* Ref.get(received))
      // Interrupted: the overwrites were cut short on purpose; said in the error column all the same.
      const status = signal !== undefined ? "interrupted" : error !== undefined ? "failed" : "succeeded"
      yield* RunLifecycle.end(
        schema,
        runId,
        { status, streams, ...(error === undefined ? {} : { error }) },
        false,
      )
      return { runId, summary, status, error, signal, abandoned }
    }),
  )
