/**
 * Substreams: a stream whose keys are another's records (StreamDefinition.parent), such as the
 * companies of the contacts bought. The engine gives every record a parent emits to its
 * substreams' collectors, and begins a substream once its parent ended (Turns.ts).
 */
import type { Catalog, Streams } from "@salesintel/airbyte"
import type { SourceConfig } from "../Config.ts"
import { definitionOf } from "../Definitions.ts"
import type * as Output from "./Output.ts"

/**
 * The substreams of the catalog whose parent it reads (StreamDefinition.parent): each parent's
 * collectors, given every record it emits, and each substream's keys, handed to it when it begins
 * (after its parent ended). The keys are gathered as the parent's records pass, in a set (distinct
 * keys, such as company domains, far fewer than the records).
 */
export interface Substreams {
  readonly collectors: ReadonlyMap<string, ReadonlyArray<Collector>>
  readonly keys: ReadonlyMap<string, Set<string>>
  /** The parent a substream waits for. */
  readonly parentOf: ReadonlyMap<string, string>
}

interface Collector {
  readonly keyOf: (record: Streams.Decoded<unknown>) => string | undefined
  readonly keys: Set<string>
}

export const substreamsOf = (catalog: Catalog.ConfiguredCatalog, config: SourceConfig): Substreams => {
  const inCatalog = new Set(catalog.streams.map((entry) => entry.stream.name))
  const collectors = new Map<string, ReadonlyArray<Collector>>()
  const keys = new Map<string, Set<string>>()
  const parentOf = new Map<string, string>()
  for (const entry of catalog.streams) {
    const parent = definitionOf(entry.stream.name)?.parent?.(config)
    if (parent === undefined || !inCatalog.has(parent.key.stream)) continue
    const collected = new Set<string>()
    keys.set(entry.stream.name, collected)
    parentOf.set(entry.stream.name, parent.key.stream)
    collectors.set(parent.key.stream, [
      ...(collectors.get(parent.key.stream) ?? []),
      { keyOf: parent.keyOf, keys: collected },
    ])
  }
  return { collectors, keys, parentOf }
}

/** A record a parent emits, given to its substreams' collectors. */
export const collect = (
  substreams: Substreams,
  stream: string,
  output: Output.RecordOutput<unknown>,
): void => {
  for (const collector of substreams.collectors.get(stream) ?? []) {
    const key = collector.keyOf(output.decoded)
    if (key !== undefined) collector.keys.add(key)
  }
}
