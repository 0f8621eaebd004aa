/**
 * The Database on embedded PGlite (COPY through PGlite's socket server is broken, see
 * toolchain-notes.md). Bulk data goes through `COPY ... FROM '/dev/blob'` with the `blob` option.
 *
 * PGlite runs in a worker thread (PGliteWorker.js), not in the caller's thread: Postgres in
 * WebAssembly runs synchronously on the thread that calls it, so in-process every statement held
 * up the loader's reading and decoding of the next batch; in a worker the two overlap on two
 * cores. It is still one session: requests go out one at a time and the worker answers them in
 * order. (PGlite's own `@electric-sql/pglite/worker` is for browsers: it needs Web Workers and
 * `navigator.locks`, which Node 20 lacks.)
 */
import { mkdirSync, statfsSync } from "node:fs"
import { Worker } from "node:worker_threads"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import { Database, DatabaseError, type DatabaseService, type Result, type Row } from "./Database.ts"
import { PGliteCopyBuffer } from "./PGliteCopyBuffer.ts"
import * as PGliteDataDir from "./PGliteDataDir.ts"
import type { Reply, Request, Started, WireError, WorkerData } from "./PGliteProtocol.ts"
import * as PGliteWasm from "./PGliteWasm.ts"
import { withSmallYoungGeneration } from "./PGliteWorkerHeap.ts"

/** The directory `salesintel-pg` uses when no database URL is given. */
export const defaultDirectory = "./.salesintel/pglite"

// The same file from src/ (vitest) and from dist/ (see PGliteWorker.js for why it is JavaScript).
const workerUrl = new URL("./PGliteWorker.js", import.meta.url)

/** A Postgres error from the worker, with pg-protocol's fields (`detail`, `code`, ...) back on it. */
export class PGliteError extends Error {
  readonly detail: string | undefined
  readonly code: string | undefined
  readonly fields: Readonly<Record<string, string>>
  constructor(error: WireError) {
    super(error.message)
    this.name = "PGliteError"
    this.fields = error.fields
    this.detail = error.fields.detail
    this.code = error.fields.code
  }
}

/**
 * Room a PGlite directory's disk must have before a request: Postgres in WebAssembly does not fail
 * when it cannot write its log (a 16 MB segment at a time), it spins for ever, holding the run. So
 * a bulk write (a batch's COPY) needs `copy` bytes free, any other statement `other` (the run's
 * own bookkeeping still fits after a refused batch), or it is refused, naming the directory.
 */
export interface DiskReserve {
  readonly copy: number
  readonly other: number
}

export const defaultReserve: DiskReserve = { copy: 64 * 2 ** 20, other: 24 * 2 ** 20 }

/** The disk holding a PGlite directory has too little room left to write safely. */
export class DiskFull extends Error {
  constructor(
    readonly directory: string,
    readonly free: number,
    readonly needed: number,
  ) {
    const mb = (bytes: number) => `${Math.floor(bytes / 2 ** 20)} MB`
    super(
      `the disk holding the PGlite directory ${directory} is full: ${mb(free)} free, ${mb(needed)} needed to write safely; free some space (or use another --pglite-dir) and run again: what committed stays`,
    )
    this.name = "DiskFull"
  }
}

/** Bytes free for this process on the disk holding `directory`. */
const freeBytes = (directory: string): number => {
  const stats = statfsSync(directory)
  return stats.bavail * stats.bsize
}

/** A request's answer: its rows, and for a "result" the whole result. */
type Answer = Extract<Reply, { readonly ok: true }>

interface Client {
  readonly ask: (
    request: DistributiveOmit<Request, "id">,
    transfer?: ReadonlyArray<ArrayBuffer>,
  ) => Promise<Answer>
  /** A COPY of `data`, carried to the worker in the buffer that comes back (PGliteCopyBuffer.ts). */
  readonly copy: (sql: string, data: Uint8Array) => Promise<Answer>
  /** Closes the database (waits for what is queued before), then ends the thread. Never fails. */
  readonly close: Effect.Effect<void>
}

// The threads started and not yet exited (tests check that none outlives its scope).
const running = new Set<Worker>()

/** How many PGlite worker threads are running. */
export const runningWorkers = (): number => running.size

