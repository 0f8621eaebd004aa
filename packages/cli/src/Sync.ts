/**
 * `salesintel sync`: the source's read, in-process, straight into the loader, as one run
 * (RunLifecycle): one at a time per target, runs left `running` by dead processes marked
 * abandoned, the state read from `_state` under the lock (so the next run is incremental without
 * a state file and a run that waited reads what the one before committed), each STATE committed
 * with the data before it and with the run row's records and credits so far. On `stop` (a signal)
 * it stops reading, keeps what committed and ends `interrupted`.
 */
import { Catalog, type Message, type StreamState, Streams } from "@salesintel/airbyte"
import { Client, CreditBudget } from "@salesintel/core"
import { Database, type Ddl, Ledger, Loader, Runs } from "@salesintel/postgres"
import {
  Allowance,
  BoughtLedger,
  Check,
  Commands,
  Config,
  HeldKeys,
  KnownRows,
  Read,
} from "@salesintel/source"
import * as Chunk from "effect/Chunk"
import * as Data from "effect/Data"
import * as Deferred from "effect/Deferred"
import * as Effect from "effect/Effect"
import * as Either from "effect/Either"
import type * as Layer from "effect/Layer"
import * as Ref from "effect/Ref"
import * as Stream from "effect/Stream"
import * as PeriodSpending from "./PeriodSpending.ts"
import { type Output, Reporter } from "./Progress.ts"
import * as QueryRows from "./QueryRows.ts"
import * as Remaining from "./Remaining.ts"
import * as RunFigures from "./RunFigures.ts"
import * as TargetLedger from "./TargetLedger.ts"
import * as TargetMarket from "./TargetMarket.ts"
import * as WriteAhead from "./WriteAhead.ts"

export class SyncConfigError extends Data.TaggedError("SyncConfigError")<{ readonly description: string }> {
  override get message(): string {
    return this.description
  }
}

export interface SyncOptions {
  /** The source config, as parsed JSON (validated here). */
  readonly config: unknown
  /** Where the key came from when not the config's api_key (ConfigFile.keySource), for a rejected key's message. */
  readonly keySource?: string | undefined
  readonly schema: string
  /** Streams to sync (default: every stream the config has something for). */
  readonly streams?: ReadonlyArray<string> | undefined
  /** Streams whose saved state is deleted first, so they start afresh on purpose. */
  readonly resetState?: ReadonlyArray<string> | undefined
  /**
   * Streams read in full this run (full_refresh | overwrite) instead of incrementally: everything
   * is bought again, and once the stream completes its rows from earlier syncs are deleted. Their
   * state is kept (an interrupted full refresh resumes; the contacts bought stay known).
   */
  readonly fullRefresh?: ReadonlyArray<string> | undefined
  /** How the source's LOG and TRACE lines are written to `progress`: as text, or JSON objects. */
  readonly logFormat?: "text" | "json" | undefined
  /** Where progress and the source's log lines go (stderr in the CLI). */
  readonly progress: Output
  /** Completed on a graceful stop (Runs.StopSignal.listen in the CLI); none by default. */
  readonly stop?: Deferred.Deferred<Runs.StopSignal.Signal> | undefined
  /**
   * The read's "now" (epoch ms): what refresh_after_days counts from and what `fetched_at` says.
   * Default: the time the run starts. (Tests move it forward to make what was bought due again.)
   */
  readonly startedAt?: number | undefined
  /** A new connection to the target, to record the run's end if its own was lost (Target.reconnect). */
  readonly reconnect?: Layer.Layer<Database.Database, Database.DatabaseError> | undefined
  /** Who this run is (for another run's "in use by" message), and whether to wait for a holder. */
  readonly lock?: { readonly owner: string; readonly wait?: Runs.Lock.Wait } | undefined
  /**
   * On embedded PGlite, the file the run's credits are written ahead to (Runs.CreditsAhead.fileFor);
   * on a server they go to the run's row on the `reconnect` connection (WriteAhead.ts).
   */
  readonly creditsAheadFile?: string | undefined
}

