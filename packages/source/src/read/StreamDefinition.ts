/**
 * A stream as the source reads it: its registry entry (name, keys, sync modes, record Schema) and
 * one function that reads it. The engine (Read.ts) runs every definition the same way, so paging,
 * budgeting, checkpointing and message framing live in one place, and adding a stream is adding a
 * registry entry and a definition.
 */
import type { Catalog, Streams } from "@salesintel/airbyte"
import type { ApiError, Client, CreditBudget } from "@salesintel/core"
import type * as Stream from "effect/Stream"
import type { LedgerError } from "../bought/BoughtLedger.ts"
import type * as Suppression from "../bought/Suppression.ts"
import type { SourceConfig } from "../Config.ts"
import type { KnownInputError } from "../known/Rows.ts"
import type { StateError } from "../StateError.ts"
import type { Output } from "./Output.ts"

export interface ReadInput {
  readonly config: SourceConfig
  readonly syncMode: Catalog.SyncMode
  /** The stream's state from the last run (undefined on a first run); the definition decodes it. */
  readonly state: unknown
  /** The run's clock reading, in epoch milliseconds: one "now" for every record of the run. */
  readonly startedAt: number
  /**
   * A substream's keys from its parent's records in this read (StreamDefinition.parent), each once:
   * complete, since the engine begins a substream once its parent has ended. Undefined when the
   * parent was not read.
   */
  readonly parentKeys?: ReadonlySet<string> | undefined
  /** The people and companies forgotten, never to be bought (none when undefined). */
  readonly suppressed?: Suppression.Matcher | undefined
}

/**
 * The stream whose records give a substream its keys (Airbyte's substream: the companies of the
 * contacts bought): the engine gives every record the parent emits to `keyOf`, and begins the
 * substream once the parent has ended.
 */
export interface Parent {
  /** The parent stream and the key its records give (the same key the destination reads, HeldKeys). */
  readonly key: Streams.DerivedKey
  readonly keyOf: (record: Streams.Decoded<unknown>) => string | undefined
}

export interface StreamDefinition<A> {
  readonly stream: Streams.StreamEntry<A>
  /**
   * Spends credits. A read runs the credited streams in turn in catalog order (each begins once the
   * one before has reserved all it will, and a batch it cannot have whole waits for the streams
   * before to end, so the budget goes to them in that order, as the plan counts it) and the free
   * ones beside them.
   */
  readonly credited: boolean
  /** Its parent, when the config makes it a substream. */
  readonly parent?: ((config: SourceConfig) => Parent | undefined) | undefined
  /** Nothing configured for it: the stream has nothing to read. */
  readonly isConfigured: (config: SourceConfig) => boolean
  /** The config's fields that give it something to read, for messages (e.g. `taxonomy`). */
  readonly configuredBy: string
  readonly read: (
    input: ReadInput,
  ) => Stream.Stream<
    Output<A>,
    ApiError.ApiError | StateError | LedgerError | KnownInputError,
    Client.SalesIntelClient | CreditBudget.CreditBudget
  >
}
