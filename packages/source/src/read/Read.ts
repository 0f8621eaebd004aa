/**
 * The read engine: runs each configured stream's definition and turns what it yields into
 * protocol messages. The credited streams run in turn in catalog order, each beginning once the
 * one before has reserved all it will (the budget goes to them in that order, as the plan counts
 * it); the free ones run beside them and each other, so their round trips overlap the credited
 * reads (streamsOf). Records go out as they come; each checkpoint
 * becomes a STATE message counting the records since the previous one; shortfalls (work the
 * credit budget did not cover) are summed and reported at the end, and the read still succeeds.
 * The first failure ends the read with a TRACE error whose failure_type says who must act:
 * config_error (the key, the account, the config), transient_error (the provider's passing faults)
 * or system_error.
 *
 * Where a stream knows how much it will read (a search's partitions sized, the ids to buy diffed),
 * it says so with an ESTIMATE trace (rows, and bytes once a sample of records is sized), so
 * Airbyte and `salesintel sync` can show progress against it.
 *
 * Each stream says where it stands with STREAM_STATUS traces: STARTED, RUNNING at its first
 * record, then COMPLETE, or INCOMPLETE after a shortfall, a failure or a stop request. A stop
 * request (`stopWhen`) closes the run's budget, so every stream ends at its next request with what
 * it has and checkpoints it, and the streams not begun are not started.
 *
 * A credit allowance (Allowance.ts) limits the run's budget to what its period has left; where
 * that, not credit_budget, cuts the read, it says so in one line with the renewal time, each
 * stream it leaves unfinished ends INCOMPLETE with the reason RATE_LIMITED (quota_reset: the
 * renewal), and each credited stream's STATE carries the period's spending for the next read.
 *
 * While the client's rate limit holds every request back (the provider's 429, or the client's own
 * pace for seconds at a time), each stream reading says so with a RUNNING status whose reason is
 * RATE_LIMITED (quota_reset: when the wait ends) and a LOG of what it waits for, again every
 * `heartbeatMillis` while the wait lasts: a platform that takes silence for a hung source sees it alive.
 */

import { Catalog, Message, type StreamState, Streams } from "@salesintel/airbyte"
import { ApiError, type Client, CreditBudget, Page, RateLimit } from "@salesintel/core"
import * as Cause from "effect/Cause"
import * as Chunk from "effect/Chunk"
import * as Clock from "effect/Clock"
import * as Deferred from "effect/Deferred"
import * as Effect from "effect/Effect"
import * as Exit from "effect/Exit"
import * as Option from "effect/Option"
import * as Redacted from "effect/Redacted"
import * as Ref from "effect/Ref"
import * as Stream from "effect/Stream"
import * as Allowance from "../Allowance.ts"
import type { LedgerError } from "../bought/BoughtLedger.ts"
import * as Suppression from "../bought/Suppression.ts"
import type { SourceConfig } from "../Config.ts"
import { definitionOf } from "../Definitions.ts"
import { excluding, valueFilter } from "../Exclusions.ts"
import type { KnownInputError } from "../known/Rows.ts"
import type { StateError } from "../StateError.ts"
import * as KnownKeys from "../streams/companies/KnownKeys.ts"
import { Estimate } from "./Estimate.ts"
import type * as Output from "./Output.ts"
import * as Substreams from "./Substreams.ts"
import * as Turns from "./Turns.ts"

export interface StreamSummary {
  readonly stream: string
  readonly syncMode: Catalog.SyncMode
  readonly records: number
  /** Records of its pages that did not decode, sent whole to the `_rejected` stream (paid for where credited). */
  readonly rejected: number
  /** Pages of records read (free and credited). */
  readonly pages: number
  readonly creditsSpent: number
  /** Records the budget did not cover, when counted. */
  readonly recordsLeft: number
  readonly creditsNeeded: number
  readonly status: "succeeded" | "failed" | "nothing to read" | "not started"
  /** Ended early (budget shortfall, stop request, failure): said with STREAM_STATUS INCOMPLETE. */
  readonly incomplete: boolean
}

export interface ReadSummary {
  readonly streams: ReadonlyArray<StreamSummary>
  readonly pages: number
  readonly creditsSpent: number
  /** Of creditsSpent, credits possibly charged without delivery (credited requests whose outcome is unknown). */
  readonly creditsUncertain: number
  readonly creditBudget: number
  /** What the run could spend: creditBudget, or less where the credit allowance had less left. */
  readonly creditLimit: number
  /** Where the credit allowance stood as the read began; undefined without one. */
  readonly allowance: Allowance.Standing | undefined
  /** A stop was requested (stopWhen completed) before the read ended. */
  readonly stopped: boolean
  readonly failure:
    | {
        readonly failureType: Message.FailureType
        readonly message: string
        /** The typed failure that ended the read; undefined for a defect, or a stream left unfinished (unfinishedReplaced). */
        readonly error: ReadError | undefined
      }
    | undefined
}

/**
 * What a read yields: its protocol messages, a mark for each page of records read (for progress),
 * what each piece of a stream's work did (its tallies: the cost plan is their sum, CostPlan.ts), the
 * credits a stream had spent when it wrote each checkpoint (just before that STATE message), and
 * last, once, the read's summary: a value made from what the streams yielded, never an object
 * changed while they run.
 */
