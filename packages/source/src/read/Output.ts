/**
 * What a stream's read yields, before the engine (Read.ts) turns it into protocol messages:
 * records, checkpoints of the stream's state (each after the records it covers), log lines,
 * shortfalls (work the credit budget did not cover, with what it would cost) and estimates of the
 * records to come.
 */
import { type Message, Streams } from "@salesintel/airbyte"
import type { Page } from "@salesintel/core"

/** A record: the JSON emitted (the provider's, plus the added fields) and its decoded value. */
export interface RecordOutput<A> {
  readonly _tag: "Record"
  readonly data: Message.JsonObject
  readonly decoded: Streams.Decoded<A>
}

/**
 * A record of a page that did not decode (Page.ts): emitted as a record of the `_rejected` stream
 * (Streams.rejected), so what was paid for reaches the destination whole with its reason.
 */
export interface RejectedOutput {
  readonly _tag: "Rejected"
  readonly rejected: Page.Rejected
}

/**
 * Known identities of the stream looked up and found held, where they are kept in the
 * destination's `_known_done` (Streams.knownDone, under `salesintel sync` only): emitted as a
 * record of that stream before the checkpoint that counts them done.
 */
export interface KnownDoneOutput {
  readonly _tag: "KnownDone"
  readonly keys: ReadonlyArray<string>
}

export interface Checkpoint {
  readonly _tag: "Checkpoint"
  readonly state: Message.JsonObject
}

export interface Log {
  readonly _tag: "Log"
  readonly level: Message.LogLevel
  readonly message: string
}

export interface Shortfall {
  readonly _tag: "Shortfall"
  /** Records left unread, when known. */
  readonly records: number | undefined
  /** Credits those records would cost (one per record). */
  readonly credits: number | undefined
  readonly detail: string
  /** Why they were not bought, when it was not the budget (nor a stop request, nor a failure). */
  readonly because?: string | undefined
}

/** A page of records was read (counted for progress; not a protocol message). */
export interface PageRead {
  readonly _tag: "PageRead"
}

/**
 * The records expected from pieces of a stream's work (a search, the emails), by key: a later
 * estimate of a key revises it (a search's estimate becomes what it read, once it ends). The
 * engine sums the latest of each key into the stream's ESTIMATE trace.
 */
export interface Estimate {
  readonly _tag: "Estimate"
  readonly records: ReadonlyArray<readonly [key: string, records: number]>
}

/**
 * What a piece of the stream's work did, as counts to add up (requests asked, records bought, how
 * the keys listed stood against the bought set): not a protocol message. A read's figures are the
 * sum of its tallies by work, and the cost plan is exactly that, of a read run dry (CostPlan.ts).
 */
export interface Tally {
  readonly _tag: "Tally"
  /** The piece of work: `search <name>`, `emails`, `companies`, `taxonomy`. */
  readonly work: string
  readonly counts: Readonly<Partial<Record<Count, number>>>
}

export type Count =
  /** Free requests asked (counts, listings, lookups, taxonomy pages). */
  | "freeRequests"
  /** Credited requests asked (pages of a credited search, purchase batches). */
  | "creditedRequests"
  /** Records bought: one credit each. */
  | "bought"
  /** Keys listed (a search's free listing, the emails' lookups). */
  | "listed"
  /** Keys to buy that were never bought. */
  | "new"
  /** Keys to buy that were bought before and are due again. */
  | "stale"
  /**
   * Company keys to buy not known to match a company: never looked up, or matched none when last
   * looked up. One that matches none costs nothing, so their credits are an upper bound.
   */
  | "unconfirmed"
  /** Keys listed that are bought and not due. */
  | "held"
  /** Keys listed that an earlier piece of this read bought or queued. */
  | "earlier"
  /** A search's matches, the partitions that reach them, the matches none reaches. */
  | "matches"
  | "partitions"
  | "unreachable"
  /** Emails configured and looked up; company keys configured. */
  | "configured"
  | "lookedUp"
  /**
   * A full refresh read to its end: the keys held before it that it did not buy again, whose rows
   * an overwrite deletes (what buying them back would cost, one credit each).
   */
  | "notReadAgain"
  /** A bought set as a read begins: the keys it holds, and those of them due again. */
  | "inState"
  | "staleInState"
  /** Queries a free stream asks (the taxonomy's product terms). */
  | "queries"
  /**
   * A quick plan's estimate of a search (streams/contacts/LastRead.ts): matches taken as held and
   * fresh, and as stale, from its last read; how many of the stale may not be; how many of the rest
   * taken as an earlier search's (its last overlap); searches with no
   * last read (every match counted).
   */
  | "estimatedHeld"
  | "estimatedStale"
  | "staleOver"
  | "estimatedEarlier"
  | "unknownLastRead"
  /** Keys met that were forgotten (`salesintel forget`): never bought (bought/Suppression.ts). */
  | "suppressed"

