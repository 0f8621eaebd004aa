/**
 * Benchmark (npm run bench -- sync-throughput): `salesintel sync` of one contacts search of about
 * 20,000 contacts (job_departments=sale in the default sandbox dataset) into a fresh schema of the
 * local Postgres, the whole command timed as a user runs it, under `/usr/bin/time -v` for its peak
 * RSS. The sandbox runs in its own process with no added latency and no rate limit (and the
 * config lifts the client's), so the figure is the connector's own cost per record: requests,
 * decoding, mapping and loading, not the provider's speed.
 *
 * `BENCH_RUNS` (default 3) runs each command that many times and reports the median.
 * `BENCH_BASELINE_BIN=/path/to/other/checkout/packages/cli/bin/salesintel.js` also runs that
 * command, alternating with this checkout's run by run, and prints the ratio of the medians: the
 * way to compare a change against the code before it, measured in the same session.
 * `BENCH_EXCLUDE_FIELDS=personal_email,phone_numbers` also runs this checkout with those contact
 * fields excluded (contacts.exclude_fields), alternating in the same way: what excluding costs.
 */
import { spawnSync } from "node:child_process"
import { existsSync, mkdtempSync, rmSync, writeFileSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { fileURLToPath } from "node:url"
import pg from "pg"
import { post, startSandbox } from "./sandbox.ts"

// Compiled to bench/dist/: the packages are two folders up.
const thisBin = fileURLToPath(new URL("../../packages/cli/bin/salesintel.js", import.meta.url))
const baselineBin = process.env.BENCH_BASELINE_BIN
const runs = Number(process.env.BENCH_RUNS ?? 3)
const excludeFields = process.env.BENCH_EXCLUDE_FIELDS?.split(",").filter((name) => name.length > 0)
const url = process.env.DATABASE_URL || "postgres://postgres@127.0.0.1:5432/test"
const schema = "salesintel_bench_sync"
const time = "/usr/bin/time"

const dropSchema = async () => {
  const client = new pg.Client({ connectionString: url })
  await client.connect()
  try {
    await client.query(`DROP SCHEMA IF EXISTS ${schema} CASCADE`)
  } finally {
    await client.end()
  }
}

interface Run {
  readonly seconds: number
  readonly peakRssMb: number
  readonly contacts: number
}

/** One sync into a fresh schema, the sandbox's counters reset first. */
const syncOnce = async (bin: string, sandboxUrl: string, configPath: string): Promise<Run> => {
  await post(`${sandboxUrl}/_sandbox/reset`)
  await dropSchema()
  const command = [
    process.execPath,
    bin,
    "sync",
    "--config",
    configPath,
    "--database-url",
    url,
    "--schema",
    schema,
  ]
  const withTime = existsSync(time)
  const started = performance.now()
  const result = spawnSync(withTime ? time : command[0]!, withTime ? ["-v", ...command] : command.slice(1), {
    encoding: "utf8",
    maxBuffer: 64 * 1024 * 1024,
  })
  const seconds = (performance.now() - started) / 1000
  if (result.status !== 0)
    throw new Error(`sync failed (${result.status}):\n${result.stdout}\n${result.stderr}`)
  const rss = /Maximum resident set size \(kbytes\): (\d+)/.exec(result.stderr)
  const contacts = /contacts\s+(\d+) records/.exec(result.stdout)
  return {
    seconds,
    peakRssMb: rss?.[1] === undefined ? Number.NaN : Number(rss[1]) / 1024,
    contacts: Number(contacts?.[1] ?? 0),
  }
}

const median = (values: ReadonlyArray<number>): number => {
  const sorted = [...values].sort((a, b) => a - b)
  const middle = Math.floor(sorted.length / 2)
  return sorted.length % 2 === 1 ? sorted[middle]! : (sorted[middle - 1]! + sorted[middle]!) / 2
}

const report = (label: string, results: ReadonlyArray<Run>) => {
  const seconds = median(results.map((run) => run.seconds))
  const contacts = results[0]?.contacts ?? 0
  console.log(
    `${label.padEnd(12)} ${String(contacts).padStart(8)} ${seconds.toFixed(2).padStart(9)} ${(contacts / seconds).toFixed(0).padStart(10)} ${median(
      results.map((run) => run.peakRssMb),
    )
      .toFixed(0)
      .padStart(8)} MB   (runs: ${results.map((run) => run.seconds.toFixed(2)).join(", ")} s)`,
  )
  return seconds
}

const main = async () => {
  if (baselineBin !== undefined && !existsSync(baselineBin)) throw new Error(`no ${baselineBin}`)
  const { url: sandboxUrl, child } = await startSandbox(["--requests-per-minute", "0"])
  const directory = mkdtempSync(join(tmpdir(), "salesintel-bench-sync-"))
  try {
    const configPath = join(directory, "config.json")
    const excludingPath = join(directory, "config-excluding.json")
    const config = (exclude: ReadonlyArray<string> | undefined) =>
      JSON.stringify({
        api_key: "sandbox-full",
        base_url: sandboxUrl,
        credit_budget: 1_000_000,
        requests_per_minute: 1_000_000,
        contacts: {
          searches: [{ name: "sales", filters: { job_departments: ["sale"] } }],
          ...(exclude === undefined ? {} : { exclude_fields: exclude }),
        },
      })
    writeFileSync(configPath, config(undefined))
    writeFileSync(excludingPath, config(excludeFields))
    console.log(
      `salesintel sync of one ~20,000-contact search into Postgres (${runs} runs each, medians; sandbox without latency or rate limit)`,
    )
    console.log("command       contacts   seconds  contacts/s  peak RSS")
    const current: Array<Run> = []
    const baseline: Array<Run> = []
    const excluding: Array<Run> = []
    // A warm-up run of each, uncounted: the first start reads every module from disk.
    await syncOnce(thisBin, sandboxUrl, configPath)
    if (baselineBin !== undefined) await syncOnce(baselineBin, sandboxUrl, configPath)
    for (let run = 0; run < runs; run++) {
      current.push(await syncOnce(thisBin, sandboxUrl, configPath))
      if (baselineBin !== undefined) baseline.push(await syncOnce(baselineBin, sandboxUrl, configPath))
      if (excludeFields !== undefined) excluding.push(await syncOnce(thisBin, sandboxUrl, excludingPath))
    }
    const currentSeconds = report("this", current)
    if (baselineBin !== undefined) {
      const baselineSeconds = report("baseline", baseline)
      console.log(`this / baseline, median seconds: ${(currentSeconds / baselineSeconds).toFixed(3)}`)
    }
    if (excludeFields !== undefined) {
      const excludingSeconds = report("excluding", excluding)
      console.log(
        `excluding ${excludeFields.join(", ")} / this, median seconds: ${(excludingSeconds / currentSeconds).toFixed(3)}`,
      )
    }
  } finally {
    child.kill()
    rmSync(directory, { recursive: true, force: true })
    await dropSchema()
  }
}

await main()