export type Item =
  | { readonly _tag: "Message"; readonly message: Message.Message }
  | { readonly _tag: "PageRead"; readonly stream: string }
  | {
      readonly _tag: "Tally"
      readonly stream: string
      readonly work: string
      readonly counts: Output.Tally["counts"]
    }
  | { readonly _tag: "Spent"; readonly stream: string; readonly credits: number }
  | { readonly _tag: "Summary"; readonly summary: ReadSummary }

/** The protocol messages of a read's items: what the source writes on stdout. */
export const messagesOf = <E, R>(items: Stream.Stream<Item, E, R>): Stream.Stream<Message.Message, E, R> =>
  Stream.filterMap(items, (item) => (item._tag === "Message" ? Option.some(item.message) : Option.none()))

export const failureTypeOf = (
  error: ApiError.ApiError | StateError | LedgerError | KnownInputError,
): Message.FailureType => {
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
    case "KnownInputError":
      return "config_error"
    case "RateLimited":
    case "ServerError":
    case "Transport":
      return "transient_error"
    case "Decode":
    case "UnexpectedStatus":
    case "LedgerError":
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
  /**
   * Completes when a graceful stop is requested (e.g. `Deferred.await(d)` on SIGINT). From then on
   * no page or purchase is asked for; requests in flight land and their records are emitted, each
   * stream touched checkpoints, unfinished streams end INCOMPLETE, and the read ends normally.
   */
  readonly stopWhen?: Effect.Effect<void> | undefined
  /**
   * The read feeds this project's loader (`salesintel sync`, the plan's dry run), which resumes a
   * full refresh where a budget stopped it and never drops an unfinished stream's rows. Otherwise
   * (the source's `read`, whose destination is any Airbyte destination) a stream whose destination
   * replaces its table (Catalog.replacesTable) and that ends unfinished fails the read, after its
   * STATEs and INCOMPLETE, so that the destination keeps its table (`unfinishedReplaced`); and a
   * stream selected with nothing configured says so in a WARN.
   */
  readonly ownDestination?: boolean | undefined
  /**
   * Where the credit allowance stands (what the period spent before this read): the read's budget
   * is then at most what it has left, each credited stream's STATE carries the period's spending
   * (Allowance.statePart), and a stream it leaves unfinished says RATE_LIMITED until it renews.
   */
  readonly allowance?: Allowance.Standing | undefined
  /** The people and companies forgotten: no stream buys one of them (bought/Suppression.ts). */
  readonly suppressed?: Suppression.Matcher | undefined
}

export interface Read {
  /** The read's items; its summary is the last of them. */
  readonly items: Stream.Stream<Item, never, Client.SalesIntelClient | CreditBudget.CreditBudget>
  /** Its protocol messages alone: what the source writes on stdout. */
  readonly messages: Stream.Stream<
    Message.Message,
    never,
    Client.SalesIntelClient | CreditBudget.CreditBudget
  >
}

/** A stream's figures as its outputs come, made into its summary when it ends. */
interface Figures {
  readonly records: number
  readonly rejected: number
  readonly pages: number
  readonly recordsLeft: number
  readonly creditsNeeded: number
  readonly incomplete: boolean
  /** Records since the last checkpoint: what its STATE message counts. */
  readonly sinceCheckpoint: number
}

const noFigures: Figures = {
  records: 0,
  rejected: 0,
  pages: 0,
  recordsLeft: 0,
  creditsNeeded: 0,
  incomplete: false,
  sinceCheckpoint: 0,
}

export type ReadError = ApiError.ApiError | StateError | LedgerError | KnownInputError

/** The failure that ends a read, and the stream it ended. */
interface Failure {
  readonly stream: string | undefined
  readonly cause: Cause.Cause<ReadError>
}

/** What the streams of one read share. */
interface Run {
  readonly options: ReadOptions
  readonly budget: CreditBudget.CreditBudgetService
  /** A stop was requested. */
  readonly stopped: Ref.Ref<boolean>
  /** The summaries of the streams ended so far, in the order they ended. */
  readonly ended: Ref.Ref<ReadonlyArray<StreamSummary>>
  /** The first stream to fail: what the read reports once the streams still running end. */
  readonly failure: Ref.Ref<Option.Option<Failure>>
  readonly substreams: Substreams.Substreams
  /** The catalog lists `_rejected` (Streams.rejected): rejected records go out as its records. */
  readonly sendsRejected: boolean
}

const message = (value: Message.Message): Item => ({ _tag: "Message", message: value })
const status = (stream: string, value: Message.StreamStatus): Item =>
  message(Message.streamStatus(stream, value, Date.now()))

/** One stream's part of the read: what it emits turned into items, its figures kept as it goes. */
interface StreamRun {
  readonly run: Run
  readonly name: string
  /** Its registry entry (the key paths a rejected record's key is read by). */
  readonly entry: Streams.StreamEntry<unknown>
  /** Takes the fields the config and catalog exclude out of a rejected record, before it is said or sent. */
  readonly withoutExcluded: (value: unknown) => unknown
  readonly figures: Ref.Ref<Figures>
  readonly estimate: Estimate
  /** The credits the stream has spent, as the run's budget counts them (none for a free stream). */
  readonly spent: Effect.Effect<number>
}

