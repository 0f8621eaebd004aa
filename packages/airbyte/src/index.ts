/**
 * @salesintel/airbyte: the Airbyte protocol as the connector speaks it, written once. The source
 * writes with it, the loader reads with it, and both take their streams from its registry.
 * Import a module as a namespace: `import { Message, Ndjson, Streams } from "@salesintel/airbyte"`.
 */
export * as Catalog from "./Catalog.ts"
export * as Conform from "./Conform.ts"
export * as FieldPaths from "./FieldPaths.ts"
export * as JsonSchema from "./JsonSchema.ts"
export * as Message from "./Message.ts"
export * as Ndjson from "./Ndjson.ts"
export * as PackedIds from "./PackedIds.ts"
export * as RecordLine from "./RecordLine.ts"
export * as StreamState from "./StreamState.ts"
export * as Streams from "./Streams.ts"