export interface StreamOutcome {
  readonly stream: string
  readonly records: number
  /** Records of its pages that did not decode, paid for and kept whole in `_rejected`. */
  readonly rejected: number
  readonly credits: number
  readonly recordsLeft: number
}

export interface SyncOutcome {
  readonly runId: Runs.RunId
  /** stopped_at_budget: it ended on its own at its credit budget, the rest due next run (exit 0). */
  readonly status: "succeeded" | "stopped_at_budget" | "failed" | "interrupted"
  /** The signal that stopped it, when interrupted. */
  readonly signal: Runs.StopSignal.Signal | undefined
  /** Runs found `running` (their process died) and marked abandoned. */
  readonly abandoned: ReadonlyArray<Runs.RunId>
  readonly streams: ReadonlyArray<StreamOutcome>
  readonly creditsSpent: number
  /** Of those, credits for requests whose answer never arrived (a timeout, a dropped connection). */
  readonly creditsUncertain: number
  readonly creditBudget: number
  /** Where the credit allowance stood as the run began (spent this period before it); undefined without one. */
  readonly allowance?: Allowance.Standing | undefined
  readonly checkpoints: number
  readonly error: string | undefined
  /** The rows of each stream's table a full refresh deleted when it completed (bought before, not again). */
  readonly deleted: Readonly<Record<string, number>>
  /**
   * What a run stopped at its budget or by a signal left to buy, as `salesintel plan` counts it
   * (Remaining.ts), or why it could not be counted; undefined for a run that bought all or failed.
   */
  readonly left?: Remaining.Remaining | { readonly unknown: string } | undefined
}

/**
 * Checks the options and the config, without the database: what `sync` refuses before it opens
 * (or creates) anything. Returns the catalog the run reads.
 */
export const check = (options: SyncOptions): Effect.Effect<Catalog.LoaderCatalog, SyncConfigError> =>
  Effect.gen(function* () {
    const names = options.streams ?? Streams.names
    const unknownIn = (option: string, list: ReadonlyArray<string>) => {
      const unknown = list.filter((name) => !Streams.isStreamName(name))
      return unknown.length === 0
        ? Effect.void
        : new SyncConfigError({
            description: `unknown stream ${unknown.join(", ")} in ${option} (${Streams.didYouMean(unknown) ?? `streams: ${Streams.names.join(", ")}`})`,
          })
    }
    yield* unknownIn("--streams", names)
    yield* unknownIn("--reset-state", options.resetState ?? [])
    const fullRefresh = options.fullRefresh ?? []
    yield* unknownIn("--full-refresh", fullRefresh)
    const notSynced = fullRefresh.filter((name) => !names.includes(name))
    if (notSynced.length > 0)
      return yield* new SyncConfigError({
        description: `--full-refresh ${notSynced.join(", ")}: not among the streams synced (--streams ${names.join(",")})`,
      })
    // Incremental wherever a stream supports it: that is what saves credits run after run. A
    // full refresh is asked for per run and per stream (it buys everything again).
    const incremental = Catalog.configuredAll("incremental", names)
    const refreshed = Catalog.configuredAll("full_refresh", fullRefresh)
    const catalog: Catalog.LoaderCatalog = {
      streams: [
        ...incremental.streams.map(
          (entry) => refreshed.streams.find((r) => r.stream.name === entry.stream.name) ?? entry,
        ),
        // The records a page carried that did not decode, for the loader's `_rejected`.
        {
          stream: { name: Streams.rejected.name },
          sync_mode: "incremental",
          destination_sync_mode: "append",
        },
      ],
    }
    const checked = Commands.prepareRead({ config: options.config, catalog, state: [], ownDestination: true })
    if (Either.isLeft(checked)) return yield* new SyncConfigError({ description: checked.left })
    return catalog
  })

/**
 * The key and the provider, with one free request (Check.keyAccepted), before the target is opened
 * or created: a rejected key (or a provider out of reach) leaves no schema, no tables and no run.
 */