type DistributiveOmit<T, K extends PropertyKey> = T extends unknown ? Omit<T, K> : never

/** Ends the thread (what it was running is abandoned); resolves once it has stopped. */
const stop = async (worker: Worker): Promise<void> => {
  await worker.terminate()
  running.delete(worker)
}

/** Starts a worker and waits for its `Started` message; the worker is ended if that fails. */
const start = (data: Omit<WorkerData, "module">): Effect.Effect<Worker, DatabaseError> =>
  Effect.flatMap(PGliteWasm.compiled, (module) => started({ ...data, module }))

const started = (data: WorkerData): Effect.Effect<Worker, DatabaseError> =>
  Effect.async<Worker, DatabaseError>((resume) => {
    const operation = `open PGlite in ${data.directory ?? "memory"}`
    const worker = withSmallYoungGeneration(() => new Worker(workerUrl, { workerData: data }))
    running.add(worker)
    worker.once("exit", () => running.delete(worker))
    // Never an unhandled 'error' event (it would throw in this thread); connect() reports them.
    worker.on("error", () => undefined)
    const detach = () => worker.off("message", onMessage).off("error", onError).off("exit", onExit)
    const fail = (cause: unknown) => {
      detach()
      void stop(worker).then(() => resume(Effect.fail(new DatabaseError({ operation, cause }))))
    }
    const onMessage = (message: Started) => {
      if (!message.started) return fail(new PGliteError(message.error))
      detach()
      resume(Effect.succeed(worker))
    }
    const onError = (error: Error) => fail(error)
    const onExit = (code: number) => fail(new Error(`the PGlite worker exited (code ${code})`))
    worker.on("message", onMessage).on("error", onError).on("exit", onExit)
    return Effect.promise(() => stop(worker))
  })

const connect = (
  worker: Worker,
  disk: { readonly directory: string; readonly reserve: DiskReserve } | undefined,
): Client => {
  const pending = new Map<number, { resolve: (answer: Answer) => void; reject: (e: Error) => void }>()
  let nextId = 0
  // Once the thread has died (an uncaught error in it, or it exited), every call fails with why.
  let dead: Error | undefined = worker.threadId === -1 ? new Error("the PGlite worker has exited") : undefined
  const die = (error: Error) => {
    dead ??= error
    for (const { reject } of pending.values()) reject(dead)
    pending.clear()
  }
  const copyBuffer = new PGliteCopyBuffer()
  worker.on("message", (reply: Reply) => {
    if (reply.ok && reply.buffer !== undefined) copyBuffer.returned(reply.buffer)
    const waiting = pending.get(reply.id)
    pending.delete(reply.id)
    if (reply.ok) waiting?.resolve(reply)
    else waiting?.reject(new PGliteError(reply.error))
  })
  worker.on("error", (error) => die(error))
  worker.on("exit", (code) => die(new Error(`the PGlite worker exited (code ${code})`)))
  const roomFor = (op: Request["op"]): DiskFull | undefined => {
    if (disk === undefined || op === "close") return undefined
    const needed = op === "copy" ? disk.reserve.copy : disk.reserve.other
    const free = freeBytes(disk.directory)
    return free < needed ? new DiskFull(disk.directory, free, needed) : undefined
  }
  const ask: Client["ask"] = (request, transfer) =>
    new Promise((resolve, reject) => {
      if (dead !== undefined) return reject(dead)
      const full = roomFor(request.op)
      if (full !== undefined) return reject(full)
      const id = nextId++
      pending.set(id, { resolve, reject })
      worker.postMessage({ ...request, id }, transfer)
    })
  return {
    ask,
    copy: (sql, data) => {
      const buffer = copyBuffer.fill(data)
      return ask({ op: "copy", sql, data: buffer }, [buffer])
    },
    close: Effect.promise(async () => {
      if (dead === undefined) await ask({ op: "close" }).catch(() => undefined)
      await stop(worker)
    }),
  }
}

