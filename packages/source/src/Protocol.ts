/**
 * The Airbyte protocol messages this source emits (the subset of airbyte_protocol.yaml v0.18 it
 * needs), as plain data. Every line the source prints on stdout is one of these, serialised as one
 * JSON object; a test validates each against the official schema.
 */

export type SyncMode = "full_refresh" | "incremental"
export type DestinationSyncMode = "append" | "overwrite" | "append_dedup"
export type FailureType = "system_error" | "config_error" | "transient_error"
export type LogLevel = "FATAL" | "ERROR" | "WARN" | "INFO" | "DEBUG" | "TRACE"

export interface StreamDescriptor {
  readonly name: string
  readonly namespace?: string
}

export interface AirbyteStream {
  readonly name: string
  readonly json_schema: Readonly<Record<string, unknown>>
  readonly supported_sync_modes: ReadonlyArray<SyncMode>
  readonly source_defined_cursor?: boolean
  readonly default_cursor_field?: ReadonlyArray<string>
  readonly source_defined_primary_key?: ReadonlyArray<ReadonlyArray<string>>
  readonly is_resumable?: boolean
}

export interface ConfiguredStream {
  readonly stream: AirbyteStream
  readonly sync_mode: SyncMode
  readonly destination_sync_mode: DestinationSyncMode
  readonly cursor_field?: ReadonlyArray<string>
  readonly primary_key?: ReadonlyArray<ReadonlyArray<string>>
}

export interface RecordMessage {
  readonly type: "RECORD"
  readonly record: {
    readonly stream: string
    readonly data: Readonly<Record<string, unknown>>
    readonly emitted_at: number
  }
}

export interface StreamStateMessage {
  readonly type: "STATE"
  readonly state: {
    readonly type: "STREAM"
    readonly stream: { readonly stream_descriptor: StreamDescriptor; readonly stream_state: unknown }
    /** Records emitted for this stream since the previous state message (protocol asks for a number). */
    readonly sourceStats: { readonly recordCount: number }
  }
}

export interface LogMessage {
  readonly type: "LOG"
  readonly log: { readonly level: LogLevel; readonly message: string }
}

export interface TraceErrorMessage {
  readonly type: "TRACE"
  readonly trace: {
    readonly type: "ERROR"
    readonly emitted_at: number
    readonly error: {
      readonly message: string
      readonly internal_message?: string
      readonly stack_trace?: string
      readonly failure_type: FailureType
      readonly stream_descriptor?: StreamDescriptor
    }
  }
}

export interface SpecMessage {
  readonly type: "SPEC"
  readonly spec: {
    readonly documentationUrl?: string
    readonly connectionSpecification: Readonly<Record<string, unknown>>
    readonly supportsIncremental?: boolean
    readonly supported_destination_sync_modes?: ReadonlyArray<DestinationSyncMode>
  }
}

export interface ConnectionStatusMessage {
  readonly type: "CONNECTION_STATUS"
  readonly connectionStatus: { readonly status: "SUCCEEDED" | "FAILED"; readonly message?: string }
}

export interface CatalogMessage {
  readonly type: "CATALOG"
  readonly catalog: { readonly streams: ReadonlyArray<AirbyteStream> }
}

export type Message =
  | RecordMessage
  | StreamStateMessage
  | LogMessage
  | TraceErrorMessage
  | SpecMessage
  | ConnectionStatusMessage
  | CatalogMessage

export const record = (
  stream: string,
  data: Readonly<Record<string, unknown>>,
  emittedAt: number,
): RecordMessage => ({
  type: "RECORD",
  record: { stream, data, emitted_at: emittedAt },
})

export const streamState = (stream: string, state: unknown, recordCount: number): StreamStateMessage => ({
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

export const connectionStatus = (succeeded: boolean, message?: string): ConnectionStatusMessage => ({
  type: "CONNECTION_STATUS",
  connectionStatus: {
    status: succeeded ? "SUCCEEDED" : "FAILED",
    ...(message === undefined ? {} : { message }),
  },
})

/** One line of stdout. */
export const serialize = (message: Message): string => `${JSON.stringify(message)}\n`
