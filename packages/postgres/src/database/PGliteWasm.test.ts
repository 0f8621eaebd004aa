import * as Effect from "effect/Effect"
import { describe, expect, it } from "vitest"
import * as PGliteWasm from "./PGliteWasm.ts"

describe("PGliteWasm (PGlite's WebAssembly, compiled once per process)", () => {
  it("compiles the installed PGlite's module once, and hands every caller that one", async () => {
    const [first, second] = await Effect.runPromise(
      Effect.all([PGliteWasm.compiled, PGliteWasm.compiled], { concurrency: 2 }),
    )
    expect(first).toBeInstanceOf(WebAssembly.Module)
    expect(second).toBe(first)
    // Postgres's own entry points: the module is PGlite's, not some other file's.
    const exports = WebAssembly.Module.exports(first as WebAssembly.Module).map((entry) => entry.name)
    expect(exports).toEqual(expect.arrayContaining(["TopMemoryContext", "MemoryContextAlloc"]))
  })
})