export const checkProvider = (
  configJson: unknown,
  keySource?: string | undefined,
): Effect.Effect<void, SyncConfigError> =>
  Either.match(Config.decode(configJson), {
    onLeft: (error) => Effect.fail(new SyncConfigError({ description: error.message })),
    onRight: (config) =>
      Check.keyAccepted(config).pipe(
        Effect.provide(Client.layerFetch(Config.connectionOf(config), { keySource })),
        Effect.mapError(
          (error) =>
            new SyncConfigError({
              // The message's own full stop gives way to the clause added here.
              description: `${Read.scrubber(config)(error.message).replace(/\.$/, "")}; nothing was created or bought`,
            }),
        ),
      ),
  })

export const sync = (
  options: SyncOptions,
): Effect.Effect<
  SyncOutcome,
  | SyncConfigError
  | Database.DatabaseError
  | Ddl.SchemaTooNew
  | Loader.SavedState.InvalidSavedState
  | Runs.Lock.RunLocked,
  Database.Database
> =>
  Effect.scoped(
    Effect.gen(function* () {
      // The config is checked before the target is locked (a typo costs no wait and no run row).
      const catalog = yield* check(options)

      const stop = options.stop ?? (yield* Deferred.make<Runs.StopSignal.Signal>())
      // A run read as of another time (startedAt) is recorded so: its row says when its data is from.
      const datedBackMs = options.startedAt === undefined ? 0 : Date.now() - options.startedAt
      const { runId, abandoned, reconciled } = yield* Runs.Lifecycle.begin(
        options.schema,
        // A sync buys from what the target holds: a pipe's state handed out and not loaded yet
        // (Lease.ts) reserves the target as a running run would.
        Runs.Lifecycle.stoppable(
          { ...(options.lock ?? { owner: "salesintel sync" }), lease: "respect" },
          stop,
        ),
        options.startedAt === undefined ? undefined : new Date(options.startedAt),
      )
      // The ledger was mended from the tables before anything is read: the user hears so.
      for (const changed of reconciled) {
        const line = Ledger.describeReconciled(options.schema, changed)
        if (line !== undefined) yield* Effect.sync(() => options.progress.write(`${line}\n`))
      }
      const failRun = <E extends { readonly message: string }>(
        error: E,
      ): Effect.Effect<never, E | Database.DatabaseError, Database.Database> =>
        Effect.zipRight(
          Runs.Lifecycle.end(
            options.schema,
            runId,
            { status: "failed", streams: {}, error: error.message, datedBackMs },
            true,
          ),
          Effect.fail(error),
        )
      if (options.resetState !== undefined && options.resetState.length > 0) {
        const streams = options.resetState
        // What they bought is forgotten with their state, both or neither: each starts afresh.
        yield* Database.transaction(
          Effect.zipRight(
            Loader.SavedState.reset(options.schema, streams),
            Ledger.reset(options.schema, streams),
          ),
        )
      }
      // A run killed on PGlite left its credits mark in a file: its row (abandoned now) takes it.
      if (options.creditsAheadFile !== undefined)
        yield* Effect.catchAll(Runs.CreditsAhead.recover(options.schema, options.creditsAheadFile), failRun)
      // What the allowance's period spent, killed runs included: after their marks moved into their rows.
      const spentThisPeriod = yield* Effect.catchAll(
        PeriodSpending.spent(options.config, options.schema, options.startedAt ?? Date.now()),
        failRun,
      )
      // Read under the lock: a run that waited for another starts from what that one committed.
      const state = yield* Effect.catchAll(
        Effect.flatMap(Loader.SavedState.read(options.schema), (saved) => mendCompanies(options, saved)),
        failRun,
      )
      // A signal asks the source to stop: it buys nothing more, lands the pages in flight and
      // checkpoints them, so the loader commits every page that was paid for.
      // The people and companies forgotten (salesintel forget): the read buys none of them.
      const forgotten = yield* Effect.catchAll(Ledger.Suppressions.held(options.schema), failRun)
      const prepared = Commands.prepareRead({
        config: options.config,
        catalog,
        state,
        suppressed:
          forgotten === undefined ? [] : [{ key: forgotten.key, hashes: new Set(forgotten.hashes) }],
        ...(options.startedAt === undefined ? {} : { startedAt: options.startedAt }),
        stopWhen: Effect.asVoid(Deferred.await(stop)),
        // This project's loader: it resumes a full refresh a budget stopped, and drops no row for it.
        ownDestination: true,
        ...(spentThisPeriod === undefined ? {} : { spentThisPeriod }),
      })
      if (Either.isLeft(prepared)) return yield* failRun(new SyncConfigError({ description: prepared.left }))
      const { config, read, allowance } = prepared.right
      // The market first: a misspelt name is refused before anything is bought.
      yield* Effect.catchAll(writeMarket(options, config), failRun)
      if (options.fullRefresh?.includes("contacts") === true)
        yield* Effect.catchAll(warnDeleted(options, config), failRun)
      const limit = Allowance.limitOf(config.credit_budget, allowance)
      const loadedRead = yield* loadRead(options, runId, catalog, config, read.items, limit)
      const outcome = yield* endRun(options, { runId, abandoned, config, stop, datedBackMs }, loadedRead)
      return yield* withLeft(options, { ...outcome, allowance })
    }),
  )

