/**
 * The load: Airbyte messages in, committed tables out.
 *
 * Each RECORD is decoded and mapped to COPY lines at once; the latest record per key waits in its
 * stream's batch, staged and merged (Merge.ts) in the open transaction when a STATE commits it or
 * the batch closes on size (`batchSize`) or time (`batchWindow`). A STATE commits what came before
 * it, with `_state`: at once when the writer is free, else together with the STATEs that arrive
 * until it is (a group commit, `groupShare`, `groupLimit`). The data before a state and the state itself commit
 * together, and nothing commits without a state (records after the last STATE are rolled back and
 * counted as uncommitted). LOG and TRACE messages go to `onMessage`; TRACE errors also to the
 * summary.
 */
import { type Catalog, Message, Streams } from "@salesintel/airbyte"
import type * as Chunk from "effect/Chunk"
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as Either from "effect/Either"
import * as Stream from "effect/Stream"
import { Database, type DatabaseError, type DatabaseService, transaction } from "../database/Database.ts"
import { defaultSchema, ident, qualified } from "../database/Sql.ts"
import * as KnownDone from "../ledger/KnownDone.ts"
import * as Ledger from "../ledger/Ledger.ts"
import * as Rejected from "../ledger/Rejected.ts"
import * as Merge from "../merge/Merge.ts"
import * as Ddl from "../migrate/Ddl.ts"
import { stateTable } from "../schema/Bookkeeping.ts"
import type { StreamMapping } from "../schema/Mapping.ts"
import { allMappings, mappingOf } from "../schema/Tables.ts"
import { CommitGroup, type Internal, type Job } from "./CommitGroup.ts"
import { InvalidRecord, UnknownStream } from "./LoadError.ts"
import * as SavedState from "./SavedState.ts"

export interface LoadOptions {
  /** Default `salesintel`. */
  readonly schema?: string
  /**
   * Each stream's destination sync mode (from the configured catalog). A stream not named here
   * uses append_dedup (every stream has a primary key).
   */
  readonly syncModes?: Catalog.DestinationSyncModes
  /** Messages per group (and so at most records per batch). Default 5,000. */
  readonly batchSize?: number
  /** A group also closes after this long. Default 1 second. */
  readonly batchWindow?: Duration.DurationInput
  /**
   * While the writer is busy, STATEs wait to commit together. Once the records they cover reach
   * 1/`groupShare` of the records received so far, or `groupLimit`, they commit without waiting
   * (and the input waits behind them): so what is not committed stays a small share of what was
   * loaded, at least a STATE's worth and at most `groupLimit`. Defaults 50 and 500.
   */
  readonly groupShare?: number
  readonly groupLimit?: number
  /**
   * Whether the input ended on its own, asked when it ends: false when the caller cut it short
   * (a stop on a signal), and then no overwrite finishes. Default: it did.
   */
  readonly endedOnItsOwn?: Effect.Effect<boolean>
  /** The run this load belongs to (`_sync_runs.id`): stamped on the changes it finds. */
  readonly runId?: number
  /** Run Ddl.ensure and Ledger.reconcileAll first (a run's lifecycle does both itself). Default true. */
  readonly ensureSchema?: boolean
  /** LOG and TRACE messages of the input, in order. */
  readonly onMessage?: (
    message: Message.LogMessage | Message.TraceErrorMessage,
  ) => Effect.Effect<void, never, never>
  /**
   * Called in each STATE's transaction, just before its COMMIT, with the records per stream
   * received up to that state: run bookkeeping that commits with the data (Runs.progress).
   */
  readonly beforeCommit?: (committed: Committed) => Effect.Effect<void, DatabaseError, Database>
  /** Called after each STATE has committed with its data (a destination would now emit it). */
  readonly onStateCommitted?: (message: Message.StateMessage) => Effect.Effect<void, never, never>
}

/** What a STATE's transaction commits: its message, and the records per stream up to it. */
export interface Committed {
  readonly state: Message.StateMessage
  readonly records: Readonly<Record<string, number>>
  /** Rejected records (`_rejected`) up to it, per stream they were for. */
  readonly rejected: Readonly<Record<string, number>>
}

export interface StreamSummary {
  /** Records received (all committed unless counted in `uncommittedRecords`). */
  records: number
  batches: number
  statesCommitted: number
}

