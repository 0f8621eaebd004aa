/**
 * Benchmark (npm run bench -- read-throughput): records per second of the same full-refresh
 * contacts read (13,985 contacts of job_departments=enrd in the default sandbox dataset, read
 * through partitions) with the default config, at 50, 100, 500, 1,000 and 2,000 ms of added
 * sandbox latency, under the provider's 1,800 requests a minute, which the sandbox enforces per
 * key over every 60-second window and answers with 429 past it. The 429s are the sandbox's count.
 * The sandbox runs in its own process, as the provider would; the read runs in this one,
 * consuming the messages as `salesintel sync` does.
 *
 * The physical limit of the read: its credited pages at 30 a second, plus one latency for the last
 * answer (`limitSeconds`); each row says its share of it, the aim being 95% at every latency.
 * The ceiling of any client is the rate limit: 1,800 requests a minute is 30 pages of 50 a second,
 * 1,500 records/s. The connector's limiter keeps a margin under it (29.85 a second).
 * A first read without latency measures what this machine's CPU allows at all (a busy machine
 * reads slower than the ceiling with no latency to hide): each row says its share of that too.
 * Then the same latencies for a whole sync (sync-read.ts): the benchmark's search and the demo's
 * two, the demo's 100 companies and its taxonomy, every stream full refresh; its limit counts every
 * request but the free counts that size the searches.
 * BENCH_LATENCIES=100,1000 picks the latencies.
 */
import {
  benchSearch,
  ceilingRecordsPerSecond,
  limitSeconds,
  percentOfCeiling,
  readContacts,
} from "./contacts-read.ts"
import { startSandbox } from "./sandbox.ts"
import { readSync, syncLimitSeconds } from "./sync-read.ts"

const latencies = (process.env.BENCH_LATENCIES ?? "50,100,500,1000,2000")
  .split(",")
  .map((value) => Number(value.trim()))
  .filter((value) => Number.isFinite(value) && value >= 0)

const main = async () => {
  const { url, child } = await startSandbox([])
  try {
    console.log(
      `full-refresh contacts read of ${JSON.stringify(benchSearch.filters)}, default config, limit 1,800 req/min (ceiling ${ceilingRecordsPerSecond} records/s)`,
    )
    console.log(
      "| latency | records | seconds | records/s | share of the physical limit | share of the ceiling | share of the 0 ms read | requests | req/min | 429s |",
    )
    console.log("|---|---|---|---|---|---|---|---|---|---|")
    let unhindered: number | undefined
    for (const latencyMs of [0, ...latencies.filter((latency) => latency > 0)]) {
      const outcome = await readContacts(url, { syncMode: "full_refresh", latencyMs })
      const perSecond = outcome.records / outcome.seconds
      unhindered ??= perSecond
      const limit = limitSeconds(outcome.creditedPages, latencyMs)
      console.log(
        `| ${latencyMs} ms | ${outcome.records} | ${outcome.seconds.toFixed(1)} | ${perSecond.toFixed(0)} | ${((limit / outcome.seconds) * 100).toFixed(0)}% of ${limit.toFixed(1)} s | ${percentOfCeiling(perSecond)} | ${((perSecond / unhindered) * 100).toFixed(0)}% | ${outcome.requests} | ${((outcome.requests / outcome.seconds) * 60).toFixed(0)} | ${outcome.rateLimited} |`,
      )
    }
    console.log(
      "\nwhole sync, full refresh: the search above and the demo's two, its 100 companies, its taxonomy",
    )
    console.log(
      "| latency | records | seconds | share of the physical limit | requests (of which free counts) | 429s |",
    )
    console.log("|---|---|---|---|---|---|")
    for (const latencyMs of [0, ...latencies.filter((latency) => latency > 0)]) {
      const outcome = await readSync(url, latencyMs)
      const limit = syncLimitSeconds(outcome.byEndpoint, latencyMs)
      const requests = Object.values(outcome.byEndpoint).reduce((a, b) => a + b, 0)
      console.log(
        `| ${latencyMs} ms | ${outcome.records} | ${outcome.seconds.toFixed(1)} | ${((limit / outcome.seconds) * 100).toFixed(0)}% of ${limit.toFixed(1)} s | ${requests} (${outcome.byEndpoint["people.preview"] ?? 0}) | ${outcome.rateLimited} |`,
      )
    }
    console.log(`peak RSS of the reading process: ${(process.resourceUsage().maxRSS / 1024).toFixed(0)} MB`)
  } finally {
    child.kill()
  }
}

await main()
