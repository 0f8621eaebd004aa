/**
 * `salesintel sync`: the source's read, in-process, straight into the loader. The state comes
 * from the database's `_state` table (so the next run is incremental without a state file), each
 * STATE commits with the data before it, and the run is recorded in `_sync_runs` with the records
 * and credits of every stream.
 */
import { Catalog, type Message, Streams } from "@salesintel/airbyte"
import { CreditBudget } from "@salesintel/core"
import { type Database, Ddl, Loader, Runs, State } from "@salesintel/postgres"
import { Commands } from "@salesintel/source"
import { Data, Effect, Either, Stream } from "effect"
import { type Counts, Reporter } from "./Progress.ts"

export class SyncConfigError extends Data.TaggedError("SyncConfigError")<{ readonly description: string }> {
  override get message(): string {
    return this.description
  }
}

export interface SyncOptions {
  /** The source config, as parsed JSON (validated here). */
  readonly config: unknown
  readonly schema: string
  /** Streams to sync (default: every stream the config has something for). */
  readonly streams?: ReadonlyArray<string> | undefined
  /** Where progress and the source's log lines go (stderr in the CLI). */
  readonly progress: { readonly isTTY?: boolean | undefined; write(text: string): unknown }
}

export interface StreamOutcome {
  readonly stream: string
  readonly records: number
  readonly credits: number
  readonly recordsLeft: number
}

export interface SyncOutcome {
  readonly runId: Runs.RunId
  readonly status: "succeeded" | "failed"
  readonly streams: ReadonlyArray<StreamOutcome>
  readonly creditsSpent: number
  readonly creditBudget: number
  readonly checkpoints: number
  readonly error: string | undefined
}

export const sync = (
  options: SyncOptions,
): Effect.Effect<
  SyncOutcome,
  SyncConfigError | Database.DatabaseError | Ddl.SchemaTooNew | State.InvalidSavedState,
  Database.Database
> =>
  Effect.gen(function* () {
    const names = options.streams ?? Streams.names
    const unknown = names.filter((name) => !Streams.isStreamName(name))
    if (unknown.length > 0)
      return yield* new SyncConfigError({
        description: `unknown stream ${unknown.join(", ")} in --streams (streams: ${Streams.names.join(", ")})`,
      })
    // Incremental wherever a stream supports it: that is what saves credits run after run.
    const catalog = Catalog.configuredAll("incremental", names)

    yield* Ddl.ensure(options.schema)
    const state = yield* State.read(options.schema)
    const prepared = Commands.prepareRead({ config: options.config, catalog, state })
    if (Either.isLeft(prepared)) return yield* new SyncConfigError({ description: prepared.left })
    const { config, read } = prepared.right

    const runId = yield* Runs.start(options.schema)
    const reporter = new Reporter(options.progress)
    const started = Date.now()
    const recordsByStream = new Map<string, number>()
    let records = 0
    let checkpoints = 0
    let creditsSpent = 0
    const counts = (): Counts => ({
      records,
      recordsByStream,
      pages: read.summary.pages,
      checkpoints,
      creditsSpent,
      creditBudget: config.credit_budget,
      elapsedMillis: Date.now() - started,
    })
    const logLine = (message: Message.LogMessage | Message.TraceErrorMessage) =>
      Effect.sync(() => {
        const text =
          message.type === "LOG"
            ? `${message.log.level} ${message.log.message}`
            : `ERROR (${message.trace.error.failure_type}) ${message.trace.error.message}`
        if (message.type === "TRACE" || message.log.level !== "INFO" || options.progress.isTTY !== true)
          options.progress.write(`${options.progress.isTTY === true ? "\r\x1b[K" : ""}${text}\n`)
      })

    const loaded = yield* Effect.gen(function* () {
      const budget = yield* CreditBudget.CreditBudget
      const messages = read.messages.pipe(
        Stream.tap((message) =>
          Effect.gen(function* () {
            if (message.type === "RECORD") {
              records++
              recordsByStream.set(
                message.record.stream,
                (recordsByStream.get(message.record.stream) ?? 0) + 1,
              )
            }
            creditsSpent = (yield* budget.snapshot).spent
            reporter.update(counts(), Date.now())
          }),
        ),
      )
      return yield* Loader.load(messages, {
        schema: options.schema,
        syncModes: Catalog.destinationSyncModes(catalog),
        ensureSchema: false,
        onMessage: logLine,
        onStateCommitted: () =>
          Effect.sync(() => {
            checkpoints++
          }),
      })
    }).pipe(Effect.provide(Commands.layerFor(config)), Effect.either)

    creditsSpent = read.summary.creditsSpent
    reporter.finish(counts())
    const loadError = Either.isLeft(loaded) ? loaded.left.message : undefined
    const error = read.summary.failure?.message ?? loadError
    const streams = read.summary.streams
      .filter((stream) => stream.status !== "nothing to read")
      .map((stream) => ({
        stream: stream.stream,
        records: stream.records,
        credits: stream.creditsSpent,
        recordsLeft: stream.recordsLeft,
      }))
    const status: SyncOutcome["status"] = error === undefined ? "succeeded" : "failed"
    yield* Runs.finish(options.schema, runId, {
      status,
      streams: Object.fromEntries(streams.map((s) => [s.stream, { records: s.records, credits: s.credits }])),
      ...(error === undefined ? {} : { error }),
    })
    return {
      runId,
      status,
      streams,
      creditsSpent,
      creditBudget: config.credit_budget,
      checkpoints,
      error,
    } satisfies SyncOutcome
  })

/** What a finished sync says on stdout. */
export const describe = (outcome: SyncOutcome, target: string): string => {
  const lines = [
    `sync ${outcome.status} (run ${outcome.runId}) into ${target}`,
    ...outcome.streams.map(
      (s) =>
        `  ${s.stream.padEnd(20)} ${String(s.records).padStart(8)} records ${String(s.credits).padStart(8)} credits${s.recordsLeft > 0 ? `  (${s.recordsLeft} left for lack of budget)` : ""}`,
    ),
    `  credits spent: ${outcome.creditsSpent} of ${outcome.creditBudget}; ${outcome.checkpoints} checkpoints committed`,
    ...(outcome.error === undefined ? [] : [`  error: ${outcome.error}`]),
  ]
  return `${lines.join("\n")}\n`
}