/** The config's market into the target (TargetMarket.ts); a name refused is a config error. */
const writeMarket = (options: SyncOptions, config: Config.SourceConfig) =>
  Effect.catchTag(TargetMarket.write(options.schema, config, options.keySource), "MarketRefused", (refused) =>
    Effect.fail(new SyncConfigError({ description: refused.description })),
  )

/**
 * A run that stopped early (its budget, a signal) with what it left to buy, from the plan of the
 * next sync (Remaining.ts: what `salesintel plan` would say now, free requests only).
 */
const withLeft = (options: SyncOptions, outcome: SyncOutcome) =>
  Effect.gen(function* () {
    if (outcome.status !== "stopped_at_budget" && outcome.status !== "interrupted") return outcome
    yield* Effect.sync(() =>
      options.progress.write("counting what is left to buy, as salesintel plan does (free requests only)\n"),
    )
    const left = yield* Remaining.remaining(
      options.config,
      options.schema,
      options.startedAt ?? Date.now(),
      options.keySource,
    )
    return { ...outcome, left } satisfies SyncOutcome
  })

/**
 * The companies' saved state mended from their table (HeldCompanies), as the plan and
 * `salesintel-pg state` read it, and a line when it said less: a state deleted or edited buys
 * nothing the table holds. Not for a stream the user resets (it starts afresh on purpose).
 */
const mendCompanies = (options: SyncOptions, saved: ReadonlyArray<StreamState.SavedStreamState>) =>
  options.resetState?.includes("companies") === true
    ? Effect.succeed(saved)
    : Effect.flatMap(Ledger.HeldCompanies.mend(options.schema, saved), ({ saved, mended }) => {
        const line = Ledger.HeldCompanies.describeMended(options.schema, mended)
        return Effect.as(
          line === undefined ? Effect.void : Effect.sync(() => options.progress.write(`${line}\n`)),
          saved,
        )
      })

/**
 * A full refresh of the contacts deletes, once it completes, the rows it did not buy again: before
 * it buys anything, the sync says how many rows were bought by searches and emails the config no
 * longer has (those it can know it will not find again) and what buying them back would cost.
 */
const warnDeleted = (options: SyncOptions, config: Config.SourceConfig) =>
  Effect.gen(function* () {
    const searches = config.contacts?.searches.map((search) => search.name) ?? []
    const elsewhere = yield* Loader.Provenance.boughtElsewhere(
      options.schema,
      searches,
      config.contacts?.emails ?? [],
    )
    if (elsewhere === 0) return
    yield* Effect.sync(() =>
      options.progress.write(
        `full refresh of contacts: ${elsewhere} contacts held were bought by searches or emails this config no longer has; unless a configured search finds them again they are deleted when the refresh completes, and buying them back would cost ${elsewhere} credits (salesintel plan --full-refresh contacts counts them exactly)\n`,
      ),
    )
  })