export interface LoadSummary {
  readonly streams: Record<string, StreamSummary>
  /**
   * Records of the `_rejected` stream received (all committed unless the input ended after them
   * without a STATE), per stream they were for: kept whole in `_rejected` (Rejected.ts).
   */
  readonly rejected: Record<string, number>
  statesCommitted: number
  batches: number
  /** Records after the last STATE, rolled back because no state followed them. */
  uncommittedRecords: number
  readonly sourceErrors: Array<Message.TraceErrorMessage>
  /** Overwrite streams whose rows from earlier syncs were deleted at the end. */
  readonly overwritten: Array<string>
  /** Of those, the rows of each stream's table the overwrite deleted (bought before, not again). */
  readonly deleted: Record<string, number>
  /**
   * Overwrite streams whose input did not end complete (no COMPLETE status, records after the
   * last STATE, a source error, or nothing at all): their older rows stay.
   */
  readonly overwritesIncomplete: Array<string>
  /**
   * Streams the input said had started (STREAM_STATUS) and never said had ended, COMPLETE or
   * INCOMPLETE: the input stopped in the middle (its source died, the pipe broke).
   */
  readonly endedEarly: Array<string>
}

interface Planned {
  readonly jobs: ReadonlyArray<Job>
  readonly failure: UnknownStream | InvalidRecord | undefined
}

export const syncModeOf = (
  syncModes: Catalog.DestinationSyncModes | undefined,
  stream: string,
): Catalog.DestinationSyncMode => syncModes?.[stream] ?? "append_dedup"

const overwriteStreams = (
  syncModes: Catalog.DestinationSyncModes | undefined,
): ReadonlyArray<StreamMapping> =>
  allMappings.filter((mapping) => syncModeOf(syncModes, mapping.stream) === "overwrite")

/** Marks the start of an overwrite (kept if an unfinished one already started: a resumed load keeps its rows). */
const beginOverwrite = (schema: string, stream: string) =>
  Effect.flatMap(Database, (db) =>
    db.query(
      `INSERT INTO ${qualified(schema, stateTable.name)} AS s (stream, overwrite_since) VALUES ($1, now())
       ON CONFLICT (stream) DO UPDATE SET overwrite_since = coalesce(s.overwrite_since, now())`,
      [stream],
    ),
  )

/** Deletes the rows an overwrite did not write (children go with their parents) and closes it. */
const finishOverwrite = (schema: string, mapping: StreamMapping) =>
  Effect.gen(function* () {
    const db = yield* Database
    const since = `(SELECT overwrite_since FROM ${qualified(schema, stateTable.name)} WHERE stream = $1)`
    // Children first (there is no cascading foreign key): those of the parents about to go. A
    // table keyed by its own columns loses the rows no record of this overwrite carried.
    for (const child of mapping.children) {
      if (child.parentKey === undefined) {
        yield* db.query(`DELETE FROM ${qualified(schema, child.table.name)} WHERE "_synced_at" < ${since}`, [
          mapping.stream,
        ])
        continue
      }
      const key = ident(child.parentKey)
      yield* db.query(
        `DELETE FROM ${qualified(schema, child.table.name)} WHERE ${key} IN (SELECT ${key} FROM ${qualified(schema, mapping.table.name)} WHERE "_synced_at" < ${since})`,
        [mapping.stream],
      )
    }
    const [gone] = yield* db.query(
      `WITH gone AS (DELETE FROM ${qualified(schema, mapping.table.name)} WHERE "_synced_at" < ${since} RETURNING 1)
       SELECT count(*)::int AS n FROM gone`,
      [mapping.stream],
    )
    // The ledger indexes the rows: what the overwrite deleted it forgets, in the same transaction.
    const forget = Ledger.forgetDeletedSql(schema, mapping.stream)
    if (forget !== undefined) yield* db.exec(forget)
    // The known identities it did not look up again go too, as its state's set would have.
    if (Streams.knownDone.stateFields[mapping.stream] !== undefined)
      yield* db.query(KnownDone.forgetOlderSql(schema, since), [mapping.stream])
    // A stream that never checkpointed has no state to keep: its row goes (see Ddl.ts, version 3).
    yield* db.query(`DELETE FROM ${qualified(schema, stateTable.name)} WHERE stream = $1 AND state IS NULL`, [
      mapping.stream,
    ])
    yield* db.query(
      `UPDATE ${qualified(schema, stateTable.name)} SET overwrite_since = NULL WHERE stream = $1`,
      [mapping.stream],
    )
    return Number(gone?.n ?? 0)
  })

