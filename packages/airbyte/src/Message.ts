/**
 * The Airbyte protocol messages the connector speaks (the subset of airbyte_protocol.yaml v0.18 it
 * needs), each defined once as a Schema: the source builds them with the constructors below and
 * writes them (Ndjson.ts); the loader reads them back with the same Schemas. A test validates
 * what the constructors build against the official protocol schema.
 *
 * A RECORD in memory may carry two things the protocol does not have and that are never written:
 * the text of its data as it arrived on an input line (for `_raw`, see RecordLine.ts) and, in
 * process, the value the source already decoded (so the loader does not decode it again).
 */
import * as Schema from "effect/Schema"
import { AirbyteStream, DestinationSyncMode } from "./Catalog.ts"
import type { Decoded } from "./Streams.ts"

/** A JSON object (record data, state blobs). */
export type JsonObject = Readonly<Record<string, unknown>>

// Only "an object": the stream's own Schema decodes record data, and walking every key here as
// well would cost a fifth of a load's CPU.
export const JsonObject = Schema.declare(
  (input: unknown): input is JsonObject =>
    typeof input === "object" && input !== null && !Array.isArray(input),
  { identifier: "JsonObject", description: "a JSON object" },
)

/**
 * An optional protocol field. Clients built on the official models (the platform, PyAirbyte)
 * write every optional field they do not set as null, so null reads as absent; it is never
 * written.
 */
const optional = <S extends Schema.Schema.Any>(schema: S) => Schema.optionalWith(schema, { nullable: true })

/** A message: its `type` beside its fields (each message type has one field, named after it). */
const message = <const Type extends string, Fields extends Schema.Struct.Fields>(
  type: Type,
  fields: Fields,
) => Schema.Struct({ type: Schema.Literal(type), ...fields })

export const StreamDescriptor = Schema.Struct({
  name: Schema.String,
  namespace: optional(Schema.String),
})

export const RecordMessage = message("RECORD", {
  record: Schema.Struct({
    namespace: optional(Schema.String),
    stream: Schema.String,
    data: JsonObject,
    emitted_at: Schema.Number,
  }),
})

/** A RECORD as it travels in memory (see the module's comment for the two extras). */
export interface RecordMessage extends Schema.Schema.Type<typeof RecordMessage> {
  /** The data's JSON text on the input line, when jsonb can take it as it is. Never written. */
  readonly dataText?: string | undefined
  /** The record as the source decoded it, in process. Never written. */
  readonly decoded?: Decoded<unknown> | undefined
}

/** The per-stream state envelope: a stream's descriptor and its state blob. */
export const StreamState = Schema.Struct({
  stream_descriptor: StreamDescriptor,
  /** The protocol's AirbyteStateBlob: a JSON object. */
  stream_state: optional(JsonObject),
})

export const StateMessage = message("STATE", {
  state: Schema.Struct({
    type: Schema.Literal("STREAM"),
    stream: StreamState,
    /** Records emitted for this stream since the previous STATE (the protocol's AirbyteStateStats). */
    sourceStats: Schema.optionalWith(Schema.Struct({ recordCount: Schema.Number }), {
      nullable: true,
      default: () => ({ recordCount: 0 }),
    }),
  }),
})

export const LogLevel = Schema.Literal("FATAL", "ERROR", "WARN", "INFO", "DEBUG", "TRACE")

export const LogMessage = message("LOG", {
  log: Schema.Struct({ level: LogLevel, message: Schema.String }),
})

export const FailureType = Schema.Literal("system_error", "config_error", "transient_error")

export const TraceErrorMessage = message("TRACE", {
  trace: Schema.Struct({
    type: Schema.Literal("ERROR"),
    emitted_at: Schema.Number,
    error: Schema.Struct({
      message: Schema.String,
      internal_message: optional(Schema.String),
      stack_trace: optional(Schema.String),
      failure_type: FailureType,
      stream_descriptor: optional(StreamDescriptor),
    }),
  }),
})

/** Where a stream stands in a read: the protocol's AirbyteStreamStatus. */
export const StreamStatus = Schema.Literal("STARTED", "RUNNING", "COMPLETE", "INCOMPLETE")

/**
 * A stream's status (the protocol's STREAM_STATUS trace): the loader finishes an overwrite only
 * for a stream that reported COMPLETE.
 */
/**
 * Why a stream stands where it does (the protocol's AirbyteStreamStatusReason): RATE_LIMITED, with
 * when the wait ends (`quota_reset`, epoch ms), is the one reason the protocol knows.
 */
export const StreamStatusReason = Schema.Struct({
  type: Schema.Literal("RATE_LIMITED"),
  rate_limited: Schema.optional(Schema.Struct({ quota_reset: Schema.optional(Schema.Int) })),
})

export const StreamStatusMessage = message("TRACE", {
  trace: Schema.Struct({
    type: Schema.Literal("STREAM_STATUS"),
    emitted_at: Schema.Number,
    stream_status: Schema.Struct({
      stream_descriptor: StreamDescriptor,
      status: StreamStatus,
      reasons: Schema.optional(Schema.Array(StreamStatusReason)),
    }),
  }),
})

/**
 * A guess at how much a stream will emit in this read (the protocol's ESTIMATE trace, per STREAM):
 * Airbyte shows progress from it, and so does `salesintel sync`. A later one supersedes an earlier.
 */
export const EstimateMessage = message("TRACE", {
  trace: Schema.Struct({
    type: Schema.Literal("ESTIMATE"),
    emitted_at: Schema.Number,
    estimate: Schema.Struct({
      name: Schema.String,
      type: Schema.Literal("STREAM", "SYNC"),
      namespace: optional(Schema.String),
      row_estimate: optional(Schema.Int.pipe(Schema.nonNegative())),
      byte_estimate: optional(Schema.Int.pipe(Schema.nonNegative())),
    }),
  }),
})