const estimateItem = (stream: StreamRun, records: number): Item =>
  message(
    Message.estimate(stream.name, stream.estimate.rows(records), stream.estimate.bytes(records), Date.now()),
  )

const recordItems = (stream: StreamRun, output: Output.RecordOutput<unknown>) =>
  Ref.modify(stream.figures, (figures): [ReadonlyArray<Item>, Figures] => {
    Substreams.collect(stream.run.substreams, stream.name, output)
    const records = figures.records + 1
    const record = message(Message.record(stream.name, output.data, Date.now(), output.decoded))
    // Once the sample of record sizes is taken, the estimate is said again with its bytes.
    const sized = stream.estimate.sample(output.data) ? [estimateItem(stream, records)] : []
    const items = records === 1 ? [status(stream.name, "RUNNING"), record, ...sized] : [record, ...sized]
    return [items, { ...figures, records, sinceCheckpoint: figures.sinceCheckpoint + 1 }]
  })

/** Rejected records said one by one in a WARN up to this many a stream; the rest are counted (the summary). */
const rejectedSaid = 5

/**
 * A record of the stream's pages that did not decode: a record of the `_rejected` stream (its
 * stream, key when it has one, reason, and the record whole: a value that is not an object under
 * `value`), so that nothing paid for goes unseen. Where the catalog does not list `_rejected` (a
 * destination may refuse a record of a stream it was not configured for) the WARN carries the
 * record instead. It is not one of the stream's records: its STATE does not count it.
 */
const rejectedItems = (stream: StreamRun, output: Output.RejectedOutput) =>
  Ref.modify(stream.figures, (figures): [ReadonlyArray<Item>, Figures] => {
    const { raw } = output.rejected
    const key = Streams.keyOfRaw(stream.entry, raw) ?? null
    const reason = Page.reasonOf(output.rejected)
    const whole = stream.withoutExcluded(raw)
    const record =
      typeof whole === "object" && whole !== null && !Array.isArray(whole) ? whole : { value: whole }
    const rejected = figures.rejected + 1
    const where = stream.run.sendsRejected
      ? `it is paid for and kept whole in ${Streams.rejected.name}`
      : `it is paid for; the catalog does not list ${Streams.rejected.name}, so here it is whole: ${JSON.stringify(record)}`
    const said =
      stream.run.sendsRejected && rejected > rejectedSaid
        ? []
        : [
            message(
              Message.log(
                "WARN",
                `${stream.name}: a record did not decode (${reason}${key === null ? "" : `; key ${key}`}): ${where}${stream.run.sendsRejected && rejected === rejectedSaid ? "; further ones are counted, not said" : ""}`,
              ),
            ),
          ]
    const data = {
      stream: stream.name,
      key,
      reason,
      record,
      [Streams.addedFields.fetchedAt]: new Date(stream.run.options.startedAt).toISOString(),
    }
    const sent = stream.run.sendsRejected
      ? [message(Message.record(Streams.rejected.name, data, Date.now()))]
      : []
    return [[...said, ...sent], { ...figures, rejected }]
  })

/**
 * Known identities done, kept in the destination's `_known_done` (Streams.knownDone): a record of
 * that stream. Like a rejected record it is not one of the stream's records (its STATE does not
 * count it), and is sent only where the destination keeps them (`salesintel sync`).
 */
const knownDoneItem = (stream: StreamRun, output: Output.KnownDoneOutput): Item =>
  message(
    Message.record(
      Streams.knownDone.name,
      {
        stream: stream.name,
        keys: [...output.keys],
        [Streams.addedFields.fetchedAt]: new Date(stream.run.options.startedAt).toISOString(),
      },
      Date.now(),
    ),
  )

/**
 * A checkpoint: the credits the stream has spent, then its STATE counting the records since the
 * last; a credited stream's STATE carries what the allowance's period has spent so far, this run's
 * spending included (Allowance.ts), where there is an allowance.
 */
const checkpointItems = (stream: StreamRun, output: Output.Checkpoint) =>
  Effect.flatMap(Effect.zip(stream.spent, stream.run.budget.snapshot), ([spent, budget]) =>
    Ref.modify(stream.figures, (figures): [ReadonlyArray<Item>, Figures] => {
      const { allowance } = stream.run.options
      const state =
        allowance === undefined || definitionOf(stream.name)?.credited !== true
          ? output.state
          : { ...output.state, [Allowance.stateKey]: Allowance.statePart(allowance, budget.spent) }
      return [
        [
          { _tag: "Spent", stream: stream.name, credits: spent },
          message(Message.streamState(stream.name, state, figures.sinceCheckpoint)),
        ],
        { ...figures, sinceCheckpoint: 0 },
      ]
    }),
  )

