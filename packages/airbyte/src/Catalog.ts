/**
 * Catalogs: the streams offered (discover's CATALOG, from the registry) and the configured catalog
 * a read and a load are given (which streams, in which sync modes), checked against the registry.
 */
import { ParseIssue } from "@salesintel/core"
import * as Either from "effect/Either"
import * as Schema from "effect/Schema"
import * as Streams from "./Streams.ts"

// Defined with the registry, whose streams list the modes they support; part of the catalog's protocol.
export const SyncMode = Streams.SyncMode
export type SyncMode = Streams.SyncMode
/** The destination modes this connector's loader writes (`salesintel-pg load`). */
export const DestinationSyncMode = Schema.Literal("append", "overwrite", "append_dedup")
export type DestinationSyncMode = typeof DestinationSyncMode.Type

/** A stream as discover describes it (the protocol's AirbyteStream). */
export const AirbyteStream = Schema.Struct({
  name: Schema.String,
  json_schema: Schema.Record({ key: Schema.String, value: Schema.Unknown }),
  supported_sync_modes: Schema.Array(SyncMode),
  source_defined_cursor: Schema.optional(Schema.Boolean),
  default_cursor_field: Schema.optional(Schema.Array(Schema.String)),
  source_defined_primary_key: Schema.optional(Schema.Array(Schema.Array(Schema.String))),
  is_resumable: Schema.optional(Schema.Boolean),
})
export type AirbyteStream = typeof AirbyteStream.Type

export const airbyteStream = (entry: Streams.StreamEntry<unknown>): AirbyteStream => ({
  name: entry.name,
  json_schema: entry.jsonSchema,
  supported_sync_modes: entry.syncModes,
  source_defined_primary_key: entry.primaryKey,
  ...(entry.cursorField === undefined
    ? {}
    : { source_defined_cursor: true, default_cursor_field: entry.cursorField }),
  is_resumable: true,
})

/** The stream of the records a page carried that did not decode (Streams.rejected), as discover offers it. */
const rejectedStream: AirbyteStream = {
  name: Streams.rejected.name,
  json_schema: Streams.rejected.jsonSchema,
  supported_sync_modes: Streams.rejected.syncModes,
  source_defined_primary_key: Streams.rejected.primaryKey,
  source_defined_cursor: true,
  default_cursor_field: Streams.rejected.cursorField,
  is_resumable: true,
}

/** Every stream of the registry, then the rejected records' stream, as discover offers them. */
export const offered = (): ReadonlyArray<AirbyteStream> => [...Streams.all.map(airbyteStream), rejectedStream]

/** A configured stream: only the parts this connector acts on are decoded (the rest is ignored). */
const ConfiguredStream = Schema.Struct({
  stream: Schema.Struct({
    name: Schema.String,
    /**
     * The protocol has no field-selection property: Airbyte selects fields by sending the stream's
     * json_schema with only the selected top-level properties (see `deselectedFields`).
     */
    json_schema: Schema.optionalWith(Schema.Record({ key: Schema.String, value: Schema.Unknown }), {
      nullable: true,
    }),
  }),
  sync_mode: SyncMode,
  /**
   * The destination's business, not the source's: any of protocol 0.18's (append, overwrite,
   * append_dedup, update, soft_delete) or a later one. The loader takes those it writes
   * (`loaderModes`).
   */
  destination_sync_mode: Schema.String,
  /**
   * Airbyte's refreshes (protocol 0.17+): the destination deletes the records of generations below
   * `minimum_generation_id`. Null or absent where the platform does not support refreshes.
   */
  generation_id: Schema.optionalWith(Schema.Number, { nullable: true }),
  minimum_generation_id: Schema.optionalWith(Schema.Number, { nullable: true }),
})

export const ConfiguredCatalog = Schema.Struct({ streams: Schema.Array(ConfiguredStream) })
export type ConfiguredCatalog = typeof ConfiguredCatalog.Type
export type ConfiguredStream = typeof ConfiguredStream.Type