const make = (client: Client): DatabaseService => ({
  kind: "pglite",
  query: (sql, params = []) =>
    Effect.tryPromise({
      try: async (): Promise<ReadonlyArray<Row>> => (await client.ask({ op: "query", sql, params })).rows,
      catch: (cause) => new DatabaseError({ operation: sql.slice(0, 80), cause }),
    }),
  queryResult: (sql) =>
    Effect.tryPromise({
      try: async (): Promise<Result> =>
        (await client.ask({ op: "result", sql })).result ?? { columns: [], types: [], rows: [] },
      catch: (cause) => new DatabaseError({ operation: sql.slice(0, 80), cause }),
    }),
  exec: (sql) =>
    Effect.tryPromise({
      try: () => client.ask({ op: "exec", sql }),
      catch: (cause) => new DatabaseError({ operation: sql.slice(0, 80), cause }),
    }).pipe(Effect.asVoid),
  copyIn: (table, columns, data) =>
    Effect.tryPromise({
      // Copied into the buffer that travels (`data` may be a view into a larger buffer, a batch's
      // or Node's shared pool, that moving would detach).
      try: () => client.copy(`COPY ${table} (${columns.join(", ")}) FROM '/dev/blob'`, data),
      catch: (cause) => new DatabaseError({ operation: `COPY into ${table}`, cause }),
    }).pipe(Effect.asVoid),
})

/**
 * Creates the database in `directory` if it has none (PGliteDataDir.inspect): a copy of the
 * prepared data directory when there is one, else PGlite's initdb in a thread of its own that
 * ends right after (initdb takes ~800 MB, returned at once instead of staying allocated in the
 * loading thread until a full GC; the process's peak RSS still includes it).
 */
const create = (directory: string, from: PGliteDataDir.Prepared | undefined) =>
  Effect.gen(function* () {
    const operation = `create a database in ${directory}`
    const needs = yield* Effect.try({
      try: () => PGliteDataDir.inspect(directory),
      catch: (cause) => new DatabaseError({ operation, cause }),
    })
    if (needs === "nothing") return
    yield* Effect.try({
      try: () => PGliteDataDir.markCreating(directory),
      catch: (cause) => new DatabaseError({ operation, cause }),
    })
    if (from !== undefined)
      yield* Effect.tryPromise({
        try: () => PGliteDataDir.copyInto(from, directory),
        catch: (cause) => new DatabaseError({ operation, cause }),
      })
    else
      yield* Effect.acquireUseRelease(
        start({ directory, initOnly: true }),
        () => Effect.void,
        (worker) => Effect.promise(() => stop(worker)),
      )
    yield* Effect.try({
      try: () => PGliteDataDir.markCreated(directory),
      catch: (cause) => new DatabaseError({ operation, cause }),
    })
  })

/** Where new databases come from. */
export interface LayerOptions {
  /**
   * The initialized data directory a new database is copied from. Default: the build's
   * (PGliteDataDir.prepared), when it matches the installed PGlite. Undefined: PGlite runs initdb.
   */
  readonly prepared?: PGliteDataDir.Prepared | undefined
  /** The room a request needs on the directory's disk (default `defaultReserve`). */
  readonly reserve?: DiskReserve | undefined
}

/**
 * A Database on a PGlite instance stored in `directory` (created if missing, as a copy of the
 * prepared data directory when there is one), or in memory when `directory` is undefined (loaded
 * from the prepared data directory's tar, or by initdb), in a worker thread. Closed, and the thread ended, with the scope.
 */
export const layer = (directory?: string, options?: LayerOptions): Layer.Layer<Database, DatabaseError> =>
  Layer.scoped(
    Database,
    Effect.gen(function* () {
      const from =
        options !== undefined && "prepared" in options ? options.prepared : PGliteDataDir.prepared()
      if (directory !== undefined) {
        yield* Effect.try({
          try: () => mkdirSync(directory, { recursive: true }),
          catch: (cause) => new DatabaseError({ operation: `create ${directory}`, cause }),
        })
        yield* create(directory, from)
      }
      const client = yield* Effect.acquireRelease(
        Effect.map(
          start({
            directory,
            initOnly: false,
            // In memory there is never a database yet: it is loaded in the session's own thread.
            loadDataDir: directory === undefined ? from?.tarball : undefined,
          }),
          (worker) =>
            connect(
              worker,
              directory === undefined
                ? undefined
                : { directory, reserve: options?.reserve ?? defaultReserve },
            ),
        ),
        (client) => client.close,
      )
      return make(client)
    }),
  )
