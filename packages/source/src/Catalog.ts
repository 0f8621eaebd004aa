/**
 * The streams this source offers (discover), and the configured catalog a read is given.
 */
import { ParseIssue } from "@salesintel/core"
import { Either, Schema } from "effect"
import type { AirbyteStream, CatalogMessage } from "./Protocol.ts"
import type { StreamDefinition } from "./StreamDefinition.ts"
import { companies } from "./streams/Companies.ts"
import { contacts } from "./streams/Contacts.ts"
import { taxonomyCategories, taxonomyProducts } from "./streams/Taxonomy.ts"

/** Every stream, in the order a read runs them: the free taxonomy first, credited streams after. */
export const definitions: ReadonlyArray<StreamDefinition> = [
  taxonomyCategories,
  taxonomyProducts,
  contacts,
  companies,
]

export const airbyteStream = (definition: StreamDefinition): AirbyteStream => ({
  name: definition.name,
  json_schema: definition.jsonSchema,
  supported_sync_modes: definition.syncModes,
  source_defined_primary_key: definition.primaryKey,
  ...(definition.cursorField === undefined
    ? {}
    : { source_defined_cursor: true, default_cursor_field: definition.cursorField }),
  is_resumable: true,
})

export const catalog = (): CatalogMessage => ({
  type: "CATALOG",
  catalog: { streams: definitions.map(airbyteStream) },
})

const ConfiguredStream = Schema.Struct({
  stream: Schema.Struct({ name: Schema.String }),
  sync_mode: Schema.Literal("full_refresh", "incremental"),
  destination_sync_mode: Schema.Literal("append", "overwrite", "append_dedup"),
})

export const ConfiguredCatalog = Schema.Struct({ streams: Schema.Array(ConfiguredStream) })
export type ConfiguredCatalog = typeof ConfiguredCatalog.Type
export type ConfiguredStream = typeof ConfiguredStream.Type

/** Decodes a configured catalog and checks every stream and sync mode against what is offered. */
export const decodeConfigured = (input: unknown): Either.Either<ConfiguredCatalog, string> =>
  Schema.decodeUnknownEither(ConfiguredCatalog)(input).pipe(
    Either.mapLeft((error) => {
      const issue = ParseIssue.fromParseError(error)
      return `invalid catalog at ${issue.path}: ${issue.description}`
    }),
    Either.flatMap((configured) => {
      for (const [index, entry] of configured.streams.entries()) {
        const definition = definitions.find((candidate) => candidate.name === entry.stream.name)
        if (definition === undefined)
          return Either.left(
            `invalid catalog at streams[${index}].stream.name: no stream "${entry.stream.name}" (streams: ${definitions.map((d) => d.name).join(", ")})`,
          )
        if (!definition.syncModes.includes(entry.sync_mode))
          return Either.left(
            `invalid catalog at streams[${index}].sync_mode: stream ${definition.name} supports ${definition.syncModes.join(" and ")}, not ${entry.sync_mode}`,
          )
      }
      return Either.right(configured)
    }),
  )

/** A catalog that reads every stream in the given mode where supported (full_refresh otherwise). */
export const configuredAll = (
  syncMode: "full_refresh" | "incremental",
  streamNames: ReadonlyArray<string> = definitions.map((d) => d.name),
): ConfiguredCatalog => ({
  streams: definitions
    .filter((definition) => streamNames.includes(definition.name))
    .map((definition) => ({
      stream: { name: definition.name },
      sync_mode: definition.syncModes.includes(syncMode) ? syncMode : "full_refresh",
      destination_sync_mode:
        definition.syncModes.includes(syncMode) && syncMode === "incremental" ? "append_dedup" : "overwrite",
    })),
})
