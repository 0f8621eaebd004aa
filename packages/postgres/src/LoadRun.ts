/**
 * `salesintel-pg load`: a load of JSON lines recorded as a run in `_sync_runs`. Each STATE goes to
 * `onStateCommitted` once it has committed with its data (what an Airbyte destination emits); the
 * input's LOG and TRACE lines go to `onSourceMessage`. A TRACE error from the source fails the run.
 */
import type { Readable } from "node:stream"
import { type Catalog, type Message, Ndjson } from "@salesintel/airbyte"
import { Effect, Either } from "effect"
import type { Database, DatabaseError } from "./Database.ts"
import * as Ddl from "./Ddl.ts"
import * as Loader from "./Loader.ts"
import * as Runs from "./Runs.ts"

export interface LoadRunOptions {
  readonly schema: string
  readonly syncModes: Catalog.DestinationSyncModes | undefined
  readonly batchSize: number
  readonly onSourceMessage: (message: Message.LogMessage | Message.TraceErrorMessage) => Effect.Effect<void>
  readonly onStateCommitted: (message: Message.StateMessage) => Effect.Effect<void>
}

export interface LoadRunOutcome {
  readonly runId: Runs.RunId
  readonly summary: Loader.LoadSummary
  /** The source ended in a TRACE error: what committed stays, the run is recorded failed. */
  readonly failed: boolean
}

export const loadRun = (
  input: Readable,
  options: LoadRunOptions,
): Effect.Effect<
  LoadRunOutcome,
  DatabaseError | Ddl.SchemaTooNew | Ndjson.InvalidMessage | Loader.LoadFailure,
  Database
> =>
  Effect.gen(function* () {
    const { schema } = options
    yield* Ddl.ensure(schema)
    const runId = yield* Runs.start(schema)
    const outcome = yield* Effect.either(
      Loader.load(Ndjson.fromReadable(input), {
        schema,
        ...(options.syncModes === undefined ? {} : { syncModes: options.syncModes }),
        batchSize: options.batchSize,
        ensureSchema: false,
        onMessage: options.onSourceMessage,
        onStateCommitted: options.onStateCommitted,
      }),
    )
    if (Either.isLeft(outcome)) {
      yield* Runs.finish(schema, runId, { status: "failed", streams: {}, error: outcome.left.message })
      return yield* Effect.fail(outcome.left)
    }
    const summary = outcome.right
    const failed = summary.sourceErrors.length > 0
    yield* Runs.finish(schema, runId, {
      status: failed ? "failed" : "succeeded",
      streams: Object.fromEntries(
        Object.entries(summary.streams).map(([stream, figures]) => [stream, { records: figures.records }]),
      ),
      ...(failed ? { error: summary.sourceErrors.map((m) => m.trace.error.message).join("; ") } : {}),
    })
    return { runId, summary, failed }
  })