/** The internal records of a job: the rejected ones, then the identities done. */
const writeInternal = (schema: string, rows: ReadonlyArray<Internal>, runId: number | undefined) =>
  Effect.zipRight(
    Rejected.write(
      schema,
      rows.flatMap((row) => (row._tag === "Rejected" ? [row.row] : [])),
      runId,
    ),
    KnownDone.write(
      schema,
      rows.flatMap((row) => (row._tag === "KnownDone" ? [row.row] : [])),
    ),
  )

/** Why a load stops on a record of its input. */
export type LoadFailure = UnknownStream | InvalidRecord

/** A summary with nothing loaded yet; the stages below add to it as the load goes. */
const emptySummary = (): LoadSummary => ({
  streams: {},
  rejected: {},
  statesCommitted: 0,
  batches: 0,
  uncommittedRecords: 0,
  sourceErrors: [],
  overwritten: [],
  deleted: {},
  overwritesIncomplete: [],
  endedEarly: [],
})

const streamSummary = (summary: LoadSummary, stream: string): StreamSummary => {
  let entry = summary.streams[stream]
  if (entry === undefined) {
    entry = { records: 0, batches: 0, statesCommitted: 0 }
    summary.streams[stream] = entry
  }
  return entry
}

/** What the plan stage knows of the input so far, which the load's end reads. */
interface Seen {
  /** Streams with records since the last STATE (to know which overwrites are incomplete). */
  readonly uncommitted: Map<string, number>
  /** Streams that reported STREAM_STATUS COMPLETE (and did not start again after it). */
  readonly reportedComplete: Set<string>
  /** Streams with a STATE: what counts as complete for an input with no statuses at all. */
  readonly withState: Set<string>
  /** Streams that reported STARTED or RUNNING and no end since. */
  readonly running: Set<string>
  statusesSeen: boolean
}

/**
 * A record of a page that did not decode (Streams.rejected): it waits with the records around it
 * and commits with the STATE that covers them (Rejected.ts), counted by the stream it was for.
 */
const addRejected = (
  summary: LoadSummary,
  group: CommitGroup,
  message: Message.RecordMessage,
  position: number,
): LoadFailure | undefined => {
  const decoded = Streams.rejected.decode(message.record.data)
  if (Either.isLeft(decoded))
    return new InvalidRecord({ stream: Streams.rejected.name, position, ...decoded.left })
  group.addInternal({ _tag: "Rejected", row: decoded.right })
  const stream = decoded.right.stream
  summary.rejected[stream] = (summary.rejected[stream] ?? 0) + 1
  return undefined
}

/**
 * Known identities done (Streams.knownDone): they wait with the records around them and commit
 * with the STATE that covers them (KnownDone.ts).
 */
const addKnownDone = (
  group: CommitGroup,
  message: Message.RecordMessage,
  position: number,
): LoadFailure | undefined => {
  const decoded = Streams.knownDone.decode(message.record.data)
  if (Either.isLeft(decoded))
    return new InvalidRecord({ stream: Streams.knownDone.name, position, ...decoded.left })
  group.addInternal({ _tag: "KnownDone", row: decoded.right })
  return undefined
}

/**
 * The plan stage: turns each group of messages into jobs, in input order. Records wait in their
 * stream's open batch; a STATE covers what came before it and commits it (CommitGroup.ts): at once
 * when the write stage is free (`writerFree`), else with the STATEs that arrive until the writer
 * frees up and takes them (`takeWaiting`), or once they cover a share of what was received
 * (`groupShare`, `groupLimit`). Batches also close on size (`batchSize`) or time (checked as input
 * arrives), into the open transaction; records after the last STATE never commit. A bad record
 * ends the plan, but the jobs before it (states included) still run first.
 */
/**
 * Where the plan stage stands in its input, handed from one chunk's plan to the next (a value:
 * each plan works on its own copy and returns the position it ends at).
 */