/**
 * Decodes a configured catalog and checks every stream against the registry. A stream listed
 * twice is refused (it would be read, and bought, twice). A sync mode the stream does not support
 * is accepted: clients configure `incremental` for every stream (PyAirbyte does), and the read
 * reads such a stream in full, saying so (`syncModeOf`).
 */
export const decodeConfigured = (input: unknown): Either.Either<ConfiguredCatalog, string> =>
  Schema.decodeUnknownEither(ConfiguredCatalog)(input).pipe(
    Either.mapLeft((error) => {
      const issue = ParseIssue.fromParseError(error)
      return `invalid catalog at ${issue.path}: ${issue.description}`
    }),
    Either.flatMap((configured) => {
      const seen = new Map<string, number>()
      const offered = [...Streams.names, Streams.rejected.name]
      for (const [index, entry] of configured.streams.entries()) {
        const name = entry.stream.name
        if (!Streams.isOffered(name))
          return Either.left(
            `invalid catalog at streams[${index}].stream.name: no stream "${name}" (${Streams.didYouMean([name], offered) ?? `streams: ${offered.join(", ")}`})`,
          )
        const earlier = seen.get(name)
        if (earlier !== undefined)
          return Either.left(
            `invalid catalog at streams[${index}].stream.name: stream ${name} is listed twice (streams[${earlier}] and streams[${index}]); list each stream once`,
          )
        seen.set(name, index)
      }
      return Either.right(configured)
    }),
  )

/**
 * The mode a configured stream is read in: the one asked for when the stream supports it, else
 * full_refresh (the only other mode; the Airbyte CDK does the same) with `downgraded` set so the
 * read can say so.
 */
export const syncModeOf = (
  configured: ConfiguredStream,
): { readonly syncMode: SyncMode; readonly downgraded: boolean } => {
  const name = configured.stream.name
  const supported: ReadonlyArray<SyncMode> = Streams.isStreamName(name)
    ? Streams.streams[name].syncModes
    : name === Streams.rejected.name
      ? Streams.rejected.syncModes
      : []
  return supported.includes(configured.sync_mode)
    ? { syncMode: configured.sync_mode, downgraded: false }
    : { syncMode: "full_refresh", downgraded: true }
}

/**
 * Whether the destination replaces the stream's table with what this read sends, so that a read
 * that ends without failing while the stream is unfinished (the budget spent, a stop) would drop
 * the rows earlier reads paid for: a full refresh into `overwrite` (or `overwrite_dedup`), the
 * platform's "Full refresh | Overwrite"; or a refresh that deletes the earlier generations
 * (`minimum_generation_id` equal to `generation_id`, above 0: generation 0 has none before it).
 * `incremental | overwrite` is not counted: the platform never offers it, and PyAirbyte, which
 * configures every stream so, merges into its caches by primary key whatever the mode.
 */
export const replacesTable = (configured: ConfiguredStream): boolean => {
  const { generation_id: generation, minimum_generation_id: minimum } = configured
  const refresh = generation !== undefined && minimum !== undefined && minimum > 0 && minimum === generation
  const overwrite =
    configured.destination_sync_mode === "overwrite" || configured.destination_sync_mode === "overwrite_dedup"
  return refresh || (overwrite && syncModeOf(configured).syncMode === "full_refresh")
}

/** How the destination replaces the stream's table (for messages): its mode, or the refresh. */
export const replacementOf = (configured: ConfiguredStream): string =>
  configured.minimum_generation_id !== undefined &&
  configured.minimum_generation_id > 0 &&
  configured.minimum_generation_id === configured.generation_id
    ? `a refresh that deletes the earlier generations (minimum_generation_id ${configured.minimum_generation_id})`
    : `${syncModeOf(configured).syncMode} | ${configured.destination_sync_mode}`

/** A catalog that reads the named streams in the given mode where supported (full_refresh otherwise). */
export const configuredAll = (
  syncMode: SyncMode,
  streamNames: ReadonlyArray<string> = Streams.names,
): LoaderCatalog => ({
  streams: Streams.all
    .filter((entry) => streamNames.includes(entry.name))
    .map((entry) => {
      const incremental = syncMode === "incremental" && entry.syncModes.includes("incremental")
      return {
        stream: { name: entry.name },
        sync_mode: incremental ? "incremental" : "full_refresh",
        destination_sync_mode: incremental ? "append_dedup" : "overwrite",
      }
    }),
})

