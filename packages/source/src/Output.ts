/**
 * What a stream's read yields, before the engine (Read.ts) turns it into protocol messages:
 * records, checkpoints of the stream's state (each after the records it covers), log lines, and
 * shortfalls (work the credit budget did not cover, with what it would cost).
 */
import type { LogLevel } from "./Protocol.ts"

export interface RecordOutput {
  readonly _tag: "Record"
  readonly data: Readonly<Record<string, unknown>>
}

export interface Checkpoint {
  readonly _tag: "Checkpoint"
  readonly state: unknown
}

export interface Log {
  readonly _tag: "Log"
  readonly level: LogLevel
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

export type Output = RecordOutput | Checkpoint | Log | Shortfall | PageRead

export const record = (data: Readonly<Record<string, unknown>>): Output => ({ _tag: "Record", data })
export const checkpoint = (state: unknown): Output => ({ _tag: "Checkpoint", state })
export const pageRead: Output = { _tag: "PageRead" }
export const log = (level: LogLevel, message: string): Output => ({ _tag: "Log", level, message })
export const shortfall = (
  records: number | undefined,
  credits: number | undefined,
  detail: string,
): Output => ({
  _tag: "Shortfall",
  records,
  credits,
  detail,
})