/** The run's end: its status, what it committed and spent, recorded in the run row and returned. */
const endRun = (
  options: SyncOptions,
  run: {
    readonly runId: Runs.RunId
    readonly abandoned: ReadonlyArray<Runs.RunId>
    readonly config: Config.SourceConfig
    readonly stop: Deferred.Deferred<Runs.StopSignal.Signal>
    /** How far back the run's start is dated (Runs.Finish). */
    readonly datedBackMs: number
  },
  { loaded, budget, figures: followed, aheadFailure }: Effect.Effect.Success<ReturnType<typeof loadRead>>,
) =>
  Effect.gen(function* () {
    const { runId, abandoned, config, stop } = run
    const { summary, recorded: committed } = followed
    const signal = (yield* Deferred.isDone(stop)) ? yield* Deferred.await(stop) : undefined
    const loadError = Either.isLeft(loaded) ? loaded.left.message : undefined
    const error = loadError ?? summary?.failure?.message ?? aheadFailure
    const status = statusOf(signal, error, summary)
    // A run that did not succeed counts what committed (its last commit's records), where the read
    // may have gone further; and every credit the source spent: spent is spent, committed or not.
    // The read's summary is its last item: a load that failed first never saw it, and then the
    // streams are those that read or spent, with the credits at their last checkpoint.
    const read =
      summary?.streams
        .filter((stream) => stream.status !== "nothing to read")
        .map((stream) => ({
          stream: stream.stream,
          records: stream.records,
          rejected: stream.rejected,
          credits: stream.creditsSpent,
          recordsLeft: stream.recordsLeft,
        })) ??
      spentByStream(RunFigures.seen(followed), budget).map((stream) => ({
        ...stream,
        records: 0,
        rejected: 0,
        recordsLeft: 0,
      }))
    const streams = read.map((stream) => ({
      ...stream,
      records: endedOnItsOwn(status) ? stream.records : (committed[stream.stream]?.records ?? 0),
      rejected: endedOnItsOwn(status) ? stream.rejected : (committed[stream.stream]?.rejected ?? 0),
    }))
    const figures = Object.fromEntries(
      streams.map((s) => [
        s.stream,
        { records: s.records, credits: s.credits, ...(s.rejected > 0 ? { rejected: s.rejected } : {}) },
      ]),
    )
    const creditsUncertain = budget.uncertain
    yield* Runs.Lifecycle.end(
      options.schema,
      runId,
      {
        status,
        streams: figures,
        creditsUncertain,
        credits: budget.spent,
        datedBackMs: run.datedBackMs,
        ...(error === undefined ? {} : { error }),
      },
      // A read that failed on its own (its ledger's connection lost, say) failed the run too: a
      // bookkeeping write that fails after it is tried on a new connection, never the news.
      Either.isLeft(loaded) || status === "failed",
      options.reconnect,
    )
    // The row says what the run spent: its mark file, if any, has done its work.
    if (options.creditsAheadFile !== undefined) yield* Runs.CreditsAhead.clear(options.creditsAheadFile)
    return {
      runId,
      status,
      signal,
      abandoned,
      streams,
      creditsSpent: budget.spent,
      creditsUncertain,
      creditBudget: config.credit_budget,
      checkpoints: followed.checkpoints,
      error,
      deleted: Either.isRight(loaded) ? loaded.right.deleted : {},
    } satisfies SyncOutcome
  })

/** A run that read to its end, all it bought committed: it succeeded, or stopped at its budget. */
const endedOnItsOwn = (status: SyncOutcome["status"]): boolean =>
  status === "succeeded" || status === "stopped_at_budget"

/**
 * How the run ended: a signal interrupted it, an error failed it; otherwise it stopped at its
 * budget when the read left records unbought for lack of credits (not on request), else succeeded.
 */