/**
 * Why a loader that keeps the ledger refuses this catalog, or undefined: a stream read
 * incrementally (a run sends only what it buys) into `overwrite` (the destination keeps only what
 * this run sent) would delete every row earlier runs bought, and with them their keys in the
 * ledger, so the next sync buys them all again. (PyAirbyte configures every stream this way, but
 * it writes to its own cache, not through this loader.)
 */
export const overwriteProblem = (catalog: ConfiguredCatalog): string | undefined => {
  const index = catalog.streams.findIndex(
    (entry) => entry.destination_sync_mode === "overwrite" && syncModeOf(entry).syncMode === "incremental",
  )
  const entry = catalog.streams[index]
  if (entry === undefined) return undefined
  return `invalid catalog at streams[${index}].destination_sync_mode: stream ${entry.stream.name} is read incrementally (sync_mode "incremental": each run sends only what it buys), and "overwrite" would delete every row earlier runs bought (the next sync would buy them again); use "append_dedup", or sync_mode "full_refresh" to re-read (and re-buy) the stream in full`
}

/** Each stream's destination sync mode, by name. */
export type DestinationSyncModes = Readonly<Record<string, DestinationSyncMode>>

/** A configured catalog whose every mode is one the loader writes (what `salesintel sync` reads). */
export interface LoaderCatalog {
  readonly streams: ReadonlyArray<ConfiguredStream & { readonly destination_sync_mode: DestinationSyncMode }>
}

/** Each stream's mode of a catalog made for the loader. */
export const destinationSyncModes = (catalog: LoaderCatalog): DestinationSyncModes =>
  Object.fromEntries(catalog.streams.map((entry) => [entry.stream.name, entry.destination_sync_mode]))

const isLoaderMode = Schema.is(DestinationSyncMode)

/**
 * Each stream's destination mode as the loader writes it, or why the loader refuses the catalog: a
 * mode it does not write (`update`, `soft_delete`: another destination's), or one that would delete
 * what earlier runs bought (`overwriteProblem`).
 */
export const loaderModes = (catalog: ConfiguredCatalog): Either.Either<DestinationSyncModes, string> => {
  const modes: Record<string, DestinationSyncMode> = {}
  for (const [index, entry] of catalog.streams.entries()) {
    const mode = entry.destination_sync_mode
    if (!isLoaderMode(mode))
      return Either.left(
        `invalid catalog at streams[${index}].destination_sync_mode: this loader writes append, overwrite or append_dedup, not ${JSON.stringify(mode)} (a mode of another destination); use append_dedup for ${entry.stream.name}`,
      )
    modes[entry.stream.name] = mode
  }
  const problem = overwriteProblem(catalog)
  return problem === undefined ? Either.right(modes) : Either.left(problem)
}

/**
 * The top-level fields the configured stream leaves out: those the registry's schema declares and
 * the configured json_schema's `properties` does not (Airbyte's field selection). None when the
 * configured schema lists no properties. The primary key and the cursor are always kept (Airbyte
 * never deselects them, and the loader keys rows by them); fields the registry does not declare
 * (the provider's additions) are not the catalog's to drop.
 */
export const deselectedFields = (configured: ConfiguredStream): ReadonlyArray<string> => {
  const properties = configured.stream.json_schema?.properties
  if (!Streams.isStreamName(configured.stream.name)) return []
  if (typeof properties !== "object" || properties === null || Array.isArray(properties)) return []
  const entry = Streams.streams[configured.stream.name]
  const kept = new Set([
    ...Object.keys(properties),
    ...entry.primaryKey.map((path) => path[0] ?? ""),
    ...(entry.cursorField ?? []).slice(0, 1),
  ])
  const declared = Object.keys((entry.jsonSchema.properties ?? {}) as Readonly<Record<string, unknown>>)
  return declared.filter((name) => !kept.has(name))
}
