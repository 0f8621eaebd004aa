/**
 * The run's figures as `salesintel sync` follows its read (Sync.ts): the read's items folded into
 * one value (`step`), and the loader's commits folded in as they happen (`committing`, in a STATE's
 * transaction just before its COMMIT; `committed`, after it). Nothing is changed in place: each
 * function returns a new value (or the one it was given, when nothing changed), which the sync
 * holds in one Ref; the progress line (`countsOf`) and the run's end are read from it.
 *
 * The loader commits a STATE after the read has gone further (pages read ahead, a group of STATEs
 * waiting for the writer): so each STATE seen waits in `awaiting` with the credits each stream had
 * spent when it was written, until its commit takes them. Credits spent are the budget's: what the
 * run spent is the budget's snapshot, what a stream spent at a checkpoint is the read's Spent item
 * just before its STATE (its account in the budget), which the run row records. The progress line's
 * "credits committed" alone is counted from the records committed (`creditsOf`): a stream's account
 * at a STATE also holds what it bought ahead of it, which the line shows apart, in flight.
 */
import type { Message } from "@salesintel/airbyte"
import type { CreditBudget } from "@salesintel/core"
import { Definitions, type Read } from "@salesintel/source"
import type { Counts } from "./Progress.ts"

/** A STATE the read emitted that has not committed yet, with each stream's credits as it was written. */
export interface Awaiting {
  readonly state: Message.StateMessage
  /** Each stream's credits at its last checkpoint up to this STATE (the read's Spent items). */
  readonly credits: ReadonlyMap<string, number>
}

/** A stream's figures as a commit records them in the run row (Runs.StreamFigures). */
export interface StreamFigures {
  readonly records: number
  readonly credits: number
  readonly rejected?: number
}

/** What a commit made durable, as the progress line shows it. */
export interface Committed {
  /** Records committed, per stream (the loader's count up to the STATE). */
  readonly recordsByStream: ReadonlyMap<string, number>
  /** The credits of the records committed: one a record of a credited stream, rejected ones included. */
  readonly credits: number
}

export interface RunFigures {
  /** When the run began following its read (epoch ms): the progress line's elapsed time. */
  readonly startedAt: number
  /** What the run may spend: the progress line's budget. */
  readonly limit: number
  /** Pages of records read. */
  readonly pages: number
  /** STATEs committed with their data. */
  readonly checkpoints: number
  /** The budget's spent and uncertain, as of the last item. */
  readonly creditsSpent: number
  readonly creditsUncertain: number
  /** The streams that read records, in the order they first did. */
  readonly streamsRead: ReadonlySet<string>
  /** Each stream's latest row estimate (ESTIMATE traces). */
  readonly estimatedByStream: ReadonlyMap<string, number>
  /** Each stream's credits at its latest checkpoint (the read's Spent items). */
  readonly spentByStream: ReadonlyMap<string, number>
  /** The STATEs seen and not committed yet, in order. */
  readonly awaiting: ReadonlyArray<Awaiting>
  /** What the run row says per stream: the figures of the last STATE's transaction. */
  readonly recorded: Readonly<Record<string, StreamFigures>>
  /** The commit in its transaction (its COMMIT not done yet): committed once its STATE is. */
  readonly committing:
    | {
        readonly state: Message.StateMessage
        readonly recordsByStream: ReadonlyMap<string, number>
        readonly recorded: Readonly<Record<string, StreamFigures>>
      }
    | undefined
  readonly committed: Committed
  /** The read's summary: its last item (none when the load failed first). */
  readonly summary: Read.ReadSummary | undefined
}

export const initial = (limit: number, startedAt: number): RunFigures => ({
  startedAt,
  limit,
  pages: 0,
  checkpoints: 0,
  creditsSpent: 0,
  creditsUncertain: 0,
  streamsRead: new Set(),
  estimatedByStream: new Map(),
  spentByStream: new Map(),
  awaiting: [],
  recorded: {},
  committing: undefined,
  committed: { recordsByStream: new Map(), credits: 0 },
  summary: undefined,
})

/** A protocol message of the read: a stream's records, a STATE to wait for its commit, an estimate. */
const message = (figures: RunFigures, item: Message.Message): RunFigures => {
  if (item.type === "RECORD") {
    const stream = item.record.stream
    return figures.streamsRead.has(stream)
      ? figures
      : { ...figures, streamsRead: new Set(figures.streamsRead).add(stream) }
  }
  if (item.type === "STATE")
    return { ...figures, awaiting: [...figures.awaiting, { state: item, credits: figures.spentByStream }] }
  if (item.type === "TRACE" && item.trace.type === "ESTIMATE") {
    const { name, row_estimate } = item.trace.estimate
    if (row_estimate !== undefined)
      return { ...figures, estimatedByStream: new Map(figures.estimatedByStream).set(name, row_estimate) }
  }
  return figures
}