const statusOf = (
  signal: Runs.StopSignal.Signal | undefined,
  error: string | undefined,
  summary: Read.ReadSummary | undefined,
): SyncOutcome["status"] => {
  if (signal !== undefined) return "interrupted"
  if (error !== undefined) return "failed"
  const short = summary?.streams.some((stream) => stream.recordsLeft > 0 || stream.incomplete) === true
  return short && summary?.stopped !== true ? "stopped_at_budget" : "succeeded"
}

/**
 * The streams that read or spent, each with the credits the budget counted under it (pages in
 * flight when the load failed, charged but never checkpointed, included): the budget is the one
 * count, so the stream lines add up to what the provider was charged, as the summary says.
 */
const spentByStream = (
  seen: ReadonlyArray<{ readonly stream: string }>,
  budget: CreditBudget.Snapshot,
): ReadonlyArray<{ readonly stream: string; readonly credits: number }> =>
  [...new Set([...seen.map((stream) => stream.stream), ...budget.accounts.keys()])].map((stream) => ({
    stream,
    credits: budget.accounts.get(stream)?.spent ?? 0,
  }))

/** A source LOG or TRACE line, as the sync writes it to its progress output. */
const logLine =
  (options: SyncOptions) =>
  (message: Message.LogMessage | Message.TraceErrorMessage): Effect.Effect<void> =>
    Effect.sync(() => {
      const text =
        options.logFormat === "json"
          ? JSON.stringify({
              timestamp: new Date().toISOString(),
              logLevel: message.type === "LOG" ? message.log.level : "ERROR",
              message: message.type === "LOG" ? message.log.message : message.trace.error.message,
              annotations: {
                from: "source",
                ...(message.type === "TRACE" ? { failure_type: message.trace.error.failure_type } : {}),
              },
            })
          : message.type === "LOG"
            ? `${message.log.level} ${message.log.message}`
            : `ERROR (${message.trace.error.failure_type}) ${message.trace.error.message}`
      if (message.type === "TRACE" || message.log.level !== "INFO" || options.progress.isTTY !== true)
        options.progress.write(`${options.progress.isTTY === true ? "\r\x1b[K" : ""}${text}\n`)
    })

/**
 * The read's items as they pass on their way to the loader, and the loader's commits, folded into
 * the run's figures (RunFigures.ts) in one Ref: the progress line is drawn from them as they change,
 * and each STATE's commit records in the run row the credits each stream had spent at that STATE.
 */
const follower = (
  options: SyncOptions,
  runId: Runs.RunId,
  /** What the run may spend (its budget, or less where the allowance has less left): the progress line's "of". */
  limit: number,
) =>
  Effect.map(Ref.make(RunFigures.initial(limit, Date.now())), (figures) => {
    const reporter = new Reporter(options.progress)
    const show = (now: RunFigures.RunFigures) =>
      Effect.sync(() => reporter.update(RunFigures.countsOf(now, Date.now()), Date.now()))
    return {
      figures,
      /** A chunk of the read's items, with the budget as it stood when the chunk passed. */
      see: (chunk: Chunk.Chunk<Read.Item>, budget: CreditBudget.Snapshot) =>
        Effect.flatMap(
          Ref.updateAndGet(figures, (before) =>
            Chunk.reduce(chunk, before, (folded, item) => RunFigures.step(folded, item, budget)),
          ),
          (now) => (Chunk.every(chunk, (item) => item._tag === "Tally") ? Effect.void : show(now)),
        ),
      /**
       * In a STATE's transaction: the run row's figures written, then the STATE waits for its
       * COMMIT. The value changes only once the write is done (a failed write leaves it as it was),
       * folded into the value as it is then: the read goes on meanwhile.
       */
      beforeCommit: ({ state, records, rejected }: Loader.Committed) => {
        const counted = Runs.figuresOf(records, rejected)
        const commit = (figures: RunFigures.RunFigures) =>
          RunFigures.committing(figures, state, counted, records)
        return Effect.flatMap(Ref.get(figures), (before) =>
          Effect.zipRight(
            Runs.progress(options.schema, runId, commit(before)[0]),
            Ref.update(figures, (now) => commit(now)[1]),
          ),
        )
      },
      committed: (state: Message.StateMessage) =>
        Effect.flatMap(
          Ref.updateAndGet(figures, (before) => RunFigures.committed(before, state)),
          show,
        ),
      finish: Effect.flatMap(Ref.get(figures), (now) =>
        Effect.sync(() => reporter.finish(RunFigures.countsOf(now, Date.now()))),
      ),
    }
  })

