/**
 * PGlite's WebAssembly, compiled once per process and handed to every PGlite thread
 * (PGliteDatabase.ts). Each thread would otherwise compile the 9 MB module again, and V8 would
 * optimise its hot functions again: opening a database took ~600 ms of CPU that way, ~250 ms with
 * the module shared (the compiled code is shared between threads; each instance has its own
 * memory). A process that opens PGlite more than once (the tests; `sql` after `sync` in one
 * process) pays the compilation once.
 */
import { readFile } from "node:fs/promises"
import { createRequire } from "node:module"
import { dirname, join } from "node:path"
import * as Effect from "effect/Effect"

let compiling: Promise<WebAssembly.Module | undefined> | undefined

const compile = async (): Promise<WebAssembly.Module | undefined> => {
  try {
    const entry = createRequire(import.meta.url).resolve("@electric-sql/pglite")
    return await WebAssembly.compile(await readFile(join(dirname(entry), "pglite.wasm")))
  } catch {
    // Not where this PGlite keeps it: PGlite finds and compiles its own, as it does by default.
    return undefined
  }
}

/** The compiled module, or undefined when it could not be read (PGlite then loads its own). */
export const compiled: Effect.Effect<WebAssembly.Module | undefined> = Effect.promise(() => {
  compiling ??= compile()
  return compiling
})
