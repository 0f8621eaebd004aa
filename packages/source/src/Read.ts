/**
 * The read engine: runs each configured stream's definition in catalog order and turns what it
 * yields into protocol messages. Records go out as they come; each checkpoint becomes a STATE
 * message counting the records since the previous one; shortfalls (work the credit budget did not
 * cover) are summed and reported at the end, and the read still succeeds. The first failure ends
 * the read with a TRACE error whose failure_type says who must act: config_error (the key, the
 * account, the config), transient_error (the provider's passing faults) or system_error.
 *
 * Where a stream knows how much it will read (a search's partitions sized, the ids to buy diffed),
 * it says so with an ESTIMATE trace (rows, and bytes once a sample of records is sized), so
 * Airbyte and `salesintel sync` can show progress against it.
 *
 * Each stream says where it stands with STREAM_STATUS traces: STARTED, RUNNING at its first
 * record, then COMPLETE, or INCOMPLETE after a shortfall, a failure or a stop request. A stop
 * request (`stopWhen`) closes the run's budget, so every stream ends at its next request with what
 * it has and checkpoints it, and the streams not begun are not started.
 */
import { Catalog, Message, type StreamState } from "@salesintel/airbyte"
import { ApiError, type Client, CreditBudget } from "@salesintel/core"
import { Cause, Effect, Option, Redacted, Stream } from "effect"
import type { SourceConfig } from "./Config.ts"
import { definitionOf } from "./Definitions.ts"
import { withoutExcluded } from "./Exclusions.ts"
import type { Output } from "./Output.ts"
import type { StateError } from "./StateError.ts"

export interface StreamSummary {
  readonly stream: string
  readonly syncMode: Catalog.SyncMode
  records: number
  /** Pages of records read (free and credited). */
  pages: number
  creditsSpent: number
  /** Records the budget did not cover, when counted. */
  recordsLeft: number
  creditsNeeded: number
  status: "running" | "succeeded" | "failed" | "nothing to read"
  /** Ended early (budget shortfall, stop request, failure): said with STREAM_STATUS INCOMPLETE. */
  incomplete: boolean
}

export interface ReadSummary {
  readonly streams: Array<StreamSummary>
  /** Pages of records read so far, all streams: live while the read runs. */
  pages: number
  creditsSpent: number
  /** Of creditsSpent, credits possibly charged without delivery (credited requests whose outcome is unknown). */
  creditsUncertain: number
  readonly creditBudget: number
  /** A stop was requested (stopWhen completed) before the read ended. */
  stopped: boolean
  failure: { readonly failureType: Message.FailureType; readonly message: string } | undefined
}

export const failureTypeOf = (error: ApiError.ApiError | StateError): Message.FailureType => {
  switch (error._tag) {
    case "BadRequest":
      // The filters come from the config; only the paging the connector chose is its own bug.
      return error.parameter !== undefined && ApiError.pagingParameters.has(error.parameter)
        ? "system_error"
        : "config_error"
    case "Unauthorized":
    case "Forbidden":
    case "PaymentRequired":
    case "InvalidRequest":
    case "StateError":
      return "config_error"
    case "RateLimited":
    case "ServerError":
    case "Transport":
      return "transient_error"
    case "Decode":
    case "UnexpectedStatus":
      return "system_error"
  }
}

/**
 * A stream's ESTIMATE figures: the records its definition expects (the sum of the latest Estimate
 * output of each key, never below what it has emitted), and bytes from the average size of the
 * first `sampleSize` records (measured once: serializing every record to count bytes would cost
 * CPU).
 */
const utf8 = new TextEncoder()

export class Estimate {
  private readonly byKey = new Map<string, number>()
  private expected = 0
  private estimated = false
  private sampled = 0
  private sampledBytes = 0

  constructor(private readonly sampleSize = 100) {}

  /** `records` expected from the work under `key`, replacing what that key said before. */
  set(key: string, records: number): void {
    this.expected += records - (this.byKey.get(key) ?? 0)
    this.byKey.set(key, records)
    this.estimated = true
  }

  /** Counts one record into the size sample; true when this record completed the sample (and an estimate exists). */
  sample(data: unknown): boolean {
    if (this.sampled >= this.sampleSize) return false
    this.sampled++
    this.sampledBytes += utf8.encode(JSON.stringify(data)).length
    return this.sampled === this.sampleSize && this.estimated
  }

  rows(emitted: number): number {
    return Math.max(this.expected, emitted)
  }

  /** Undefined until some record has been sized. */
  bytes(emitted: number): number | undefined {
    return this.sampled === 0 ? undefined : (this.sampledBytes / this.sampled) * this.rows(emitted)
  }
}

/** Removes the key from any text that leaves the process, however it got there. */
export const scrubber = (config: SourceConfig) => {
  const key = Redacted.value(config.api_key)
  return (text: string): string => (key.length >= 4 ? text.split(key).join("<redacted>") : text)
}

