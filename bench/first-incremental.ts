/**
 * Benchmark (npm run bench -- first-incremental): the first incremental read of a search with an
 * empty state against the full-refresh read of the same search (13,985 contacts of
 * job_departments=enrd, through partitions), default config, at 100 ms of sandbox latency
 * (BENCH_LATENCY_MS): requests per record and records per second, from the sandbox's counts. For
 * reference, the free listing's path of the same read (what a state holding one fresh contact
 * outside the search makes it take): preview pages walked, then purchases by match_ids.
 */
import { benchSearch, percentOfCeiling, type ReadOutcome, readContacts } from "./contacts-read.ts"
import { startSandbox } from "./sandbox.ts"

const latencyMs = Number(process.env.BENCH_LATENCY_MS ?? 100)
const today = Math.floor(Date.now() / 86_400_000)

const main = async () => {
  const { url, child } = await startSandbox([])
  try {
    const fullRefresh = await readContacts(url, { syncMode: "full_refresh", latencyMs })
    const direct = await readContacts(url, { syncMode: "incremental", latencyMs })
    const listing = await readContacts(url, {
      syncMode: "incremental",
      latencyMs,
      state: { known: { [String(today)]: ["m-bought-elsewhere"] } },
    })
    const rerun = await readContacts(url, { syncMode: "incremental", latencyMs, state: direct.state })
    const perSecond = (outcome: ReadOutcome) => outcome.records / outcome.seconds
    console.log(
      `contacts read of ${JSON.stringify(benchSearch.filters)}, default config, sandbox latency ${latencyMs} ms, limit 1,800 req/min`,
    )
    console.log(
      "| read | records | credits | requests | requests per record | seconds | records/s | share of the ceiling | records/s against full refresh |",
    )
    console.log("|---|---|---|---|---|---|---|---|---|")
    const row = (name: string, outcome: ReadOutcome) =>
      console.log(
        `| ${name} | ${outcome.records} | ${outcome.credits} | ${outcome.requests} | ${(outcome.requests / Math.max(1, outcome.records)).toFixed(4)} | ${outcome.seconds.toFixed(1)} | ${perSecond(outcome).toFixed(0)} | ${percentOfCeiling(perSecond(outcome))} | ${((perSecond(outcome) / perSecond(fullRefresh)) * 100).toFixed(0)}% |`,
      )
    row("full refresh", fullRefresh)
    row("first incremental, empty state (direct)", direct)
    row("incremental through the free listing", listing)
    console.log(
      `rerun of the incremental read with its state: ${rerun.records} records, ${rerun.credits} credits, ${rerun.requests} requests`,
    )
  } finally {
    child.kill()
  }
}

await main()
