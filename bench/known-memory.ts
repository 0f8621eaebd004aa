/**
 * Benchmark (npm run bench -- known-memory): the peak RSS of `salesintel sync` (the command's
 * node flags, under `/usr/bin/time -v`) enriching 100,000 known contacts from a CSV file
 * (`contacts.known_file`, one email a row), against the same sync of a search of about the same
 * size (job_departments=sale, as sync-memory), into a fresh schema of the local Postgres. The
 * known contacts are looked up and bought a chunk at a time (streams/contacts/Known.ts): the aim
 * is a peak no higher than the search's, whatever the file's size.
 *
 * The sandbox runs in its own process with 500,000 contacts, without latency or rate limit; the
 * client's limit is lifted too (`BENCH_RATE`, default 1,000,000 a minute). `BENCH_KNOWN` (default
 * 100000): how many emails the file holds; `BENCH_SKIP_SEARCH=1` runs the known contacts alone;
 * `BENCH_KNOWN_KIND=match_id` names them by match id instead (looked up 50 to a free request, so the
 * run's time is the connector's own, not the sandbox's search for each email).
 */
import { existsSync, mkdtempSync, rmSync, writeFileSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { fileURLToPath } from "node:url"
import { Dataset } from "@salesintel/sandbox"
import { startSandbox } from "./sandbox.ts"
import { salesSearchConfig, syncOnce, time } from "./sync-run.ts"

const thisBin = fileURLToPath(new URL("../../packages/cli/bin/salesintel.js", import.meta.url))
const known = Number(process.env.BENCH_KNOWN ?? 100_000)
const rate = Number(process.env.BENCH_RATE ?? 1_000_000)
const contacts = 500_000
const companies = 50_000

const main = async () => {
  if (!existsSync(time)) throw new Error(`${time} is needed for the peak RSS (GNU time)`)
  const { url: sandboxUrl, child } = await startSandbox([
    "--requests-per-minute",
    "0",
    "--contacts",
    String(contacts),
    "--companies",
    String(companies),
  ])
  const directory = mkdtempSync(join(tmpdir(), "salesintel-bench-known-"))
  try {
    // The sandbox's own dataset (the same seed and sizes), for emails it knows.
    const dataset = Dataset.build({ seed: 42, contacts, companies })
    const kind = process.env.BENCH_KNOWN_KIND === "match_id" ? "match_id" : "email"
    const emails = new Set<string>()
    for (let index = 0; emails.size < known && index < contacts; index++)
      emails.add(kind === "email" ? dataset.contact(index).email : dataset.contact(index).match_id)
    const file = join(directory, "known.csv")
    writeFileSync(file, `${kind}\n${[...emails].join("\n")}\n`)
    const search = salesSearchConfig(sandboxUrl, rate)
    const knownConfig = { ...search, contacts: { known_file: file } }
    const searchPath = join(directory, "search.json")
    const knownPath = join(directory, "known.json")
    writeFileSync(searchPath, JSON.stringify(search))
    writeFileSync(knownPath, JSON.stringify(knownConfig))
    console.log(
      `peak RSS of \`salesintel sync\` into Postgres (sandbox of ${contacts.toLocaleString("en-US")} contacts, no latency or rate limit; client at ${rate.toLocaleString("en-US")} requests/min)`,
    )
    console.log("case                                contacts  seconds  peak RSS")
    const known100k = await syncOnce(thisBin, sandboxUrl, knownPath, "postgres", "salesintel_bench_known")
    console.log(
      `${`known_file, ${emails.size.toLocaleString("en-US")} ${kind === "email" ? "emails" : "match ids"}`.padEnd(34)} ${String(known100k.contacts).padStart(9)} ${known100k.seconds.toFixed(1).padStart(8)} ${known100k.peakRssMb.toFixed(0).padStart(6)} MB`,
    )
    if (process.env.BENCH_SKIP_SEARCH === "1") return
    const searched = await syncOnce(thisBin, sandboxUrl, searchPath, "postgres", "salesintel_bench_known")
    console.log(
      `${"search job_departments=sale".padEnd(34)} ${String(searched.contacts).padStart(9)} ${searched.seconds.toFixed(1).padStart(8)} ${searched.peakRssMb.toFixed(0).padStart(6)} MB`,
    )
  } finally {
    child.kill()
    rmSync(directory, { recursive: true, force: true })
  }
}

await main()
