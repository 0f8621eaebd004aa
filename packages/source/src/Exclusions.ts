/**
 * The fields a read leaves out of each stream's records: the config's `exclude_fields` of the
 * stream's section and the fields the configured catalog deselects (Airbyte's field selection).
 * They are taken out before a record leaves the source, so no message, table or `_raw` has them.
 */
import { Catalog, FieldPaths, type Message, Streams } from "@salesintel/airbyte"
import * as Stream from "effect/Stream"
import type { SourceConfig } from "./Config.ts"

/** The config's `exclude_fields` for a stream (the taxonomy has none: it holds no personal data). */
const configured = (config: SourceConfig, stream: string): ReadonlyArray<string> => {
  switch (stream) {
    case "contacts":
      return config.contacts?.exclude_fields ?? []
    case "companies":
      return config.companies?.exclude_fields ?? []
    default:
      return []
  }
}

/** Every field path left out of the stream's records, config and catalog together. */
export const excludedPaths = (
  config: SourceConfig,
  entry: Catalog.ConfiguredStream,
): ReadonlyArray<string> => [
  ...new Set([...configured(config, entry.stream.name), ...Catalog.deselectedFields(entry)]),
]

/**
 * What a record of the stream goes through before it is emitted: the identity when nothing is
 * excluded (no cost on the usual path), the remover otherwise.
 */
export const recordFilter = (
  config: SourceConfig,
  entry: Catalog.ConfiguredStream,
): ((record: Message.RecordMessage) => Message.RecordMessage) => {
  const paths = excludedPaths(config, entry)
  if (paths.length === 0) return (record) => record
  const tree = FieldPaths.treeOf(paths)
  // A rejected record of the stream (Streams.rejected) carries the provider's record whole in
  // `record`: the excluded fields leave it there.
  return (record) =>
    record.record.stream === Streams.rejected.name
      ? withoutExcludedInRejected(record, tree)
      : FieldPaths.removeFromRecord(record, tree)
}

const withoutExcludedInRejected = (message: Message.RecordMessage, tree: FieldPaths.PathTree) => {
  const { data } = message.record
  const record = FieldPaths.remove(data.record, tree)
  return record === data.record
    ? message
    : { ...message, record: { ...message.record, data: { ...data, record } } }
}

/** The excluded fields taken out of a value of the stream's records (a rejected record, before it is said or sent). */
export const valueFilter = (
  config: SourceConfig,
  entry: Catalog.ConfiguredStream,
): ((value: unknown) => unknown) => {
  const paths = excludedPaths(config, entry)
  if (paths.length === 0) return (value) => value
  const tree = FieldPaths.treeOf(paths)
  return (value) => FieldPaths.remove(value, tree)
}

/**
 * A read's messages with the excluded fields taken out of every RECORD: the messages as they are
 * (no stage added) when nothing is excluded.
 */
/** Each message as it leaves: a record without its excluded fields, anything else as it is. */
export const excluding = (
  config: SourceConfig,
  entry: Catalog.ConfiguredStream,
): ((message: Message.Message) => Message.Message) => {
  if (excludedPaths(config, entry).length === 0) return (message) => message
  const filter = recordFilter(config, entry)
  return (message) => (message.type === "RECORD" ? filter(message) : message)
}

export const withoutExcluded =
  (config: SourceConfig, entry: Catalog.ConfiguredStream) =>
  <E, R>(messages: Stream.Stream<Message.Message, E, R>): Stream.Stream<Message.Message, E, R> =>
    excludedPaths(config, entry).length === 0 ? messages : Stream.map(messages, excluding(config, entry))
