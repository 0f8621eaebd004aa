/**
 * What a stream's read yields, before the engine (Read.ts) turns it into protocol messages:
 * records, checkpoints of the stream's state (each after the records it covers), log lines,
 * shortfalls (work the credit budget did not cover, with what it would cost) and estimates of the
 * records to come.
 */
import type { Message, Streams } from "@salesintel/airbyte"
import type { Page } from "@salesintel/core"

/** A record: the JSON emitted (the provider's, plus the added fields) and its decoded value. */
export interface RecordOutput<A> {
  readonly _tag: "Record"
  readonly data: Message.JsonObject
  readonly decoded: Streams.Decoded<A>
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
}

/** A page of records was read (counted for progress; not a protocol message). */
export interface PageRead {
  readonly _tag: "PageRead"
}

/**
 * More records are expected from work just planned (a search's partitions sized, the ids to buy
 * diffed): `records` on top of what earlier estimates of the stream said. The engine sums them
 * into the stream's ESTIMATE trace.
 */
export interface Estimate {
  readonly _tag: "Estimate"
  readonly records: number
}

export type Output<A> = RecordOutput<A> | Checkpoint | Log | Shortfall | PageRead | Estimate

/**
 * A record of `stream` as the core decoded it: its raw JSON with the connector's `added` fields
 * (Streams.addedFields), and the decoded value, handed on so that nothing decodes it again.
 */
export const record = <A>(
  stream: Streams.StreamEntry<A>,
  item: Page.Item<A>,
  added?: Message.JsonObject,
): RecordOutput<A> => ({
  _tag: "Record",
  data: added === undefined ? item.raw : { ...item.raw, ...added },
  decoded: { stream, value: item.record },
})
export const checkpoint = (state: Message.JsonObject): Checkpoint => ({ _tag: "Checkpoint", state })
export const pageRead: PageRead = { _tag: "PageRead" }
export const estimate = (records: number): Estimate => ({ _tag: "Estimate", records })
export const log = (level: Message.LogLevel, message: string): Log => ({ _tag: "Log", level, message })
export const shortfall = (
  records: number | undefined,
  credits: number | undefined,
  detail: string,
): Shortfall => ({
  _tag: "Shortfall",
  records,
  credits,
  detail,
})