export type Output<A> =
  | RecordOutput<A>
  | RejectedOutput
  | KnownDoneOutput
  | Checkpoint
  | Log
  | Shortfall
  | PageRead
  | Estimate
  | Tally

/**
 * A record of `stream` as the core decoded it: its raw JSON in the catalog's types (loosely sent
 * values as decoded, Conform.ts) with the connector's `added` fields (Streams.addedFields), and
 * the decoded value, handed on so that nothing decodes it again.
 */
export const record = <A>(
  stream: Streams.StreamEntry<A>,
  item: Page.Item<A>,
  added?: Message.JsonObject,
): RecordOutput<A> => {
  const conformed = stream.conform(item.raw, item.record)
  return {
    _tag: "Record",
    data: added === undefined ? conformed : { ...conformed, ...added },
    decoded: { stream, value: item.record },
  }
}
export const rejected = (value: Page.Rejected): RejectedOutput => ({ _tag: "Rejected", rejected: value })

/**
 * A page's outputs: its rejected records, then its records, a record sent more than once on the
 * page (the provider charges each copy) once, its last copy (as the loader would keep it).
 */
export const pageRecords = <A>(
  page: { readonly items: ReadonlyArray<Page.Item<A>>; readonly rejected: ReadonlyArray<Page.Rejected> },
  record: (item: Page.Item<A>) => RecordOutput<A>,
): ReadonlyArray<RecordOutput<A> | RejectedOutput> => {
  const records = page.items.map(record)
  const lastAt = new Map<string, number>()
  records.forEach((output, at) => {
    const key = Streams.keyOfRaw(output.decoded.stream, output.data)
    if (key !== undefined) lastAt.set(key, at)
  })
  const once = records.filter((output, at) => {
    const key = Streams.keyOfRaw(output.decoded.stream, output.data)
    return key === undefined || lastAt.get(key) === at
  })
  return [...page.rejected.map(rejected), ...once]
}

export const checkpoint = (state: Message.JsonObject): Checkpoint => ({ _tag: "Checkpoint", state })
export const pageRead: PageRead = { _tag: "PageRead" }
export const estimate = (records: number, key = ""): Estimate => ({
  _tag: "Estimate",
  records: [[key, records]],
})
/** Several keys' estimates at once: one ESTIMATE trace. */
export const estimates = (records: ReadonlyArray<readonly [key: string, records: number]>): Estimate => ({
  _tag: "Estimate",
  records,
})
export const tally = (work: string, counts: Tally["counts"]): Tally => ({ _tag: "Tally", work, counts })
export const log = (level: Message.LogLevel, message: string): Log => ({ _tag: "Log", level, message })
export const shortfall = (
  records: number | undefined,
  credits: number | undefined,
  detail: string,
  because?: string,
): Shortfall => ({
  _tag: "Shortfall",
  records,
  credits,
  detail,
  ...(because === undefined ? {} : { because }),
})

export const knownDone = <A = never>(keys: ReadonlyArray<string>): Output<A> => ({ _tag: "KnownDone", keys })