/** The read's items loaded into the target, each STATE committed with the run row's figures so far. */
const loadRead = (
  options: SyncOptions,
  runId: Runs.RunId,
  catalog: Catalog.LoaderCatalog,
  config: Config.SourceConfig,
  items: Read.Read["items"],
  limit: number,
) =>
  Effect.gen(function* () {
    const follow = yield* follower(options, runId, limit)
    const ahead = yield* WriteAhead.make(options.schema, runId, config.credit_budget, {
      connection: options.reconnect,
      file: options.creditsAheadFile,
    })
    const stop = options.stop
    const loaded = yield* Effect.gen(function* () {
      const budget = yield* CreditBudget.CreditBudget
      // The bought sets live in this database's ledger, written with the records they cover.
      const ledger = TargetLedger.onDatabase(options.schema, yield* Database.Database)
      // The budget is read for the progress line only; the run's figures come from the read's items.
      const seen = items.pipe(
        Stream.provideService(BoughtLedger.BoughtLedger, ledger),
        Stream.provideService(
          HeldKeys.HeldKeys,
          TargetLedger.heldOnDatabase(options.schema, yield* Database.Database),
        ),
        // A config's SQL query of known contacts or companies runs on this database.
        Stream.provideService(KnownRows.QueryRows, QueryRows.onDatabase(yield* Database.Database)),
        // One snapshot a chunk: a tap per item would cut the stream into chunks of one.
        Stream.mapChunksEffect((chunk) =>
          Effect.flatMap(budget.snapshot, (snapshot) => Effect.as(follow.see(chunk, snapshot), chunk)),
        ),
      )
      const result = yield* Effect.either(
        Loader.load(Read.messagesOf(seen), {
          schema: options.schema,
          runId,
          syncModes: Catalog.destinationSyncModes(catalog),
          ensureSchema: false,
          endedOnItsOwn:
            stop === undefined ? Effect.succeed(true) : Effect.map(Deferred.isDone(stop), (done) => !done),
          onMessage: logLine(options),
          beforeCommit: follow.beforeCommit,
          onStateCommitted: follow.committed,
        }),
      )
      // What the provider was charged, however the load ended: the budget counts every credited
      // request, settled or not (the read's summary never comes when the load failed first).
      return { result, budget: yield* budget.snapshot }
    }).pipe(
      // The run's budget written ahead in its row before it is spent (WriteAhead.ts).
      Effect.provideServiceEffect(
        CreditBudget.CreditBudget,
        Effect.flatMap(CreditBudget.CreditBudget, ahead.budget),
      ),
      Effect.provide(Commands.layerFor(config, { keySource: options.keySource }, limit)),
    )
    yield* follow.finish
    return {
      loaded: loaded.result,
      budget: loaded.budget,
      figures: yield* Ref.get(follow.figures),
      aheadFailure: yield* ahead.failure,
    }
  })

/**
 * Why a stream's records were left unbought, as its summary line says it: the signal that
 * stopped the run, the run's failure, or (only for a run that ended on its own) the budget.
 */
const leftOver = (outcome: SyncOutcome, left: number): string => {
  const records = left.toLocaleString("en-US")
  if (outcome.signal !== undefined) return `stopped by ${outcome.signal}: ${records} left to buy`
  if (!endedOnItsOwn(outcome.status)) return `${records} left to buy: the run ${outcome.status}`
  return `${records} left for lack of budget`
}

/** The run's status as the summary's first line says it. */
const statusWords = (outcome: SyncOutcome): string =>
  outcome.status === "stopped_at_budget"
    ? "stopped at the budget"
    : `${outcome.status}${outcome.signal === undefined ? "" : ` by ${outcome.signal}`}`

