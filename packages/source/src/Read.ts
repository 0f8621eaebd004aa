/**
 * The read engine: runs each configured stream's definition in catalog order and turns what it
 * yields into protocol messages. Records go out as they come; each checkpoint becomes a STATE
 * message counting the records since the previous one; shortfalls (work the credit budget did not
 * cover) are summed and reported at the end, and the read still succeeds. The first failure ends
 * the read with a TRACE error whose failure_type says who must act: config_error (the key, the
 * account, the config), transient_error (the provider's passing faults) or system_error.
 */
import { type Catalog, Message, type StreamState } from "@salesintel/airbyte"
import { type ApiError, type Client, CreditBudget } from "@salesintel/core"
import { Cause, Effect, Option, Redacted, Stream } from "effect"
import type { SourceConfig } from "./Config.ts"
import { definitionOf } from "./Definitions.ts"
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
}

export interface ReadSummary {
  readonly streams: Array<StreamSummary>
  /** Pages of records read so far, all streams: live while the read runs. */
  pages: number
  creditsSpent: number
  readonly creditBudget: number
  failure: { readonly failureType: Message.FailureType; readonly message: string } | undefined
}

export const failureTypeOf = (error: ApiError.ApiError | StateError): Message.FailureType => {
  switch (error._tag) {
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
    creditBudget: config.credit_budget,
    failure: undefined,
  }

  // The budget service is resolved once, up front: stream finalizers can run outside the region
  // where layers were provided, so no finalizer below may look a service up itself.
  const runStream = (budget: CreditBudget.CreditBudgetService, entry: Catalog.ConfiguredStream) => {
    const definition = definitionOf(entry.stream.name)
    const streamSummary: StreamSummary = {
      stream: entry.stream.name,
      syncMode: entry.sync_mode,
      records: 0,
      pages: 0,
      creditsSpent: 0,
      recordsLeft: 0,
      creditsNeeded: 0,
      status: "running",
    }
    summary.streams.push(streamSummary)
    if (definition === undefined || !definition.isConfigured(config)) {
      streamSummary.status = "nothing to read"
      return Stream.make(Message.log("INFO", `stream ${entry.stream.name}: nothing configured to read`))
    }
    let sinceCheckpoint = 0
    const name = definition.stream.name
    const toMessage = (output: Output<unknown>): ReadonlyArray<Message.Message> => {
      switch (output._tag) {
        case "Record":
          sinceCheckpoint++
          streamSummary.records++
          return [Message.record(name, output.data, Date.now(), output.decoded)]
        case "Checkpoint": {
          const message = Message.streamState(name, output.state, sinceCheckpoint)
          sinceCheckpoint = 0
          return [message]
        }
        case "PageRead":
          streamSummary.pages++
          summary.pages++
          return []
        case "Log":
          return [Message.log(output.level, `${name}: ${output.message}`)]
        case "Shortfall":
          streamSummary.recordsLeft += output.records ?? 0
          streamSummary.creditsNeeded += output.credits ?? 0
          return [
            Message.log(
              "WARN",
              `${name}: the credit budget did not cover ${output.records ?? "some"} records of ${output.detail}`,
            ),
          ]
      }
    }
    const spentNow = Effect.map(budget.snapshot, (snapshot) => snapshot.spent)
    return Stream.unwrap(
      Effect.map(spentNow, (spentBefore) =>
        definition.read({ config, syncMode: entry.sync_mode, state: state.get(name), startedAt }).pipe(
          Stream.mapConcat(toMessage),
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
              Stream.sync(() => {
                streamSummary.status = "succeeded"
                return Message.log(
                  "INFO",
                  `${name}: ${streamSummary.records} records (${entry.sync_mode}), ${streamSummary.creditsSpent} credits`,
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
        const left = summary.streams.filter((s) => s.recordsLeft > 0)
        const lines: Array<Message.Message> = []
        if (left.length > 0) {
          const records = left.reduce((sum, s) => sum + s.recordsLeft, 0)
          const credits = left.reduce((sum, s) => sum + s.creditsNeeded, 0)
          lines.push(
            Message.log(
              "WARN",
              `credit budget reached: ${snapshot.spent} of ${config.credit_budget} credits spent; ${records} records were left unread (${left.map((s) => `${s.stream} ${s.recordsLeft}`).join(", ")}), needing about ${credits} more credits. The state is saved: raise credit_budget or run again to continue.`,
            ),
          )
        }
        lines.push(
          Message.log(
            "INFO",
            `read finished: ${summary.streams.map((s) => `${s.stream} ${s.records}`).join(", ")} records; ${snapshot.spent} of ${config.credit_budget} credits spent`,
          ),
        )
        return Stream.fromIterable(lines)
      }),
    )

  const messages = Stream.unwrap(
    Effect.map(CreditBudget.CreditBudget, (budget) =>
      Stream.fromIterable(catalog.streams).pipe(
        Stream.flatMap((entry) => runStream(budget, entry)),
        Stream.concat(closing(budget)),
      ),
    ),
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
      return Stream.make(
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
