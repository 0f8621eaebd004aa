/**
 * The messages between PGliteDatabase.ts (main thread) and PGliteWorker.js (the worker thread
 * that owns the PGlite instance). Types only.
 */

/** What the worker is started with (its `workerData`). */
export interface WorkerData {
  /** The data directory, or undefined for an in-memory database. */
  readonly directory: string | undefined
  /** Create the database (initdb) if needed, close it, say "ready", and do nothing else. */
  readonly initOnly: boolean
  /**
   * For an in-memory database: a gzipped tar of an initialized data directory (PGliteDataDir.ts)
   * that PGlite's `loadDataDir` unpacks instead of running initdb. Undefined: initdb.
   */
  readonly loadDataDir?: string | undefined
  /** PGlite's WebAssembly, compiled once in the process (PGliteWasm.ts); undefined: PGlite compiles its own. */
  readonly module: WebAssembly.Module | undefined
}

/** One request; the worker answers each with a Reply of the same id, strictly in order. */
export type Request =
  | {
      readonly id: number
      readonly op: "query"
      readonly sql: string
      readonly params: ReadonlyArray<unknown>
    }
  /** A query's whole result: its columns, and its rows as arrays of text (rowMode "array"). */
  | { readonly id: number; readonly op: "result"; readonly sql: string }
  | { readonly id: number; readonly op: "exec"; readonly sql: string }
  /**
   * `data` holds the COPY text as UTF-8, exactly (PGliteCopyBuffer.ts): transferred (not copied) to
   * the worker, and back with the reply.
   */
  | { readonly id: number; readonly op: "copy"; readonly sql: string; readonly data: ArrayBuffer }
  | { readonly id: number; readonly op: "close" }

/** A Postgres error (or any other) as plain data: Error subclasses lose their fields when cloned. */
export interface WireError {
  readonly message: string
  /** The Postgres error fields PGlite sets (pg-protocol's DatabaseError), when there are any. */
  readonly fields: Readonly<Record<string, string>>
}

export type Reply =
  | {
      readonly id: number
      readonly ok: true
      readonly rows: ReadonlyArray<Readonly<Record<string, unknown>>>
      /** For a "result": the columns, in order, their type OIDs, and the rows as arrays of text. */
      readonly result?: {
        readonly columns: ReadonlyArray<string>
        readonly types: ReadonlyArray<number>
        readonly rows: ReadonlyArray<ReadonlyArray<string | null>>
      }
      /** For a "copy": its buffer, moved back to carry the next one. */
      readonly buffer?: ArrayBuffer
    }
  | { readonly id: number; readonly ok: false; readonly error: WireError }

/** The worker's first message: the database is open (or failed to open). */
export type Started = { readonly started: true } | { readonly started: false; readonly error: WireError }