export interface ReadOptions {
  readonly config: SourceConfig
  readonly catalog: Catalog.ConfiguredCatalog
  readonly state: StreamState.InputState
  /** The run's "now" in epoch milliseconds. */
  readonly startedAt: number
  /**
   * Completes when a graceful stop is requested (e.g. `Deferred.await(d)` on SIGINT). From then on
   * no page or purchase is asked for; requests in flight land and their records are emitted, each
   * stream touched checkpoints, unfinished streams end INCOMPLETE, and the read ends normally.
   */
  readonly stopWhen?: Effect.Effect<void> | undefined
}

export interface Read {
  readonly messages: Stream.Stream<
    Message.Message,
    never,
    Client.SalesIntelClient | CreditBudget.CreditBudget
  >
  /** Complete once `messages` has been consumed. */
  readonly summary: ReadSummary
}

/** The messages of a read, and its summary (complete once the messages have been consumed). */
export const read = (options: ReadOptions): Read => {
  const { config, catalog, state, startedAt } = options
  const scrub = scrubber(config)
  const summary: ReadSummary = {
    streams: [],
    pages: 0,
    creditsSpent: 0,
    creditsUncertain: 0,
    creditBudget: config.credit_budget,
    stopped: false,
    failure: undefined,
  }
  const status = (stream: string, value: Message.StreamStatus) =>
    Message.streamStatus(stream, value, Date.now())

  // The budget service is resolved once, up front: stream finalizers can run outside the region
  // where layers were provided, so no finalizer below may look a service up itself.
  // Built when the stream's turn comes (not when the catalog is read), so a stop requested during
  // an earlier stream is seen here.
  const runStream = (budget: CreditBudget.CreditBudgetService, entry: Catalog.ConfiguredStream) =>
    Stream.suspend(() => streamMessages(budget, entry))
  const streamMessages = (budget: CreditBudget.CreditBudgetService, entry: Catalog.ConfiguredStream) => {
    const definition = definitionOf(entry.stream.name)
    const { syncMode, downgraded } = Catalog.syncModeOf(entry)
    const streamSummary: StreamSummary = {
      stream: entry.stream.name,
      syncMode,
      records: 0,
      pages: 0,
      creditsSpent: 0,
      recordsLeft: 0,
      creditsNeeded: 0,
      status: "running",
      incomplete: false,
    }
    summary.streams.push(streamSummary)
    if (summary.stopped) {
      // Stopped before this stream began: it is not started, and says so.
      streamSummary.incomplete = true
      return Stream.make(status(entry.stream.name, "INCOMPLETE"))
    }
    if (definition === undefined || !definition.isConfigured(config)) {
      streamSummary.status = "nothing to read"
      return Stream.make(
        status(entry.stream.name, "STARTED"),
        Message.log("INFO", `stream ${entry.stream.name}: nothing configured to read`),
        status(entry.stream.name, "COMPLETE"),
      )
    }
    let sinceCheckpoint = 0
    const name = definition.stream.name
    const estimate = new Estimate()
    const toMessage = (output: Output<unknown>): ReadonlyArray<Message.Message> => {
      switch (output._tag) {
        case "Record": {
          sinceCheckpoint++
          streamSummary.records++
          const record = Message.record(name, output.data, Date.now(), output.decoded)
          // Once the sample of record sizes is taken, the estimate is said again with its bytes.
          const sized = estimate.sample(output.data)
            ? [
                Message.estimate(
                  name,
                  estimate.rows(streamSummary.records),
                  estimate.bytes(streamSummary.records),
                  Date.now(),
                ),
              ]
            : []
          return streamSummary.records === 1
            ? [status(name, "RUNNING"), record, ...sized]
            : [record, ...sized]
        }
        case "Estimate":
          for (const [key, records] of output.records) estimate.set(key, records)
          return [
            Message.estimate(
              name,
              estimate.rows(streamSummary.records),
              estimate.bytes(streamSummary.records),
              Date.now(),
            ),
          ]
        case "Checkpoint": {
          const message = Message.streamState(name, output.state, sinceCheckpoint)
          sinceCheckpoint = 0
          return [message]
        }
        case "Tally":
          return []
        case "PageRead":
          streamSummary.pages++
          summary.pages++
          return []
        case "Log":
          return [Message.log(output.level, `${name}: ${output.message}`)]
        case "Shortfall":
          streamSummary.incomplete = true
          streamSummary.recordsLeft += output.records ?? 0
          streamSummary.creditsNeeded += output.credits ?? 0
          return [
            Message.log(
              "WARN",
              summary.stopped
                ? `${name}: stopped on request before ${output.records ?? "some"} records of ${output.detail}`
                : `${name}: the credit budget did not cover ${output.records ?? "some"} records of ${output.detail}`,
            ),
          ]
      }
    }
    const spentNow = Effect.map(budget.snapshot, (snapshot) => {
      // Also when the read fails part-way: the run's uncertain credits must still be reported.
      summary.creditsUncertain = snapshot.uncertain
      return snapshot.spent
    })
    return Stream.unwrap(
      Effect.map(spentNow, (spentBefore) =>
        definition.read({ config, syncMode, state: state.get(name), startedAt }).pipe(
          Stream.mapConcat(toMessage),
          // Excluded fields (config exclude_fields, catalog field selection) leave before the record does.
          withoutExcluded(config, entry),
          (messages) =>
            Stream.concat(
              Stream.make(
                status(name, "STARTED"),
                ...(downgraded
                  ? [
                      Message.log(
                        "WARN",
                        `${name}: the catalog asks for ${entry.sync_mode}, which this stream does not support; it is read in full (full_refresh)`,
                      ),
                    ]
                  : []),
              ),
              messages,
            ),
          Stream.ensuring(
            Effect.map(spentNow, (spentAfter) => {
              streamSummary.creditsSpent = spentAfter - spentBefore
              // Also when the read fails part-way (a 402, say): the total must still be right.
              summary.creditsSpent = spentAfter
              if (streamSummary.status === "running") streamSummary.status = "failed"
            }),
          ),
          (messages) =>
            Stream.concat(
              messages,
              Stream.suspend(() => {
                streamSummary.status = "succeeded"
                // A stop during the stream may have cut work no output counted: not complete.
                if (summary.stopped) streamSummary.incomplete = true
                return Stream.make(
                  Message.log(
                    "INFO",
                    `${name}: ${streamSummary.records} records (${syncMode}), ${streamSummary.creditsSpent} credits`,
                  ),
                  status(name, streamSummary.incomplete ? "INCOMPLETE" : "COMPLETE"),
                )
              }),
            ),
        ),
      ),
    )
  }

  const closing = (budget: CreditBudget.CreditBudgetService) =>
    Stream.unwrap(
      Effect.gen(function* () {
        const snapshot = yield* budget.snapshot
        summary.creditsSpent = snapshot.spent
        summary.creditsUncertain = snapshot.uncertain
        const left = summary.streams.filter((s) => s.recordsLeft > 0)
        const lines: Array<Message.Message> = []
        if (left.length > 0) {
          const records = left.reduce((sum, s) => sum + s.recordsLeft, 0)
          const credits = left.reduce((sum, s) => sum + s.creditsNeeded, 0)
          const why = summary.stopped ? "stopped on request" : "credit budget reached"
          lines.push(
            Message.log(
              "WARN",
              `${why}: ${snapshot.spent} of ${config.credit_budget} credits spent, ${snapshot.available} unspent; ${records} records were left unread (${left.map((s) => `${s.stream} ${s.recordsLeft}`).join(", ")}), needing about ${credits} credits in all. The state is saved: ${summary.stopped ? "run again" : "raise credit_budget or run again"} to continue.`,
            ),
          )
        }
        lines.push(
          Message.log(
            "INFO",
            `read ${summary.stopped ? "stopped on request" : "finished"}: ${summary.streams.map((s) => `${s.stream} ${s.records}`).join(", ")} records; ${snapshot.spent} of ${config.credit_budget} credits spent, ${snapshot.uncertain} of them possibly charged without delivery`,
          ),
        )
        return Stream.fromIterable(lines)
      }),
    )

  // The stop request closes the budget: every later reservation (credited or free page, purchase)
  // is refused, so each stream ends at its next request with what it has, and checkpoints it.
  const watchStop = (budget: CreditBudget.CreditBudgetService) =>
    options.stopWhen === undefined
      ? Effect.void
      : Effect.forkScoped(
          Effect.zipRight(
            options.stopWhen,
            Effect.zipRight(
              Effect.sync(() => {
                summary.stopped = true
              }),
              budget.close,
            ),
          ),
        )

  const messages = Stream.unwrapScoped(
    Effect.gen(function* () {
      const budget = yield* CreditBudget.CreditBudget
      yield* watchStop(budget)
      return Stream.fromIterable(catalog.streams).pipe(
        Stream.flatMap((entry) => runStream(budget, entry)),
        Stream.concat(closing(budget)),
      )
    }),
  ).pipe(
    Stream.catchAllCause((cause) => {
      const failure = Cause.failureOption(cause)
      const failureType = Option.match(failure, {
        onNone: () => "system_error" as const,
        onSome: failureTypeOf,
      })
      const message = Option.match(failure, {
        onNone: () => `unexpected failure: ${Cause.pretty(cause).split("\n")[0] ?? "unknown"}`,
        onSome: (error) => error.message,
      })
      summary.failure = { failureType, message: scrub(message) }
      const failedStream = summary.streams.find((s) => s.status === "failed" || s.status === "running")
      if (failedStream !== undefined) failedStream.incomplete = true
      return Stream.make(
        ...(failedStream === undefined ? [] : [status(failedStream.stream, "INCOMPLETE")]),
        Message.traceError(failureType, scrub(message), Date.now(), {
          internal: scrub(Cause.pretty(cause)).slice(0, 4_000),
          ...(failedStream === undefined ? {} : { stream: failedStream.stream }),
        }),
      )
    }),
    Stream.map((message) =>
      message.type === "LOG" ? Message.log(message.log.level, scrub(message.log.message)) : message,
    ),
  )
  return { messages, summary }
}