const shortfallItems = (stream: StreamRun, output: Output.Shortfall) =>
  Effect.flatMap(Effect.zip(Ref.get(stream.run.stopped), Ref.get(stream.run.failure)), ([stopped, failure]) =>
    Ref.modify(stream.figures, (figures): [ReadonlyArray<Item>, Figures] => {
      const records = output.records ?? "some"
      const text =
        output.because !== undefined
          ? `${stream.name}: ${records} records of ${output.detail} not bought: ${output.because}`
          : stopped
            ? `${stream.name}: stopped on request before ${records} records of ${output.detail}`
            : Option.isSome(failure)
              ? `${stream.name}: ${records} records of ${output.detail} not bought: the read ends on ${failure.value.stream === undefined ? "a failure" : `the failure of ${failure.value.stream}`}`
              : `${stream.name}: the credit ${allowanceBinds(stream.run) ? `allowance (it renews at ${Allowance.iso(stream.run.options.allowance?.renewsAt ?? 0)})` : "budget"} did not cover ${records} records of ${output.detail}`
      return [
        [message(Message.log("WARN", text))],
        {
          ...figures,
          incomplete: true,
          recordsLeft: figures.recordsLeft + (output.records ?? 0),
          creditsNeeded: figures.creditsNeeded + (output.credits ?? 0),
        },
      ]
    }),
  )

const itemsOf = (stream: StreamRun, output: Output.Output<unknown>): Effect.Effect<ReadonlyArray<Item>> => {
  switch (output._tag) {
    case "Record":
      return recordItems(stream, output)
    case "Rejected":
      return rejectedItems(stream, output)
    case "KnownDone":
      return Effect.succeed([knownDoneItem(stream, output)])
    case "Estimate":
      for (const [key, records] of output.records) stream.estimate.set(key, records)
      return Effect.map(Ref.get(stream.figures), (figures) => [estimateItem(stream, figures.records)])
    case "Checkpoint":
      return checkpointItems(stream, output)
    case "PageRead":
      return Effect.as(
        Ref.update(stream.figures, (figures) => ({ ...figures, pages: figures.pages + 1 })),
        [{ _tag: "PageRead", stream: stream.name }],
      )
    case "Log":
      return Effect.succeed([message(Message.log(output.level, `${stream.name}: ${output.message}`))])
    case "Shortfall":
      return shortfallItems(stream, output)
    case "Tally":
      return Effect.succeed([
        { _tag: "Tally", stream: stream.name, work: output.work, counts: output.counts },
      ])
  }
}

/** The stream's summary, from its figures, recorded among the streams ended. */
const endStream = (stream: StreamRun, syncMode: Catalog.SyncMode, outcome: "succeeded" | "failed") =>
  Effect.gen(function* () {
    const figures = yield* Ref.get(stream.figures)
    const spent = yield* stream.spent
    // A stop during the stream may have cut work no output counted: not complete.
    const stopped = yield* Ref.get(stream.run.stopped)
    const summary: StreamSummary = {
      stream: stream.name,
      syncMode,
      records: figures.records,
      rejected: figures.rejected,
      pages: figures.pages,
      creditsSpent: spent,
      recordsLeft: figures.recordsLeft,
      creditsNeeded: figures.creditsNeeded,
      status: outcome,
      incomplete: figures.incomplete || stopped || outcome === "failed",
    }
    yield* Ref.update(stream.run.ended, (ended) => [...ended, summary])
    return summary
  })

/** Keeps the first failure: the one the read reports. */
const failed = (run: Run, failure: Failure) =>
  Ref.update(run.failure, (first) => (Option.isSome(first) ? first : Option.some(failure)))

/** A stream that is not read (stopped before it began, or nothing configured), summarised as such. */
const notRead = (run: Run, entry: Catalog.ConfiguredStream, state: "nothing to read" | "not started") =>
  Effect.as(
    Ref.update(run.ended, (ended) => [
      ...ended,
      {
        ...noFigures,
        stream: entry.stream.name,
        syncMode: Catalog.syncModeOf(entry).syncMode,
        creditsSpent: 0,
        status: state,
        incomplete: state === "not started",
      },
    ]),
    state === "not started"
      ? [status(entry.stream.name, "INCOMPLETE")]
      : [
          status(entry.stream.name, "STARTED"),
          // Selected in the catalog of an Airbyte destination, it ends with no record: worth a WARN.
          run.options.ownDestination === true
            ? message(Message.log("INFO", `stream ${entry.stream.name}: nothing configured to read`))
            : message(
                Message.log(
                  "WARN",
                  `stream ${entry.stream.name}: selected, but nothing is configured for it (${definitionOf(entry.stream.name)?.configuredBy ?? "no such stream"}): it sends no record`,
                ),
              ),
          status(entry.stream.name, "COMPLETE"),
        ],
  )

/** The allowance, not the budget, limits the run's spending (Allowance.binds). */
const allowanceBinds = (run: Run): boolean =>
  Allowance.binds(run.options.config.credit_budget, run.options.allowance)

/**
 * A stream left unfinished where the allowance limits the run (not stopped on request, no stream
 * failed): its INCOMPLETE gives the reason RATE_LIMITED, the quota resetting when the period renews.
 */
