/**
 * The keys the records a destination holds give (Streams.derivedKeys): the company domains of the
 * contacts a `salesintel sync` target holds, from every run before this one. A substream (the
 * companies of the contacts held) asks for them as it begins. Without this service (the source on
 * its own, the Airbyte platform, PyAirbyte) a substream has the records this read emits and what
 * its own state kept.
 */
import type { Streams } from "@salesintel/airbyte"
import * as Context from "effect/Context"
import type * as Effect from "effect/Effect"
import type { LedgerError } from "./BoughtLedger.ts"

export interface Held {
  /** Every distinct `key` the held records of its stream give, each once. */
  readonly keys: (key: Streams.DerivedKey) => Effect.Effect<ReadonlyArray<string>, LedgerError>
}

export class HeldKeys extends Context.Tag("@salesintel/source/HeldKeys")<HeldKeys, Held>() {}
