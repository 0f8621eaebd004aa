/**
 * Where a stream's bought set lives when the source runs beside its destination (`salesintel
 * sync`): the destination's ledger, which the loader writes with the records it commits. The
 * source reads the set from it a page at a time and keeps only a marker in its state
 * (Streams.inLedger), so a checkpoint is small however much is held, and a run killed at any
 * moment re-buys only what had not committed. Without this service (the source on its own, the
 * Airbyte platform, PyAirbyte) the set is in the state, as before.
 */
import { Context, Data, type Effect, type Stream } from "effect"

/** A key bought and the day it was bought (days since 1970-01-01). */
export type Entry = readonly [key: string, day: number]

/** The ledger could not be read or written (its database failed). */
export class LedgerError extends Data.TaggedError("LedgerError")<{ readonly description: string }> {
  override get message(): string {
    return `the ledger of what was bought could not be used: ${this.description}`
  }
}

export interface Ledger {
  /** What `stream` bought, each key once with its latest day. */
  readonly read: (stream: string) => Stream.Stream<Entry, LedgerError>
  /**
   * Records `entries` as bought (a later day wins): the set a state held, moved into the ledger.
   * It must be durable no later than the first checkpoint written without the set.
   */
  readonly adopt: (stream: string, entries: ReadonlyArray<Entry>) => Effect.Effect<void, LedgerError>
}

export class BoughtLedger extends Context.Tag("@salesintel/source/BoughtLedger")<BoughtLedger, Ledger>() {}
