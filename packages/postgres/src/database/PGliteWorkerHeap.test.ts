import { Worker } from "node:worker_threads"
import { describe, expect, it } from "vitest"
import { processSemiSpaceMb, withSmallYoungGeneration, workerSemiSpaceMb } from "./PGliteWorkerHeap.ts"

// A worker that keeps tens of thousands of young objects alive across scavenges, which makes V8
// grow its new space as far as it may, and reports the new space it ran at, in MB: the median of
// its samples. Not the largest: Node 24's V8 holds extra pages for a moment during a scavenge
// (a 1 MB semi-space's new space peaked anywhere from 2 to 7 MB over 100 runs, its median 2).
const grower = `
const { parentPort } = require("node:worker_threads")
const v8 = require("node:v8")
let kept = []
const sizes = []
for (let i = 0; i < 300000; i++) {
  kept.push({ i, text: "x" + i })
  if (kept.length > 30000) kept = []
  if (i % 1000 === 0) {
    const space = v8.getHeapSpaceStatistics().find((s) => s.space_name === "new_space")
    sizes.push(space.space_size)
  }
}
sizes.sort((a, b) => a - b)
parentPort.postMessage(sizes[sizes.length >> 1] / 2 ** 20)`

const newSpace = (worker: Worker) =>
  new Promise<number>((resolve, reject) => {
    worker.once("error", reject)
    worker.once("message", (mb: number) => {
      resolve(mb)
      void worker.terminate()
    })
  })

describe("PGliteWorkerHeap", () => {
  it("reads the process's --max-semi-space-size from its arguments and NODE_OPTIONS, the last winning", () => {
    expect(processSemiSpaceMb([], "")).toBe(0)
    expect(processSemiSpaceMb(["--max-semi-space-size=8", "--expose-gc"], "")).toBe(8)
    expect(processSemiSpaceMb(["--max_semi_space_size", "16"], "")).toBe(16)
    expect(processSemiSpaceMb(["--max-semi-space-size=8"], "--max-semi-space-size=4")).toBe(8)
    expect(processSemiSpaceMb([], "--trace-gc --max-semi-space-size=4")).toBe(4)
    expect(processSemiSpaceMb(["--min-semi-space-size=2"], "")).toBe(0)
  })

  it("starts the worker with a small young generation, and leaves the next workers theirs", async () => {
    const small = await newSpace(withSmallYoungGeneration(() => new Worker(grower, { eval: true })))
    // Two semi-spaces (Node 24's V8 reports a quarter of a megabyte more at times).
    expect(small).toBeLessThanOrEqual(3 * workerSemiSpaceMb)
    // The flag is back: a worker started after it grows its new space as V8 lets it.
    const plain = await newSpace(new Worker(grower, { eval: true }))
    expect(plain).toBeGreaterThan(6 * workerSemiSpaceMb)
  })

  it("puts the flag back when the worker fails to start", async () => {
    const failing = withSmallYoungGeneration(() => new Worker("throw new Error('no')", { eval: true }))
    failing.on("error", () => undefined)
    await new Promise((resolve) => failing.once("exit", resolve))
    const plain = await newSpace(new Worker(grower, { eval: true }))
    expect(plain).toBeGreaterThan(6 * workerSemiSpaceMb)
  })
})
