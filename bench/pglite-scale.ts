/**
 * Benchmark (npm run bench -- pglite-scale): embedded PGlite beside Postgres at a new user's size
 * and a customer's. For one contacts search of about 20,000 and about 150,000 contacts
 * (job_departments=sale, the sandbox at five times that without latency or rate limit, the
 * client's limit lifted), `salesintel sync` into a fresh schema of the local Postgres and into a
 * fresh PGlite directory, as a user runs it (sync-run.ts): wall time, peak RSS, and on disk the
 * PGlite directory (its pg_wal apart) against the schema's tables in Postgres
 * (pg_total_relation_size: tables, indexes, TOAST). Then the ratios against the aims: PGlite's
 * peak RSS at most 1.5x Postgres's and under 300 MB, its directory at most 1.3x the data in
 * Postgres.
 *
 * `BENCH_SIZES` (default `20000,150000`): the wanted search sizes.
 */
import { existsSync, mkdtempSync, rmSync, writeFileSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { fileURLToPath } from "node:url"
import { startSandbox } from "./sandbox.ts"
import { type Run, salesSearchConfig, syncOnce, time } from "./sync-run.ts"

// Compiled to bench/dist/: the packages are two folders up.
const bin = fileURLToPath(new URL("../../packages/cli/bin/salesintel.js", import.meta.url))
const sizes = (process.env.BENCH_SIZES ?? "20000,150000").split(",").map(Number)
const schemaFor = (size: number) => `salesintel_bench_pglite_scale_${size}`
const aims = { rssRatio: 1.5, rssMb: 300, diskRatio: 1.3 }

const line = (target: string, run: Run) =>
  console.log(
    `  ${target.padEnd(9)} ${String(run.contacts).padStart(8)} ${run.seconds.toFixed(1).padStart(8)} s ${run.cpuSeconds.toFixed(1).padStart(7)} s ${run.peakRssMb.toFixed(0).padStart(6)} MB ${run.diskMb.toFixed(0).padStart(7)} MB${target === "pglite" ? ` (pg_wal ${run.walMb.toFixed(0)} MB)` : " (tables, indexes, TOAST)"}`,
  )

const verdict = (ok: boolean) => (ok ? "met" : "MISSED")

const compare = (postgres: Run, pglite: Run) => {
  const rss = pglite.peakRssMb / postgres.peakRssMb
  const disk = pglite.diskMb / postgres.diskMb
  console.log(
    `  PGlite/Postgres: wall ${(pglite.seconds / postgres.seconds).toFixed(2)}x, peak RSS ${rss.toFixed(2)}x (aim <= ${aims.rssRatio}x: ${verdict(rss <= aims.rssRatio)}; under ${aims.rssMb} MB: ${verdict(pglite.peakRssMb < aims.rssMb)}), disk ${disk.toFixed(2)}x (aim <= ${aims.diskRatio}x: ${verdict(disk <= aims.diskRatio)})`,
  )
}

const main = async () => {
  if (!existsSync(time)) throw new Error(`${time} is needed for the peak RSS (GNU time)`)
  console.log(
    "`salesintel sync` of one job_departments=sale search, the command's node flags, the rate limit lifted; a fresh schema / PGlite directory each run",
  )
  for (const size of sizes) {
    const { url: sandboxUrl, child } = await startSandbox([
      "--requests-per-minute",
      "0",
      "--contacts",
      String(size * 5),
      "--companies",
      String(Math.max(10_000, size / 2)),
    ])
    const directory = mkdtempSync(join(tmpdir(), "salesintel-bench-pglite-scale-"))
    try {
      const configPath = join(directory, "config.json")
      writeFileSync(configPath, JSON.stringify(salesSearchConfig(sandboxUrl, 1_000_000)))
      console.log(
        `\n~${size.toLocaleString("en-US")} contacts   contacts      wall      CPU  peak RSS    on disk`,
      )
      const postgres = await syncOnce(bin, sandboxUrl, configPath, "postgres", schemaFor(size))
      line("postgres", postgres)
      const pglite = await syncOnce(bin, sandboxUrl, configPath, "pglite", schemaFor(size))
      line("pglite", pglite)
      compare(postgres, pglite)
    } finally {
      child.kill()
      rmSync(directory, { recursive: true, force: true })
    }
  }
}

await main()
