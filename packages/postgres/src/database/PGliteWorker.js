// @ts-check
/**
 * The worker thread that owns the PGlite instance of PGliteDatabase.ts. PGlite runs Postgres
 * (WebAssembly) synchronously on the thread that calls it, so in the main thread every statement
 * stopped the loader's JSON decoding; here the database and the decoding use one core each.
 *
 * It answers the main thread's requests (PGliteProtocol.ts) one at a time, in arrival order, on
 * its one PGlite session (the staging tables are session-local temp tables, and a load's
 * transaction spans many statements).
 *
 * Plain JavaScript, type-checked through JSDoc (`allowJs`/`checkJs`), so that the same file runs
 * from src/ under vitest and from dist/: Node 20 cannot start a worker from a .ts file.
 */
import { readFileSync } from "node:fs"
import { parentPort, workerData } from "node:worker_threads"
import { PGlite } from "@electric-sql/pglite"

/** @typedef {import("./PGliteProtocol.ts").Request} Request */
/** @typedef {import("./PGliteProtocol.ts").Reply} Reply */
/** @typedef {import("./PGliteProtocol.ts").Started} Started */
/** @typedef {import("./PGliteProtocol.ts").WireError} WireError */
/** @typedef {import("./PGliteProtocol.ts").WorkerData} WorkerData */

/**
 * Postgres settings on top of PGlite's defaults. shared_buffers: PGlite's initdb picks 128MB,
 * which ends up resident in the WebAssembly memory (and that memory never shrinks); 4MB keeps
 * the memory at its 128 MB minimum, and less of it touched, at no measurable cost in speed (the
 * OS page cache behind the data directory does the caching). temp_buffers: the staging tables
 * are temporary, and a batch filled all 8 MB of the default; 2MB spills the rest to the same
 * page cache. Together they took the memory a 150,000-contact sync touched from 31 to 22 MB.
 * See the README, "What PGlite holds".
 *
 * min_wal_size/max_wal_size: after a checkpoint Postgres keeps old WAL segments for reuse, as
 * many as it expects the next checkpoint to need, up to max_wal_size (1GB by default): after a
 * 150,000-contact sync pg_wal kept 401 MB beside a 356 MB database. 32MB (two 16 MB segments,
 * the least Postgres accepts) keeps pg_wal at ~32 MB once a checkpoint has run.
 */
const settings = ["shared_buffers=4MB", "temp_buffers=2MB", "min_wal_size=32MB", "max_wal_size=32MB"]

/**
 * WAL written since the last checkpoint that makes the worker run one, between two requests.
 * PGlite runs Postgres in single-user mode, where nothing starts a checkpoint as WAL grows (the
 * checkpointer process does that on a server), so without one pg_wal held all a run wrote until
 * the database closed (the shutdown checkpoint).
 */
const checkpointEvery = 64 * 2 ** 20

// The fields of pg-protocol's DatabaseError worth keeping (not query/params/queryOptions: the
// params of a batch are large, and the options hold the COPY data).
const errorFields = [
  "severity",
  "code",
  "detail",
  "hint",
  "position",
  "internalPosition",
  "internalQuery",
  "where",
  "schema",
  "table",
  "column",
  "dataType",
  "constraint",
  "routine",
]

/**
 * @param {unknown} error
 * @returns {WireError}
 */
const toWire = (error) => {
  /** @type {Record<string, string>} */
  const fields = {}
  if (typeof error === "object" && error !== null)
    for (const name of errorFields) {
      const value = /** @type {Record<string, unknown>} */ (error)[name]
      if (typeof value === "string") fields[name] = value
    }
  return { message: error instanceof Error ? error.message : String(error), fields }
}

const port = parentPort
if (port === null) throw new Error("PGliteWorker.js runs only as a worker thread")
const { directory, initOnly, loadDataDir, module } = /** @type {WorkerData} */ (workerData)

/** @returns {Promise<PGlite | undefined>} undefined when it failed (and the main thread was told) */
const open = async () => {
  try {
    return await PGlite.create(directory, {
      // Compiled once in the process, not again in each thread (PGliteWasm.ts).
      ...(module === undefined ? {} : { pgliteWasmModule: module }),
      startParams: [...PGlite.defaultStartParams, ...settings.flatMap((setting) => ["-c", setting])],
      // The MIME type tells PGlite to gunzip it.
      ...(loadDataDir === undefined
        ? {}
        : { loadDataDir: new Blob([readFileSync(loadDataDir)], { type: "application/x-gzip" }) }),
    })
  } catch (error) {
    port.postMessage(/** @type {Started} */ ({ started: false, error: toWire(error) }))
    return undefined
  }
}
const opened = await open()
if (opened !== undefined && initOnly) await opened.close()
// After a failure (or an init-only run) nothing listens, and the thread ends by itself.
const db = initOnly ? undefined : opened

