/**
 * Where a stream's bought set lives when the source runs beside its destination (`salesintel
 * sync`): the destination's ledger, which the loader writes with the records it commits. The
 * source asks it about the keys it meets (a listed page's ids at a time), never for the whole set,
 * so its memory does not grow with what is held, and keeps only a marker in its state
 * (Streams.inLedger), so a checkpoint is small however much is held, and a run killed at any
 * moment re-buys only what had not committed. Without this service (the source on its own, the
 * Airbyte platform, PyAirbyte) the set is in the state, as before.
 */
import * as Context from "effect/Context"
import * as Data from "effect/Data"
import type * as Effect from "effect/Effect"

/** A key bought and the day it was bought (days since 1970-01-01). */
export type Entry = readonly [key: string, day: number]

/** The ledger could not be read or written (its database failed). */
export class LedgerError extends Data.TaggedError("LedgerError")<{ readonly description: string }> {
  override get message(): string {
    return `the ledger of what was bought could not be used: ${this.description}`
  }
}

/**
 * A ledger's keys dated after tomorrow (rows fetched by a worker whose clock was ahead): how many,
 * on how many days, the first and the last.
 */
export interface DatedAhead {
  readonly keys: number
  readonly days: number
  readonly first: number
  readonly last: number
}

/**
 * How much a stream's ledger holds: every key, those not due again on the day asked about, and
 * those dated after tomorrow (left out when none is).
 */
export interface Holdings {
  readonly held: number
  readonly fresh: number
  readonly ahead?: DatedAhead | undefined
}

export interface Ledger {
  /** Which of `keys` `stream` bought, each with its latest day (keys not bought are left out). */
  readonly lookup: (
    stream: string,
    keys: ReadonlyArray<string>,
  ) => Effect.Effect<ReadonlyArray<Entry>, LedgerError>
  /**
   * What `stream` holds: every key, and the fresh ones, bought less than `refreshAfterDays` before
   * `today` (every key when it is undefined).
   */
  readonly holdings: (
    stream: string,
    today: number,
    refreshAfterDays: number | undefined,
  ) => Effect.Effect<Holdings, LedgerError>
  /**
   * Records `entries` as bought: the set a state held, moved into the ledger (where the
   * destination's tables are the truth, a key it holds no record of is not recorded, and a key's
   * day is its record's). It must be durable no later than the first checkpoint written without
   * the set.
   */
  readonly adopt: (stream: string, entries: ReadonlyArray<Entry>) => Effect.Effect<void, LedgerError>
  /**
   * Which of `keys` (identities of `stream`'s known records, streams/contacts/KnownDone.ts) were
   * looked up and found held, each with its latest day; those not done are left out. The
   * destination writes them from the records of the `_known_done` stream (Streams.knownDone).
   */
  readonly lookupDone: (
    stream: string,
    keys: ReadonlyArray<string>,
  ) => Effect.Effect<ReadonlyArray<Entry>, LedgerError>
  /** Records `entries` (identities done a state held) as done; durable as `adopt` is. */
  readonly adoptDone: (stream: string, entries: ReadonlyArray<Entry>) => Effect.Effect<void, LedgerError>
  /** The identities done that `stream`'s ledger dates after tomorrow, or undefined when none is. */
  readonly aheadDone: (stream: string, today: number) => Effect.Effect<DatedAhead | undefined, LedgerError>
}

export class BoughtLedger extends Context.Tag("@salesintel/source/BoughtLedger")<BoughtLedger, Ledger>() {}
