/**
 * A stream described as data: its name, keys, sync modes and record schema, and one function that
 * reads it. The engine (Read.ts) runs every definition the same way, so paging, budgeting,
 * checkpointing and message framing live in one place, and adding a stream is adding a definition.
 */
import type { ApiError, Client, CreditBudget } from "@salesintel/core"
import type { Stream } from "effect"
import type { SourceConfig } from "./Config.ts"
import type { Output } from "./Output.ts"
import type { SyncMode } from "./Protocol.ts"
import type { StateError } from "./StateError.ts"

export interface ReadInput {
  readonly config: SourceConfig
  readonly syncMode: SyncMode
  /** The stream's state from the last run (undefined on a first run); the definition decodes it. */
  readonly state: unknown
  /** The run's clock reading, in epoch milliseconds: one "now" for every record of the run. */
  readonly startedAt: number
}

export interface StreamDefinition {
  readonly name: string
  readonly primaryKey: ReadonlyArray<ReadonlyArray<string>>
  readonly cursorField?: ReadonlyArray<string>
  readonly syncModes: ReadonlyArray<SyncMode>
  readonly jsonSchema: Readonly<Record<string, unknown>>
  /** Nothing configured for it: the stream has nothing to read. */
  readonly isConfigured: (config: SourceConfig) => boolean
  readonly read: (
    input: ReadInput,
  ) => Stream.Stream<
    Output,
    ApiError.ApiError | StateError,
    Client.SalesIntelClient | CreditBudget.CreditBudget
  >
}