const incompleteItem = (stream: StreamRun) =>
  Effect.map(
    Effect.zip(Ref.get(stream.run.stopped), Ref.get(stream.run.failure)),
    ([stopped, failure]): Item => {
      const renewsAt = stream.run.options.allowance?.renewsAt
      return !stopped && Option.isNone(failure) && allowanceBinds(stream.run) && renewsAt !== undefined
        ? message(
            Message.streamStatus(stream.name, "INCOMPLETE", Date.now(), [
              { type: "RATE_LIMITED", rate_limited: { quota_reset: renewsAt } },
            ]),
          )
        : status(stream.name, "INCOMPLETE")
    },
  )

/** A stream that read to its end: its summary recorded, its closing line and status. */
const closingItems = (stream: StreamRun, syncMode: Catalog.SyncMode) =>
  Stream.unwrap(
    Effect.gen(function* () {
      const summary = yield* endStream(stream, syncMode, "succeeded")
      return Stream.make(
        message(
          Message.log(
            "INFO",
            `${stream.name}: ${summary.records} records (${syncMode}), ${summary.creditsSpent} credits`,
          ),
        ),
        summary.incomplete ? yield* incompleteItem(stream) : status(stream.name, "COMPLETE"),
      )
    }),
  )

/**
 * What a credited stream spends through: its account of the run's budget (the one count: what it
 * spent is read from the budget), which, after the first, waits its turn for a batch it cannot
 * have whole (Turns.budgetInTurn).
 */
const budgetOf = (run: Run, name: string, turn: Turns.Turn) => {
  const account = CreditBudget.account(run.budget, name)
  return turn.first ? account : Turns.budgetInTurn(account, turn.earlierEnded)
}

/** What `stream` has spent, as the run's budget counts it. */
const spentBy = (run: Run, stream: string) =>
  Effect.map(run.budget.snapshot, (snapshot) => snapshot.accounts.get(stream)?.spent ?? 0)

/**
 * How often a wait of the rate limit is said again while it lasts. The platform fails a source
 * silent for longer than its heartbeat (the metadata declares maxSecondsBetweenMessages: 900, and a
 * Retry-After longer than max_retry_after_ms, at most 600,000, is never waited out): every 30 s
 * keeps the log moving well inside it.
 */
export const heartbeatMillis = 30_000

/** A time of day, to the second, as the LOG lines say when a wait ends. */
const timeOfDay = (millis: number): string => `${new Date(millis).toISOString().slice(11, 19)}Z`

/**
 * What a wait holds the read back for, as its LOG lines say it. The wait a 429 asked for is its
 * Retry-After, or the first backoff step when it sent none: the limiter is told only how long.
 */
const waitText = (wait: RateLimit.Wait): string => {
  if (wait._tag === "Pace") return `the request pace (requests_per_minute) until ${timeOfDay(wait.until)}`
  const asked =
    wait.retryAfterMillis >= 1_000
      ? `${Math.round(wait.retryAfterMillis / 1_000)} s`
      : `${wait.retryAfterMillis} ms`
  return `the provider's rate limit until ${timeOfDay(wait.until)} (after a 429: ${asked})`
}

/**
 * One wait, said for `stream`: its RATE_LIMITED status and a LOG, then the LOG again every
 * `heartbeatMillis` until the wait ends (a bounded count, on the Clock, so TestClock drives it).
 */
const waitSaid = (stream: string, wait: RateLimit.Wait): Stream.Stream<Item> =>
  Stream.unwrap(
    Effect.map(Clock.currentTimeMillis, (now) => {
      if (wait.until <= now) return Stream.empty
      const said = (still: string): Item =>
        message(Message.log("INFO", `${stream}: ${still}waiting out ${waitText(wait)}`))
      const beats = Math.ceil((wait.until - now) / heartbeatMillis) - 1
      const heartbeats = Stream.range(1, Math.max(beats, 1)).pipe(
        Stream.take(beats),
        Stream.mapEffect(() => Effect.as(Effect.sleep(heartbeatMillis), said("still "))),
      )
      return Stream.concat(
        Stream.make(message(Message.streamRateLimited(stream, wait.until, Date.now())), said("")),
        heartbeats,
      )
    }),
  )

/**
 * The rate limit's waits while `stream` reads, said as they begin (a newer one replaces the one
 * being said), where the client's limit is in the context (Client.layerFetch puts it there).
 * The limit is the user's, so every stream reading waits: each says so for itself, inside its own
 * items, so nothing about a wait ever follows its COMPLETE or INCOMPLETE.
 */
const waitItems = (stream: string): Stream.Stream<Item> =>
  Stream.unwrap(
    Effect.map(Effect.serviceOption(RateLimit.RequestRateLimit), (limit) =>
      Option.match(limit, {
        onNone: () => Stream.empty,
        onSome: (service) =>
          Stream.flatMap(service.waits, (wait) => waitSaid(stream, wait), { switch: true }),
      }),
    ),
  )

/** A stream's STARTED, and a WARN when the catalog asked for a sync mode the stream does not support. */
const openingItems = (
  name: string,
  entry: Catalog.ConfiguredStream,
  downgraded: boolean,
): ReadonlyArray<Item> =>
  downgraded
    ? [
        status(name, "STARTED"),
        message(
          Message.log(
            "WARN",
            `${name}: the catalog asks for ${entry.sync_mode}, which this stream does not support; it is read in full (full_refresh)`,
          ),
        ),
      ]
    : [status(name, "STARTED")]