/**
 * @param {Request} request
 * @returns {Promise<Reply>}
 */
const run = async (request) => {
  if (db === undefined) throw new Error("PGlite is not open")
  switch (request.op) {
    case "query":
      return { id: request.id, ok: true, rows: (await db.query(request.sql, [...request.params])).rows }
    case "result": {
      // Every value as Postgres's text: PGlite's parsers would make a date a Date (shown in the
      // process's time zone), an interval or an array something else than psql shows.
      /** @type {Record<string, (text: string) => string>} */
      const asText = Object.fromEntries(Object.keys(db.parsers).map((type) => [type, (text) => text]))
      const result = await db.query(request.sql, [], { rowMode: "array", parsers: asText })
      const columns = result.fields.map((field) => field.name)
      const types = result.fields.map((field) => field.dataTypeID)
      const rows = /** @type {Array<Array<string | null>>} */ (result.rows)
      return { id: request.id, ok: true, rows: [], result: { columns, types, rows } }
    }
    case "exec":
      await db.exec(request.sql)
      return { id: request.id, ok: true, rows: [] }
    case "copy": {
      // PGlite reads a blob only through `arrayBuffer()` (_handleBlob, 0.5.16): given the buffer
      // itself, no Blob copy and no copy of that copy are made (PGliteCopyBuffer.ts). The buffer
      // goes back with the reply.
      const data = request.data
      const blob = /** @type {Blob} */ (/** @type {unknown} */ ({ arrayBuffer: async () => data }))
      await db.query(request.sql, [], { blob })
      return { id: request.id, ok: true, rows: [], buffer: data }
    }
    case "close":
      await db.close()
      return { id: request.id, ok: true, rows: [] }
  }
}

/** The WAL position of the last checkpoint this worker ran (undefined: none yet). */
let checkpointedAt = /** @type {string | undefined} */ (undefined)

/**
 * Runs a CHECKPOINT when `checkpointEvery` bytes of WAL have been written since the last one (or
 * since the database opened). Inside a transaction too: a checkpoint only flushes what is written,
 * it does not need the transaction to end. Errors are ignored: in a failed transaction every
 * statement fails until its ROLLBACK, and the next request checks again.
 * @param {PGlite} database
 */
const checkpointIfDue = async (database) => {
  try {
    const [row] = /** @type {Array<{ lsn: string; written: string }>} */ (
      (
        await database.query(
          "SELECT pg_current_wal_insert_lsn()::text AS lsn, pg_wal_lsn_diff(pg_current_wal_insert_lsn(), coalesce($1::pg_lsn, (SELECT redo_lsn FROM pg_control_checkpoint())))::text AS written",
          [checkpointedAt ?? null],
        )
      ).rows
    )
    if (row === undefined || Number(row.written) < checkpointEvery) return
    await database.exec("CHECKPOINT")
    checkpointedAt = row.lsn
  } catch {
    // See above: the next request checks again.
  }
}

/**
 * A young-generation collection after each request, where the process allows it (`--expose-gc`,
 * as the commands run node): what a request leaves dead here is mostly buffers (PGlite's receive
 * buffer replaced after a large result, its copies of the output), whose bytes sit outside this
 * thread's small JavaScript heap, so V8 collected them only every few tens of megabytes. A minor
 * collection of this heap takes well under a millisecond.
 */
const collectGarbage = () => {
  if (typeof globalThis.gc === "function") globalThis.gc({ type: "minor" })
}

// One request at a time, in arrival order (PGlite's own mutex would also queue them, but the
// order must not depend on that).
let queue = Promise.resolve()
if (db !== undefined)
  port.on("message", (/** @type {Request} */ request) => {
    queue = queue.then(async () => {
      /** @type {Reply} */
      let reply
      try {
        reply = await run(request)
      } catch (error) {
        reply = { id: request.id, ok: false, error: toWire(error) }
      }
      try {
        port.postMessage(reply, reply.ok && reply.buffer !== undefined ? [reply.buffer] : [])
      } catch (error) {
        // A value structured clone cannot carry (none of PGlite's parsed types should be one).
        port.postMessage(/** @type {Reply} */ ({ id: request.id, ok: false, error: toWire(error) }))
      }
      // After the reply: the caller goes on while the checkpoint runs (the next request waits).
      if (request.op !== "close") await checkpointIfDue(db)
      collectGarbage()
    })
  })
if (opened !== undefined) port.postMessage(/** @type {Started} */ ({ started: true }))
