/**
 * Benchmark (npm run bench -- sync-memory): the peak RSS of `salesintel sync`, as a user runs it
 * (the command's file with the node flags of its shebang), under `/usr/bin/time -v`, for one
 * contacts search of about 20,000 and about 100,000 contacts, into a fresh schema of the local
 * Postgres and into a fresh PGlite directory (so the PGlite figure includes creating the
 * database). Aim: under 200 MB each, whatever the result size.
 *
 * The search is job_departments=sale (a fifth of the sandbox's contacts): the sandbox runs in
 * its own process with five times the wanted contacts, without latency or rate limit. The client
 * keeps the provider's limit of 1,800 requests a minute, as a user's sync does; `BENCH_RATE`
 * (requests a minute) lifts it, e.g. `BENCH_RATE=1000000`: the run is then as fast as this machine
 * allows, and the pages in flight (which follow rate x latency) reach the `concurrency` bound,
 * the most a sync ever holds.
 *
 * `BENCH_SIZES` (default `20000,100000`): the wanted search sizes. `BENCH_TARGETS` (default
 * `postgres,pglite`). `BENCH_BASELINE_BIN=/path/to/other/checkout/packages/cli/bin/salesintel.js`
 * also runs that command (with its own shebang's flags) right after this checkout's, each case,
 * to compare with the code before a change in the same session.
 */
import { existsSync, mkdtempSync, rmSync, writeFileSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { fileURLToPath } from "node:url"
import { startSandbox } from "./sandbox.ts"
import { type Run, salesSearchConfig, syncOnce, time } from "./sync-run.ts"

// Compiled to bench/dist/: the packages are two folders up.
const thisBin = fileURLToPath(new URL("../../packages/cli/bin/salesintel.js", import.meta.url))
const baselineBin = process.env.BENCH_BASELINE_BIN
const sizes = (process.env.BENCH_SIZES ?? "20000,100000").split(",").map(Number)
const targets = (process.env.BENCH_TARGETS ?? "postgres,pglite").split(",")
/** Requests a minute the client may make: the provider's 1,800 unless BENCH_RATE lifts it. */
const rate = Number(process.env.BENCH_RATE ?? 1_800)
// One schema per size: two invocations with different BENCH_SIZES can run side by side.
const schemaFor = (size: number) => `salesintel_bench_memory_${size}`
const aimMb = 200

const row = (size: number, target: string, label: string, run: Run) =>
  console.log(
    `${String(size).padStart(7)}  ${target.padEnd(9)} ${label.padEnd(9)} ${String(run.contacts).padStart(8)} ${run.seconds.toFixed(1).padStart(8)} ${run.peakRssMb.toFixed(0).padStart(8)} MB  ${run.peakRssMb < aimMb ? "under" : "OVER"} ${aimMb} MB`,
  )

const main = async () => {
  if (!existsSync(time)) throw new Error(`${time} is needed for the peak RSS (GNU time)`)
  if (baselineBin !== undefined && !existsSync(baselineBin)) throw new Error(`no ${baselineBin}`)
  console.log(
    `peak RSS of \`salesintel sync\` (the command's node flags; one job_departments=sale search; sandbox without latency or rate limit, the client at ${rate.toLocaleString("en-US")} requests/min; fresh schema / fresh PGlite directory each run)`,
  )
  console.log("   size  target    command   contacts  seconds  peak RSS")
  for (const size of sizes) {
    const { url: sandboxUrl, child } = await startSandbox([
      "--requests-per-minute",
      "0",
      "--contacts",
      String(size * 5),
      "--companies",
      String(Math.max(10_000, size / 2)),
    ])
    const directory = mkdtempSync(join(tmpdir(), "salesintel-bench-memory-"))
    try {
      const configPath = join(directory, "config.json")
      writeFileSync(configPath, JSON.stringify(salesSearchConfig(sandboxUrl, rate)))
      for (const target of targets) {
        const schema = schemaFor(size)
        row(size, target, "this", await syncOnce(thisBin, sandboxUrl, configPath, target, schema))
        if (baselineBin !== undefined)
          row(size, target, "baseline", await syncOnce(baselineBin, sandboxUrl, configPath, target, schema))
      }
    } finally {
      child.kill()
      rmSync(directory, { recursive: true, force: true })
    }
  }
}

await main()