/**
 * One configured stream of the catalog, read: STARTED, its items, then its closing line and
 * status. A credited stream spends through its own share of the budget (CreditBudget.share).
 */
const streamItems = (run: Run, entry: Catalog.ConfiguredStream, turn: Turns.Turn | undefined) =>
  Stream.unwrap(
    Effect.gen(function* () {
      const { config, state, startedAt } = run.options
      const definition = definitionOf(entry.stream.name)
      // Stopped, or another stream failed, before this one began: it is not started, and says so.
      const settled = turn?.settled ?? Effect.void
      if ((yield* Ref.get(run.stopped)) || Option.isSome(yield* Ref.get(run.failure)))
        return Stream.ensuring(Stream.fromIterable(yield* notRead(run, entry, "not started")), settled)
      if (definition === undefined || !definition.isConfigured(config))
        return Stream.ensuring(Stream.fromIterable(yield* notRead(run, entry, "nothing to read")), settled)
      const { syncMode, downgraded } = Catalog.syncModeOf(entry)
      const name = definition.stream.name
      const budget = definition.credited && turn !== undefined ? budgetOf(run, name, turn) : undefined
      const stream: StreamRun = {
        run,
        name,
        entry: definition.stream,
        withoutExcluded: valueFilter(config, entry),
        figures: yield* Ref.make(noFigures),
        estimate: new Estimate(),
        spent: spentBy(run, name),
      }
      const exclude = excluding(config, entry)
      const opening = openingItems(name, entry, downgraded)
      const read = definition.read({
        config,
        syncMode,
        // The allowance's part of the state is the read's, not the stream's.
        state: Allowance.withoutPart(state.get(name)),
        startedAt,
        parentKeys: run.substreams.keys.get(name),
        suppressed: run.options.suppressed ?? Suppression.none,
      })
      // A credited stream spends through its account, and its last purchase hands the turn over.
      const spending =
        budget === undefined || turn === undefined
          ? read
          : read.pipe(
              Stream.provideService(CreditBudget.CreditBudget, budget),
              Stream.provideService(Turns.HandOver, turn.handOver),
            )
      const items = spending.pipe(
        // A chunk at a time (a page's outputs): Stream.mapEffect would emit each output's items as a
        // chunk of their own, and every stage after it would then run once per record.
        Stream.mapChunksEffect((outputs) =>
          Effect.map(
            Effect.forEach(outputs, (output) => itemsOf(stream, output)),
            (items) => Chunk.unsafeFromArray(items.flat()),
          ),
        ),
        // Excluded fields (config exclude_fields, catalog field selection) leave before the record does.
        Stream.map((item) => (item._tag === "Message" ? message(exclude(item.message)) : item)),
        // Its waits for the rate limit, said while it reads and no longer.
        Stream.merge(waitItems(name), { haltStrategy: "left" }),
      )
      const closing = closingItems(stream, syncMode)
      // Interrupted (a free stream when a credited one fails beside it): ended as failed, so the
      // read's failure says it is INCOMPLETE; a stream that ended either way is left as it ended.
      const interrupted = Effect.flatMap(Ref.get(run.ended), (ended) =>
        ended.some((summary) => summary.stream === name)
          ? Effect.void
          : endStream(stream, syncMode, "failed"),
      )
      const failing = (cause: Cause.Cause<ReadError>) =>
        Effect.zipRight(endStream(stream, syncMode, "failed"), failed(run, { stream: name, cause }))
      // A free stream's failure goes on to streamsOf; a credited one's ends the stream here, kept for
      // the read to report once the streams beside it end (creditedInTurn).
      const whole =
        turn === undefined
          ? Stream.tapErrorCause(Stream.concat(items, closing), failing)
          : Stream.catchAllCause(Stream.concat(items, closing), (cause) =>
              Stream.drain(Stream.fromEffect(Effect.zipRight(failing(cause), turn.failed))),
            )
      return Stream.concat(Stream.fromIterable(opening), whole).pipe(
        Stream.ensuring(Effect.zipRight(interrupted, settled)),
      )
    }),
  )

/** The read's summary, from the streams' summaries (in catalog order) and the budget. */
const summaryOf = (run: Run, failure: ReadSummary["failure"]) =>
  Effect.gen(function* () {
    const snapshot = yield* run.budget.snapshot
    const order = run.options.catalog.streams.map((entry) => entry.stream.name)
    const streams = [...(yield* Ref.get(run.ended))].sort(
      (a, b) => order.indexOf(a.stream) - order.indexOf(b.stream),
    )
    return {
      streams,
      pages: streams.reduce((sum, s) => sum + s.pages, 0),
      creditsSpent: snapshot.spent,
      creditsUncertain: snapshot.uncertain,
      creditBudget: run.options.config.credit_budget,
      creditLimit: snapshot.limit,
      allowance: run.options.allowance,
      stopped: yield* Ref.get(run.stopped),
      failure,
    } satisfies ReadSummary
  })

