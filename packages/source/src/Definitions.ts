/**
 * The source's definition of every stream of the registry, keyed by name: a stream added to the
 * registry without a definition here (or a definition without a registry entry) does not build.
 */
import { Streams } from "@salesintel/airbyte"
import type { StreamDefinition } from "./read/StreamDefinition.ts"
import { companies } from "./streams/Companies.ts"
import { contacts } from "./streams/Contacts.ts"
import { taxonomyCategories, taxonomyProducts } from "./streams/Taxonomy.ts"

export const definitions: {
  readonly [Name in Streams.StreamName]: StreamDefinition<Streams.RecordOf<Name>>
} = {
  taxonomy_categories: taxonomyCategories,
  taxonomy_products: taxonomyProducts,
  contacts,
  companies,
}

/** The definition of a stream named in a configured catalog (checked against the registry there). */
export const definitionOf = (name: string): StreamDefinition<unknown> | undefined =>
  Streams.isStreamName(name) ? definitions[name] : undefined