/**
 * A line per stream: what it bought, and what it left (the plan's figure when the run counted it,
 * else the read's); a stream the run never reached has a line when something is left of it.
 */
const streamLines = (outcome: SyncOutcome): ReadonlyArray<string> => {
  const planned = outcome.left !== undefined && "byStream" in outcome.left ? outcome.left.byStream : undefined
  const unread = Object.keys(planned ?? {}).filter(
    (stream) => stream !== "" && !outcome.streams.some((s) => s.stream === stream),
  )
  return [
    ...outcome.streams,
    ...unread.map((stream) => ({ stream, records: 0, credits: 0, recordsLeft: 0, rejected: 0 })),
  ].map((s) => {
    const left = planned === undefined ? s.recordsLeft : (planned[s.stream] ?? 0)
    const rejected = s.rejected > 0 ? `  (${s.rejected} rejected: paid for, kept whole in _rejected)` : ""
    return `  ${s.stream.padEnd(20)} ${String(s.records).padStart(8)} records ${String(s.credits).padStart(8)} credits${rejected}${left > 0 ? `  (${leftOver(outcome, left)})` : ""}`
  })
}

/** Whether a stream's records cost credits (the credited streams are the incremental ones). */
const paidFor = (stream: string): boolean =>
  Streams.isStreamName(stream) && Streams.streams[stream].syncModes.some((mode) => mode === "incremental")

/** The credits left in all, as the plan counts them, when the run counted them. */
const leftLines = (outcome: SyncOutcome): ReadonlyArray<string> => {
  if (outcome.left === undefined) return []
  if ("unknown" in outcome.left)
    return [
      `  credits left: not counted (the plan of the next sync could not be made: ${outcome.left.unknown})`,
    ]
  return [
    `  credits left: ${outcome.left.credits.toLocaleString("en-US")} (what salesintel plan counts for everything still due)`,
  ]
}

/** A run stopped at its budget: why, and when the rest is due (the allowance's renewal where it stopped the run). */
const stoppedLines = (outcome: SyncOutcome): ReadonlyArray<string> => {
  if (outcome.status !== "stopped_at_budget") return []
  const { allowance } = outcome
  return Allowance.binds(outcome.creditBudget, allowance)
    ? [
        `  ${Allowance.reachedLine(allowance, outcome.creditsSpent)}`,
        "  what it bought committed; the rest is due on the next sync once the allowance renews",
      ]
    : ["  what it bought committed; the rest is due on the next sync (raise credit_budget to buy it sooner)"]
}

/** What a finished sync says on stdout. */
export const describe = (outcome: SyncOutcome, target: string): string => {
  const lines = [
    `sync ${statusWords(outcome)} (run ${outcome.runId}) into ${target}`,
    ...(outcome.abandoned.length > 0
      ? [`  runs ${outcome.abandoned.join(", ")} were left running by a process that died: marked abandoned`]
      : []),
    ...streamLines(outcome),
    `  credits spent: ${outcome.creditsSpent} of ${outcome.creditBudget}; ${outcome.checkpoints} checkpoints committed`,
    ...leftLines(outcome),
    ...(outcome.creditsUncertain > 0
      ? [
          `  ${outcome.creditsUncertain} of those credits were possibly charged without delivery (requests that timed out or lost their connection)`,
        ]
      : []),
    // A credited stream's full refresh says what it deleted, none included; the free taxonomy,
    // read in full every run, only when it deleted something.
    ...Object.entries(outcome.deleted)
      .filter(([stream, rows]) => rows > 0 || paidFor(stream))
      .map(
        ([stream, rows]) =>
          `  full refresh of ${stream}: deleted ${rows.toLocaleString("en-US")} rows of ${stream} bought before and not bought again`,
      ),
    ...(outcome.status === "interrupted"
      ? ["  what committed stays; the next sync resumes from its last checkpoint"]
      : []),
    ...stoppedLines(outcome),
    ...(outcome.error === undefined ? [] : [`  error: ${outcome.error}`]),
  ]
  return `${lines.join("\n")}\n`
}