/** After the last stream: what the budget left unread, and the read's closing line. */
const closingLines = (run: Run, summary: ReadSummary): ReadonlyArray<Item> => {
  const { config } = run.options
  const left = summary.streams.filter((s) => s.recordsLeft > 0)
  const available = config.credit_budget - summary.creditsSpent
  const lines: Array<Message.Message> = []
  const { allowance } = run.options
  const cut = summary.streams.some((s) => s.incomplete && s.status === "succeeded")
  if (cut && !summary.stopped && Allowance.binds(config.credit_budget, allowance)) {
    lines.push(Message.log("WARN", Allowance.reachedLine(allowance, summary.creditsSpent)))
  } else if (left.length > 0) {
    const records = left.reduce((sum, s) => sum + s.recordsLeft, 0)
    const credits = left.reduce((sum, s) => sum + s.creditsNeeded, 0)
    const why = summary.stopped ? "stopped on request" : "credit budget reached"
    lines.push(
      Message.log(
        "WARN",
        `${why}: ${summary.creditsSpent} of ${config.credit_budget} credits spent, ${available} unspent; ${records} records were left unread (${left.map((s) => `${s.stream} ${s.recordsLeft}`).join(", ")}), needing about ${credits} credits in all. The state is saved: ${summary.stopped ? "run again" : "raise credit_budget or run again"} to continue.`,
      ),
    )
  }
  lines.push(
    Message.log(
      "INFO",
      `read ${summary.stopped ? "stopped on request" : "finished"}: ${summary.streams.map((s) => `${s.stream} ${s.records}`).join(", ")} records; ${summary.creditsSpent} of ${config.credit_budget} credits spent, ${summary.creditsUncertain} of them possibly charged without delivery`,
    ),
  )
  return lines.map(message)
}

/**
 * Why a read that did not fail must fail all the same: a stream whose destination replaces its
 * table (Catalog.replacesTable) ended unfinished (the budget spent, a stop requested). On a read
 * that succeeds, the platform marks every stream complete and the destination replaces the table
 * with this read's part, dropping the rows earlier reads paid for; on a failed one it keeps the
 * table. So the read fails (exit 1) after every STATE and INCOMPLETE, which stay for the next run.
 * Not for this project's loader (`ownDestination`), which resumes such a refresh.
 */
const unfinishedReplaced = (run: Run, summary: ReadSummary): ReadSummary["failure"] => {
  if (run.options.ownDestination === true) return undefined
  const cut = run.options.catalog.streams.filter(
    (entry) =>
      Catalog.replacesTable(entry) &&
      summary.streams.some((stream) => stream.stream === entry.stream.name && stream.incomplete),
  )
  if (cut.length === 0) return undefined
  const names = cut.map((entry) => entry.stream.name).join(" and ")
  const needed = summary.streams
    .filter((stream) => cut.some((entry) => entry.stream.name === stream.stream))
    .reduce((sum, stream) => sum + stream.creditsNeeded, 0)
  const what = cut.map((entry) => `${entry.stream.name} (${Catalog.replacementOf(entry)})`).join(" and ")
  const why = summary.stopped
    ? `stopped on request before ${what} was read to its end`
    : `the credit budget ran out before ${what} was read to its end${needed > 0 ? ` (about ${needed} credits more)` : ""}`
  const todo = summary.stopped
    ? "Run it again to finish."
    : `Raise credit_budget, or sync ${names} incremental | append_dedup, which keeps what earlier reads bought and resumes where a budget stops it.`
  return {
    failureType: summary.stopped ? "transient_error" : "config_error",
    message: `${why}: the read fails so that the destination keeps its table rather than replace it with this read's part, dropping what was paid for. The state is saved. ${todo}`,
    error: undefined,
  }
}

/** A read that ended without a failure: its closing lines, the failure unfinishedReplaced finds, its summary. */
const endingItems = (run: Run, summary: ReadSummary): ReadonlyArray<Item> => {
  const failure = unfinishedReplaced(run, summary)
  return failure === undefined
    ? [...closingLines(run, summary), { _tag: "Summary", summary }]
    : [
        ...closingLines(run, summary),
        message(Message.traceError(failure.failureType, failure.message, Date.now())),
        { _tag: "Summary", summary: { ...summary, failure } },
      ]
}

/** The first failure, as the TRACE error that ends the read (after each failed stream's INCOMPLETE). */
const failureItems = (run: Run, { stream, cause }: Failure) =>
  Effect.gen(function* () {
    const scrub = scrubber(run.options.config)
    const failure = Cause.failureOption(cause)
    const failureType = Option.match(failure, {
      onNone: () => "system_error" as const,
      onSome: failureTypeOf,
    })
    const text = Option.match(failure, {
      onNone: () => `unexpected failure: ${Cause.pretty(cause).split("\n")[0] ?? "unknown"}`,
      onSome: (error) => error.message,
    })
    const summary = yield* summaryOf(run, {
      failureType,
      message: scrub(text),
      error: Option.getOrUndefined(failure),
    })
    const failedStreams = summary.streams.filter((s) => s.status === "failed")
    const items: ReadonlyArray<Item> = [
      ...failedStreams.map((s) => status(s.stream, "INCOMPLETE")),
      message(
        Message.traceError(failureType, scrub(text), Date.now(), {
          internal: scrub(Cause.pretty(cause)).slice(0, 4_000),
          ...(stream === undefined ? {} : { stream }),
        }),
      ),
      { _tag: "Summary", summary },
    ]
    return items
  })