interface Position {
  /** Messages planned: the 1-based index of the last, which a failure names. */
  readonly position: number
  /** Records received (a commit waits for its share of them: `groupShare`). */
  readonly received: number
  /** When the open group got its first record: a batch closes on time from there. */
  readonly openedAt: number
  /** When the input was made, as far as it says: the latest emitted_at of its records and traces. */
  readonly inputTime: number | undefined
}

const inputStart: Position = { position: 0, received: 0, openedAt: 0, inputTime: undefined }

/** A chunk's working copy of the position, returned as the next value when the chunk is planned. */
type Working = { -readonly [Key in keyof Position]: Position[Key] }

const stamped = (at: Working, emittedAt: number) => {
  if (Number.isFinite(emittedAt) && (at.inputTime === undefined || emittedAt > at.inputTime))
    at.inputTime = emittedAt
}

const planner = (summary: LoadSummary, options: LoadOptions, writerFree: () => boolean) => {
  const seen: Seen = {
    uncommitted: new Map(),
    reportedComplete: new Set(),
    withState: new Set(),
    running: new Set(),
    statusesSeen: false,
  }
  const group = new CommitGroup()
  const batchSize = options.batchSize ?? 5_000
  const groupLimit = options.groupLimit ?? 500
  const groupShare = options.groupShare ?? 50
  const windowMillis = Duration.toMillis(options.batchWindow ?? Duration.seconds(1))
  const onRecord = (
    message: Message.RecordMessage,
    jobs: Array<Job>,
    at: Working,
  ): LoadFailure | undefined => {
    const { stream } = message.record
    if (stream === Streams.rejected.name) return addRejected(summary, group, message, at.position)
    if (stream === Streams.knownDone.name) return addKnownDone(group, message, at.position)
    const mapping = mappingOf(stream)
    if (mapping === undefined)
      return new UnknownStream({ stream, position: at.position, known: Streams.names })
    stamped(at, message.record.emitted_at)
    const mapped = mapping.map(message)
    if (Either.isLeft(mapped)) return new InvalidRecord({ stream, position: at.position, ...mapped.left })
    if (group.records === 0) at.openedAt = Date.now()
    group.add(mapping, mapped.right)
    at.received++
    streamSummary(summary, stream).records++
    seen.uncommitted.set(stream, (seen.uncommitted.get(stream) ?? 0) + 1)
    if (group.records >= batchSize) group.closeAll(jobs)
    return undefined
  }
  const onState = (message: Message.StateMessage, jobs: Array<Job>, at: Working): LoadFailure | undefined => {
    const stream = message.state.stream.stream_descriptor.name
    // A state for a stream we have no tables for could never be read back usefully.
    if (!Streams.isStreamName(stream))
      return new UnknownStream({ stream, position: at.position, known: Streams.names, of: "state" })
    const records: Record<string, number> = {}
    for (const [name, entry] of Object.entries(summary.streams)) records[name] = entry.records
    group.cover(message, records, { ...summary.rejected }, at.inputTime)
    seen.uncommitted.clear()
    seen.withState.add(stream)
    if (writerFree() || group.coveredRecords >= Math.min(groupLimit, at.received / groupShare))
      group.commitWaiting(jobs)
    return undefined
  }
  const onStatus = (status: Message.StreamStatusMessage["trace"]["stream_status"]) => {
    seen.statusesSeen = true
    const stream = status.stream_descriptor.name
    if (status.status === "COMPLETE") seen.reportedComplete.add(stream)
    else seen.reportedComplete.delete(stream)
    if (status.status === "STARTED" || status.status === "RUNNING") seen.running.add(stream)
    else seen.running.delete(stream)
  }
  const plan = (from: Position, input: Chunk.Chunk<Message.Message>): [Position, Planned] => {
    const at: Working = { ...from }
    const jobs: Array<Job> = []
    for (const message of input) {
      at.position++
      const failure =
        message.type === "RECORD"
          ? onRecord(message, jobs, at)
          : message.type === "STATE"
            ? onState(message, jobs, at)
            : undefined
      if (failure !== undefined) {
        group.commitWaiting(jobs)
        return [at, { jobs, failure }]
      }
      if (message.type === "TRACE") stamped(at, message.trace.emitted_at)
      if (message.type === "TRACE" && message.trace.type === "STREAM_STATUS")
        onStatus(message.trace.stream_status)
      else if (message.type === "LOG" || Message.isTraceError(message)) jobs.push({ _tag: "Notify", message })
    }
    if (group.records > 0 && Date.now() - at.openedAt >= windowMillis) group.closeAll(jobs)
    return [at, { jobs, failure: undefined }]
  }
  /** The waiting states' commit (the records after them stay): for a writer that freed up, or at the end. */
  const takeWaiting = (): Array<Job> => {
    const jobs: Array<Job> = []
    group.commitWaiting(jobs)
    return jobs
  }
  return { plan, takeWaiting, seen }
}

