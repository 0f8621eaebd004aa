/**
 * What the loader's plan stage holds until it hands it to the write stage: the records no STATE
 * covers yet (`open`), and those the waiting STATEs cover (`covered`), one batch per stream each.
 * STATEs that arrive while the writer is busy wait here and then commit together, with one merge
 * per stream for every record they cover: a group commit. A commit per page costs a merge per
 * page (measured by `npm run bench -- scale`, a first sync of 259,424 contacts with a STATE a page:
 * 286 s with a commit per STATE, 165 s grouped), so a load that keeps up commits each page as it
 * lands, and one that falls behind commits in groups, the larger the further behind (up to the
 * loader's `groupShare` and `groupLimit`).
 */
import type { Message, Streams } from "@salesintel/airbyte"
import * as Batch from "../merge/Batch.ts"
import type { Mapped, StreamMapping } from "../schema/Mapping.ts"

/** What the plan stage hands the write stage, in input order. */
export type Job =
  | { readonly _tag: "Batch"; readonly mapping: StreamMapping; readonly batch: Batch.Closed }
  | {
      /** The states that waited, committed in one transaction with everything they cover. */
      readonly _tag: "Commit"
      readonly states: ReadonlyArray<Message.StateMessage>
      /** Records per stream received up to the last of them. */
      readonly records: Readonly<Record<string, number>>
      /** Rejected records per stream they were for (Rejected.ts), received up to the last of them. */
      readonly rejected: Readonly<Record<string, number>>
      /** When the input was made, as of the last of them (State.write's `asOf`). */
      readonly asOf: number | undefined
    }
  /** Records of the internal streams, written in the open transaction like a batch. */
  | { readonly _tag: "Internal"; readonly rows: ReadonlyArray<Internal> }
  | { readonly _tag: "Notify"; readonly message: Message.LogMessage | Message.TraceErrorMessage }

/**
 * A record of an internal stream: a rejected record (Rejected.ts), or known identities done
 * (KnownDone.ts). Neither has a typed table; each commits with the STATE that covers it.
 */
export type Internal =
  | { readonly _tag: "Rejected"; readonly row: Streams.RejectedRecord }
  | { readonly _tag: "KnownDone"; readonly row: Streams.KnownDoneRecord }

export class CommitGroup {
  private readonly open = new Map<StreamMapping, Batch.Builder>()
  private readonly covered = new Map<StreamMapping, Batch.Builder>()
  private waiting: Array<Message.StateMessage> = []
  private waitingRecords: Readonly<Record<string, number>> = {}
  private waitingRejected: Readonly<Record<string, number>> = {}
  /** Internal records no STATE covers yet, and those the waiting STATEs cover. */
  private openInternal: Array<Internal> = []
  private coveredInternal: Array<Internal> = []
  private waitingAsOf: number | undefined = undefined
  /** Records no STATE covers yet. */
  openRecords = 0
  /** Records the waiting STATEs cover. */
  coveredRecords = 0

  get waitingStates(): number {
    return this.waiting.length
  }

  get records(): number {
    return this.openRecords + this.coveredRecords
  }

  add(mapping: StreamMapping, record: Mapped): void {
    let builder = this.open.get(mapping)
    if (builder === undefined) {
      builder = new Batch.Builder(mapping.children.length)
      this.open.set(mapping, builder)
    }
    // The latest record per key wins within the batch (resolved when it closes).
    builder.add(record)
    this.openRecords++
  }

  /** An internal record: it waits with the records, and commits with the STATE that covers it. */
  addInternal(row: Internal): void {
    this.openInternal.push(row)
  }

  /**
   * A STATE: it covers every record so far, and waits to commit with them; `asOf` is when its
   * input was made (the latest emitted_at before it).
   */
  cover(
    state: Message.StateMessage,
    records: Readonly<Record<string, number>>,
    rejected: Readonly<Record<string, number>>,
    asOf?: number,
  ): void {
    this.coveredInternal.push(...this.openInternal)
    this.openInternal = []
    // Moved when nothing of its stream waits yet; else copied over, and the open one kept for the
    // next page (a page a STATE would otherwise allocate a fresh builder's 1.5 MB).
    for (const [mapping, builder] of this.open) {
      const earlier = this.covered.get(mapping)
      if (earlier === undefined) {
        this.covered.set(mapping, builder)
        this.open.delete(mapping)
      } else {
        earlier.absorb(builder)
        builder.reset()
      }
    }
    this.coveredRecords += this.openRecords
    this.openRecords = 0
    this.waiting.push(state)
    this.waitingRecords = records
    this.waitingRejected = rejected
    this.waitingAsOf = asOf
  }

  /** The waiting STATEs' commit, with the merges of what they cover; nothing when none waits. */
  commitWaiting(jobs: Array<Job>): void {
    if (this.waiting.length === 0) return
    for (const [mapping, builder] of this.covered)
      if (builder.size > 0) jobs.push({ _tag: "Batch", mapping, batch: builder.close() })
    if (this.coveredInternal.length > 0) jobs.push({ _tag: "Internal", rows: this.coveredInternal })
    jobs.push({
      _tag: "Commit",
      states: this.waiting,
      records: this.waitingRecords,
      rejected: this.waitingRejected,
      asOf: this.waitingAsOf,
    })
    this.coveredInternal = []
    this.covered.clear()
    this.coveredRecords = 0
    this.waiting = []
  }

  /**
   * Everything to the writer: the waiting STATEs' commit, then the records after them merged into
   * the next open transaction, which commits only with a later STATE.
   */
  closeAll(jobs: Array<Job>): void {
    this.commitWaiting(jobs)
    for (const [mapping, builder] of this.open)
      if (builder.size > 0) jobs.push({ _tag: "Batch", mapping, batch: builder.close() })
    if (this.openInternal.length > 0) jobs.push({ _tag: "Internal", rows: this.openInternal })
    this.openInternal = []
    this.open.clear()
    this.openRecords = 0
  }
}