/**
 * The stop request closes the run's budget: every later reservation (credited or free page,
 * purchase) is refused, so each stream ends at its next request with what it has, and checkpoints it.
 */
const watchStop = (run: Run) =>
  run.options.stopWhen === undefined
    ? Effect.void
    : Effect.forkScoped(
        Effect.zipRight(run.options.stopWhen, Effect.zipRight(Ref.set(run.stopped, true), run.budget.close)),
      )

/**
 * The streams of the catalog: the credited ones in turn (creditedInTurn), the free ones beside
 * them and each other, so their round trips overlap the credited reads (the client's limits pace
 * them all, the counts asked ahead of need last). A free stream's failure is kept and reported
 * once the streams running end (interrupting a credited one would lose the pages in flight, which
 * are paid for), and the credited streams not begun are not started; a credited stream's failure
 * interrupts the free streams (they lose only free pages). Merging hands every chunk over between
 * fibers, and what waits in the merge for the reader is paid for and not yet committed: a page in
 * its queue and the next waiting to enter it, two pages more than a stream read alone (a page
 * crosses whole, as one chunk: the chaos suite's kills re-bought 400 at most, against 300 before
 * the credited streams were read in turn); a single stream is read as it is.
 */
const streamsOf = (run: Run) =>
  Effect.gen(function* () {
    // `_rejected` is not read: its records come from the other streams' pages (rejectedItems).
    const entries = run.options.catalog.streams.filter((entry) => entry.stream.name !== Streams.rejected.name)
    const isFree = (entry: Catalog.ConfiguredStream) => definitionOf(entry.stream.name)?.credited === false
    const creditedFailed = yield* Deferred.make<void>()
    const credited = yield* Turns.inTurn({
      entries: entries.filter((entry) => !isFree(entry)),
      parentOf: run.substreams.parentOf,
      failed: Effect.zipRight(run.budget.close, Deferred.done(creditedFailed, Exit.void)),
      read: (entry, turn) => streamItems(run, entry, turn),
    })
    const free = entries.filter(isFree).map((entry) =>
      streamItems(run, entry, undefined).pipe(
        Stream.catchAllCause((cause) =>
          Stream.drain(Stream.fromEffect(failed(run, { stream: undefined, cause }))),
        ),
        Stream.interruptWhenDeferred(creditedFailed),
      ),
    )
    // One merge, its queue one chunk long: what waits in it is paid for and not yet committed.
    const all = [...credited, ...free]
    return all.length === 1
      ? (all[0] ?? Stream.empty)
      : Stream.mergeAll(all, { concurrency: "unbounded", bufferSize: 1 })
  })

/** The items of a read: the catalog's streams, then the closing lines and the summary (or the failure). */
export const read = (options: ReadOptions): Read => {
  const scrub = scrubber(options.config)
  const items = Stream.unwrapScoped(
    Effect.gen(function* () {
      const run: Run = {
        options,
        budget: yield* CreditBudget.CreditBudget,
        stopped: yield* Ref.make(false),
        ended: yield* Ref.make<ReadonlyArray<StreamSummary>>([]),
        failure: yield* Ref.make(Option.none<Failure>()),
        substreams: Substreams.substreamsOf(options.catalog, options.config),
        sendsRejected: options.catalog.streams.some((entry) => entry.stream.name === Streams.rejected.name),
      }
      yield* watchStop(run)
      const ending = (kept: Option.Option<Failure>) =>
        Option.match(kept, {
          onNone: () => Effect.map(summaryOf(run, undefined), (summary) => endingItems(run, summary)),
          onSome: (failure) => failureItems(run, failure),
        })
      const afterwards = (cause: Cause.Cause<ReadError> | undefined) =>
        Stream.unwrap(
          Effect.flatMap(Ref.get(run.failure), (kept) =>
            Effect.map(
              // The first failure kept is the one reported; one outside any stream, failing now, else.
              ending(
                cause === undefined
                  ? kept
                  : Option.orElse(kept, () => Option.some({ stream: undefined, cause })),
              ),
              Stream.fromIterable,
            ),
          ),
        )
      // A file or query of companies is checked whole before any stream spends a credit (the
      // contacts' known rows are checked before that stream's first: streams/contacts/Estimates.ts).
      const companies = options.config.companies
      const preflight =
        companies === undefined || !KnownKeys.configured(companies)
          ? Stream.empty
          : Stream.drain(Stream.fromEffect(KnownKeys.check(companies)))
      return Stream.concat(preflight, yield* streamsOf(run)).pipe(
        Stream.concat(Stream.suspend(() => afterwards(undefined))),
        Stream.catchAllCause((cause) => afterwards(cause)),
      )
    }),
  ).pipe(
    Stream.map((item) =>
      item._tag === "Message" && item.message.type === "LOG"
        ? message(Message.log(item.message.log.level, scrub(item.message.log.message)))
        : item,
    ),
  )
  return { items, messages: messagesOf(items) }
}