/** The read's item folded in, with the budget as it stood when the item passed. */
export const step = (
  figures: RunFigures,
  item: Read.Item,
  budget: Pick<CreditBudget.Snapshot, "spent" | "uncertain">,
): RunFigures => {
  const spent =
    figures.creditsSpent === budget.spent && figures.creditsUncertain === budget.uncertain
      ? figures
      : { ...figures, creditsSpent: budget.spent, creditsUncertain: budget.uncertain }
  switch (item._tag) {
    case "Summary":
      return { ...spent, summary: item.summary }
    case "PageRead":
      return { ...spent, pages: spent.pages + 1 }
    case "Spent":
      return { ...spent, spentByStream: new Map(spent.spentByStream).set(item.stream, item.credits) }
    case "Tally":
      return spent
    case "Message":
      return message(spent, item.message)
  }
}

/**
 * A STATE's transaction, just before its COMMIT: what it records in the run row (`counted`, the
 * records and rejected per stream up to it, each with the credits the stream had spent at that
 * STATE), and the figures with the STATEs up to it out of `awaiting` and it waiting for its COMMIT
 * with its `records` per stream. A pair: the run row's figures, and the next value.
 */
export const committing = (
  figures: RunFigures,
  state: Message.StateMessage,
  counted: Readonly<Record<string, { readonly records: number; readonly rejected?: number }>>,
  records: Readonly<Record<string, number>>,
): readonly [Readonly<Record<string, StreamFigures>>, RunFigures] => {
  const at = figures.awaiting.findIndex((awaiting) => awaiting.state === state)
  const credits = figures.awaiting[at]?.credits
  const recorded = Object.fromEntries(
    Object.entries(counted).map(([stream, count]) => [
      stream,
      { ...count, credits: credits?.get(stream) ?? 0 },
    ]),
  )
  return [
    recorded,
    {
      ...figures,
      awaiting: figures.awaiting.slice(at + 1),
      recorded,
      committing: { state, recordsByStream: new Map(Object.entries(records)), recorded },
    },
  ]
}

/**
 * The credits of the records a commit covers, as the progress line shows them committed: one a
 * record of a credited stream, rejected ones included (they were paid for); the taxonomy is free.
 * Not the stream's credits at the STATE (`recorded`'s): those count pages bought ahead of the
 * records before it (a purchase's whole batch, pages in flight), which the line shows in flight.
 */
const creditsOf = (recorded: Readonly<Record<string, StreamFigures>>): number =>
  Object.entries(recorded).reduce(
    (sum, [stream, figures]) =>
      sum +
      (Definitions.definitionOf(stream)?.credited === true ? figures.records + (figures.rejected ?? 0) : 0),
    0,
  )

/** A STATE committed: a checkpoint more, and the last of its group commits what its transaction recorded. */
export const committed = (figures: RunFigures, state: Message.StateMessage): RunFigures => {
  const commit = figures.committing
  if (commit?.state !== state) return { ...figures, checkpoints: figures.checkpoints + 1 }
  return {
    ...figures,
    checkpoints: figures.checkpoints + 1,
    committing: undefined,
    committed: { recordsByStream: commit.recordsByStream, credits: creditsOf(commit.recorded) },
  }
}

/** The progress line's counts, `now`. */
export const countsOf = (figures: RunFigures, now: number): Counts => ({
  records: [...figures.committed.recordsByStream.values()].reduce((sum, n) => sum + n, 0),
  recordsByStream: figures.committed.recordsByStream,
  estimatedByStream: figures.estimatedByStream,
  pages: figures.pages,
  checkpoints: figures.checkpoints,
  creditsSpent: figures.creditsSpent,
  creditsUncertain: figures.creditsUncertain,
  creditsCommitted: figures.committed.credits,
  creditBudget: figures.limit,
  elapsedMillis: now - figures.startedAt,
})

/** The streams that read records, then those that only spent credits (their credits are the budget's). */
export const seen = (figures: RunFigures): ReadonlyArray<{ readonly stream: string }> =>
  [...new Set([...figures.streamsRead, ...figures.spentByStream.keys()])].map((stream) => ({ stream }))