/**
 * The write stage: runs the jobs in order on the one connection. A batch is merged in the open
 * transaction (opened by the first job that needs one); a commit writes each of its streams'
 * latest STATE into `_state`, runs `beforeCommit` and COMMITs.
 */
const writer = (summary: LoadSummary, options: LoadOptions, schema: string, db: DatabaseService) => {
  let inTransaction = false
  const begin = Effect.suspend(() => {
    if (inTransaction) return Effect.void
    inTransaction = true
    return db.exec("BEGIN")
  })
  const mergeBatch = (job: Extract<Job, { _tag: "Batch" }>) =>
    Effect.gen(function* () {
      yield* begin
      const mode = syncModeOf(options.syncModes, job.mapping.stream)
      yield* Merge.mergeBatch(schema, job.mapping, job.batch, mode, options.runId)
      summary.batches++
      streamSummary(summary, job.mapping.stream).batches++
    })
  const commit = (job: Extract<Job, { _tag: "Commit" }>) =>
    Effect.gen(function* () {
      yield* begin
      // A stream's later STATE replaces its earlier ones: the last of each is the one to keep,
      // unless the state held came from a newer input (SavedState.write).
      const latest = new Map(job.states.map((state) => [state.state.stream.stream_descriptor.name, state]))
      for (const [stream, state] of latest)
        yield* SavedState.write(schema, stream, state.state.stream.stream_state, job.asOf)
      const last = job.states[job.states.length - 1]
      if (options.beforeCommit && last !== undefined)
        yield* options.beforeCommit({ state: last, records: job.records, rejected: job.rejected })
      yield* db.exec("COMMIT")
      inTransaction = false
      for (const state of job.states) {
        summary.statesCommitted++
        streamSummary(summary, state.state.stream.stream_descriptor.name).statesCommitted++
        if (options.onStateCommitted) yield* options.onStateCommitted(state)
      }
    })
  const write = (job: Job): Effect.Effect<void, DatabaseError, Database> => {
    switch (job._tag) {
      case "Batch":
        return mergeBatch(job)
      case "Commit":
        return commit(job)
      case "Internal":
        return Effect.zipRight(begin, writeInternal(schema, job.rows, options.runId))
      case "Notify":
        if (job.message.type === "TRACE") summary.sourceErrors.push(job.message)
        return options.onMessage ? options.onMessage(job.message) : Effect.void
    }
  }
  // Records no STATE followed: never committed without their state.
  const rollback = Effect.suspend(() => {
    if (!inTransaction) return Effect.void
    inTransaction = false
    return db.exec("ROLLBACK")
  })
  return { write, rollback }
}

/**
 * The overwrites that end: only when a stream's whole input arrived and committed: it reported
 * COMPLETE (or, with no statuses in the input, sent a STATE), nothing of it came after its last
 * STATE, and the source reported no error. An input that ends early empties nothing.
 */
const finishOverwrites = (
  summary: LoadSummary,
  seen: Seen,
  overwrites: ReadonlyArray<StreamMapping>,
  schema: string,
  endedOnItsOwn: boolean,
) =>
  Effect.gen(function* () {
    const complete = overwrites.filter(
      (mapping) =>
        endedOnItsOwn &&
        summary.sourceErrors.length === 0 &&
        !seen.uncommitted.has(mapping.stream) &&
        (seen.statusesSeen ? seen.reportedComplete.has(mapping.stream) : seen.withState.has(mapping.stream)),
    )
    summary.overwritesIncomplete.push(
      ...overwrites.filter((mapping) => !complete.includes(mapping)).map((mapping) => mapping.stream),
    )
    if (complete.length === 0) return
    const deleted = yield* transaction(
      Effect.forEach(complete, (mapping) => finishOverwrite(schema, mapping)),
    )
    summary.overwritten.push(...complete.map((mapping) => mapping.stream))
    complete.forEach((mapping, index) => {
      summary.deleted[mapping.stream] = deleted[index] ?? 0
    })
  })

