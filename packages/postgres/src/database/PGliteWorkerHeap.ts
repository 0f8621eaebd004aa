/**
 * The PGlite worker's young generation, kept small. The worker's JavaScript is small (PGlite's
 * glue and one request at a time); what it holds lives in the WebAssembly memory. Yet its young
 * generation grows to what the process's `--max-semi-space-size` allows: 8 MB per semi-space
 * under the commands' node flags (there for the loading thread), and the worker's new space
 * reached 9.4 MB of a sync's peak where 2 MB serve it (bench/README.md, pglite-scale).
 *
 * Node's documented knob, the Worker's `resourceLimits.maxYoungGenerationSizeMb`, does nothing
 * here: V8 lets the process-wide flag override an isolate's constraints. V8 reads the flag once,
 * when an isolate is made, so the worker is started with the flag at `workerSemiSpaceMb` and the
 * flag is put back as soon as the worker's isolate exists (the worker is online, or failed):
 * the loading thread's heap, made at start, is not touched.
 */
import { setFlagsFromString } from "node:v8"
import type { Worker } from "node:worker_threads"

/** The worker's semi-space, in MB (the young generation holds two). */
export const workerSemiSpaceMb = 1

const flag = /--max[-_]semi[-_]space[-_]size(?:=|\s+)(\d+)/

/**
 * The process's own `--max-semi-space-size` in MB, as given on the command line or in
 * NODE_OPTIONS (the last one wins, as in V8); 0, V8's "not set", when neither gives it.
 */
export const processSemiSpaceMb = (
  execArgv: ReadonlyArray<string> = process.execArgv,
  nodeOptions: string = process.env.NODE_OPTIONS ?? "",
): number => {
  const given = [nodeOptions, execArgv.join(" ")].flatMap((text) =>
    [...text.matchAll(new RegExp(flag, "g"))].map((match) => Number(match[1])),
  )
  return given.at(-1) ?? 0
}

/** `start()`'s worker, its isolate made with a `workerSemiSpaceMb` semi-space. */
export const withSmallYoungGeneration = (start: () => Worker): Worker => {
  const restore = () => setFlagsFromString(`--max-semi-space-size=${processSemiSpaceMb()}`)
  setFlagsFromString(`--max-semi-space-size=${workerSemiSpaceMb}`)
  let worker: Worker
  try {
    worker = start()
  } catch (error) {
    restore()
    throw error
  }
  let restored = false
  const once = () => {
    if (restored) return
    restored = true
    worker.off("online", once).off("error", once).off("exit", once)
    restore()
  }
  worker.once("online", once).once("error", once).once("exit", once)
  return worker
}