export const SpecMessage = message("SPEC", {
  spec: Schema.Struct({
    documentationUrl: optional(Schema.String),
    connectionSpecification: JsonObject,
    supportsIncremental: optional(Schema.Boolean),
    supported_destination_sync_modes: optional(Schema.Array(DestinationSyncMode)),
  }),
})

export const ConnectionStatusMessage = message("CONNECTION_STATUS", {
  connectionStatus: Schema.Struct({
    status: Schema.Literal("SUCCEEDED", "FAILED"),
    message: optional(Schema.String),
  }),
})

export const CatalogMessage = message("CATALOG", {
  catalog: Schema.Struct({ streams: Schema.Array(AirbyteStream) }),
})

export type Message =
  | RecordMessage
  | StateMessage
  | LogMessage
  | TraceErrorMessage
  | StreamStatusMessage
  | EstimateMessage
  | SpecMessage
  | ConnectionStatusMessage
  | CatalogMessage

/** The Schema of each message type, by its `type`. */
export const schemas = {
  RECORD: RecordMessage,
  STATE: StateMessage,
  LOG: LogMessage,
  TRACE: Schema.Union(TraceErrorMessage, StreamStatusMessage, EstimateMessage),
  SPEC: SpecMessage,
  CONNECTION_STATUS: ConnectionStatusMessage,
  CATALOG: CatalogMessage,
} as const

/** A TRACE message that reports an error (not a stream's status). */
export const isTraceError = (message: Message): message is TraceErrorMessage =>
  message.type === "TRACE" && message.trace.type === "ERROR"

export const record = (
  stream: string,
  data: JsonObject,
  emittedAt: number,
  decoded?: Decoded<unknown>,
): RecordMessage => ({
  type: "RECORD",
  record: { stream, data, emitted_at: emittedAt },
  ...(decoded === undefined ? {} : { decoded }),
})

export const streamState = (stream: string, state: JsonObject, recordCount: number): StateMessage => ({
  type: "STATE",
  state: {
    type: "STREAM",
    stream: { stream_descriptor: { name: stream }, stream_state: state },
    sourceStats: { recordCount },
  },
})

export const log = (level: LogLevel, message: string): LogMessage => ({
  type: "LOG",
  log: { level, message },
})

export const traceError = (
  failureType: FailureType,
  message: string,
  emittedAt: number,
  details: { readonly internal?: string; readonly stream?: string } = {},
): TraceErrorMessage => ({
  type: "TRACE",
  trace: {
    type: "ERROR",
    emitted_at: emittedAt,
    error: {
      message,
      failure_type: failureType,
      ...(details.internal === undefined ? {} : { internal_message: details.internal }),
      ...(details.stream === undefined ? {} : { stream_descriptor: { name: details.stream } }),
    },
  },
})

export const streamStatus = (
  stream: string,
  status: StreamStatus,
  emittedAt: number,
  reasons?: StreamStatusMessage["trace"]["stream_status"]["reasons"],
): StreamStatusMessage => ({
  type: "TRACE",
  trace: {
    type: "STREAM_STATUS",
    emitted_at: emittedAt,
    stream_status: {
      stream_descriptor: { name: stream },
      status,
      ...(reasons === undefined ? {} : { reasons }),
    },
  },
})

/**
 * A stream still running but held back by a rate limit until `quotaReset` (epoch ms): RUNNING with
 * the reason RATE_LIMITED, so the platform shows why nothing comes.
 */
export const streamRateLimited = (
  stream: string,
  quotaReset: number,
  emittedAt: number,
): StreamStatusMessage =>
  streamStatus(stream, "RUNNING", emittedAt, [
    { type: "RATE_LIMITED", rate_limited: { quota_reset: Math.ceil(quotaReset) } },
  ])

/** A stream's estimate: `rows` records, and `bytes` of record data when known. */
export const estimate = (
  stream: string,
  rows: number,
  bytes: number | undefined,
  emittedAt: number,
): EstimateMessage => ({
  type: "TRACE",
  trace: {
    type: "ESTIMATE",
    emitted_at: emittedAt,
    estimate: {
      name: stream,
      type: "STREAM",
      row_estimate: Math.max(0, Math.round(rows)),
      ...(bytes === undefined ? {} : { byte_estimate: Math.max(0, Math.round(bytes)) }),
    },
  },
})

export const connectionStatus = (succeeded: boolean, message?: string): ConnectionStatusMessage => ({
  type: "CONNECTION_STATUS",
  connectionStatus: {
    status: succeeded ? "SUCCEEDED" : "FAILED",
    ...(message === undefined ? {} : { message }),
  },
})

export const catalog = (streams: ReadonlyArray<AirbyteStream>): CatalogMessage => ({
  type: "CATALOG",
  catalog: { streams },
})

export type StreamState = typeof StreamState.Type
export type StateMessage = typeof StateMessage.Type
export type LogLevel = typeof LogLevel.Type
export type LogMessage = typeof LogMessage.Type
export type FailureType = typeof FailureType.Type
export type TraceErrorMessage = typeof TraceErrorMessage.Type
export type SpecMessage = typeof SpecMessage.Type
export type ConnectionStatusMessage = typeof ConnectionStatusMessage.Type
export type CatalogMessage = typeof CatalogMessage.Type
export type StreamStatus = typeof StreamStatus.Type
export type StreamStatusMessage = typeof StreamStatusMessage.Type
export type EstimateMessage = typeof EstimateMessage.Type