/**
 * Loads `messages` into `options.schema`. Fails on the first record of an unknown stream or one
 * that does not decode (with its position and the bad value's path), or on a database error;
 * what committed before stays committed, with its state.
 */
export const load = <E, R>(
  messages: Stream.Stream<Message.Message, E, R>,
  options: LoadOptions = {},
): Effect.Effect<LoadSummary, E | DatabaseError | Ddl.SchemaTooNew | LoadFailure, R | Database> =>
  Effect.gen(function* () {
    const db = yield* Database
    const schema = options.schema ?? defaultSchema
    // On its own (not inside a run that did both already): the schema made current, and the ledger
    // made the tables' index again where it is not (Ledger.reconcile).
    if (options.ensureSchema !== false) {
      yield* Ddl.ensure(schema)
      yield* Ledger.reconcileAll(schema)
    }
    for (const mapping of allMappings) yield* Merge.prepare(mapping)
    const overwrites = overwriteStreams(options.syncModes)
    for (const mapping of overwrites) yield* beginOverwrite(schema, mapping.stream)
    const summary = emptySummary()
    const { plan, takeWaiting, seen } = planner(summary, options, () => unwritten === 0 && !taking)
    const { write, rollback } = writer(summary, options, schema, db)
    // Plans handed to the writer and not yet written; whether it is writing a commit it took.
    let unwritten = 0
    let taking = false
    const writeAll = (jobs: ReadonlyArray<Job>) => Effect.forEach(jobs, write, { discard: true })
    // A writer with nothing left to write takes the states that waited for it, until none waits
    // (synchronously with its check: no STATE can slip between the two).
    const takeWhileWaiting: Effect.Effect<void, DatabaseError, Database> = Effect.suspend(() => {
      const jobs = unwritten === 0 ? takeWaiting() : []
      taking = jobs.length > 0
      return taking ? Effect.zipRight(writeAll(jobs), takeWhileWaiting) : Effect.void
    })
    // What waits commits when the input ends, and also when it fails (what it sent is kept).
    const ended = Stream.suspend(() => Stream.make<[Planned]>({ jobs: takeWaiting(), failure: undefined }))
    // Two stages with a small buffer between them, so that mapping the next group (CPU) overlaps
    // writing the previous one (database).
    yield* messages.pipe(
      // Per chunk as it arrives (a block of lines, or one message from an in-process source).
      Stream.chunks,
      Stream.mapAccum(inputStart, plan),
      Stream.concat(ended),
      Stream.catchAll((error) => Stream.concat(ended, Stream.fail(error))),
      // Only plans with work cross the buffer, so the plan stage runs a whole batch ahead of the
      // write stage (not just one input chunk) while the database works.
      Stream.filter(({ jobs, failure }) => jobs.length > 0 || failure !== undefined),
      Stream.tap(() => Effect.sync(() => unwritten++)),
      Stream.buffer({ capacity: 1 }),
      Stream.runForEach(({ jobs, failure }) =>
        Effect.zipRight(
          writeAll(jobs),
          Effect.suspend((): Effect.Effect<void, DatabaseError | LoadFailure, Database> => {
            unwritten--
            return failure === undefined ? takeWhileWaiting : Effect.fail(failure)
          }),
        ),
      ),
      Effect.onExit((exit) => (exit._tag === "Failure" ? Effect.ignore(rollback) : Effect.void)),
    )
    yield* rollback
    for (const count of seen.uncommitted.values()) summary.uncommittedRecords += count
    summary.endedEarly.push(...seen.running)
    const endedOnItsOwn = options.endedOnItsOwn === undefined ? true : yield* options.endedOnItsOwn
    yield* finishOverwrites(summary, seen, overwrites, schema, endedOnItsOwn)
    return summary
  })
