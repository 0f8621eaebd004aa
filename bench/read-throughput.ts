/**
 * Benchmark (npm run bench -- read-throughput): records per second of a full-refresh contacts
 * read of about 20,000 contacts (job_departments=sale in the default sandbox dataset, read through
 * partitions), at 100 ms of added sandbox latency, with concurrency 1 and 4, under the provider's
 * documented 1,800 requests a minute. The sandbox runs in its own process, as the provider would;
 * the read runs in this one, consuming the messages as `salesintel sync` does.
 *
 * The ceiling of any client is the rate limit: 1,800 requests a minute is 30 pages of 50 a second,
 * 1,500 records/s. The connector's limiter keeps a margin under it (29 a second).
 */
import { Commands } from "@salesintel/source"
import { Effect, Stream } from "effect"
import { post, startSandbox } from "./sandbox.ts"

const latencyMs = 100
const ceilingRecordsPerSecond = 1_500

interface Outcome {
  readonly records: number
  readonly seconds: number
  readonly requests: number
  readonly rateLimited: number
}

const readOnce = async (url: string, concurrency: number): Promise<Outcome> => {
  await post(`${url}/_sandbox/reset`)
  const config = {
    api_key: "sandbox-full",
    base_url: url,
    credit_budget: 1_000_000,
    concurrency,
    contacts: { searches: [{ name: "sales", filters: { job_departments: ["sale"] } }] },
  }
  const catalog = {
    streams: [
      { stream: { name: "contacts" }, sync_mode: "full_refresh", destination_sync_mode: "overwrite" },
    ],
  }
  let records = 0
  const started = performance.now()
  await Effect.runPromise(
    Stream.runForEach(Commands.read({ config, catalog }), (message) =>
      Effect.sync(() => {
        if (message.type === "RECORD") records++
        if (message.type === "TRACE" && message.trace.type === "ERROR")
          throw new Error(message.trace.error.message)
      }),
    ),
  )
  const seconds = (performance.now() - started) / 1000
  const accounts = (await (await fetch(`${url}/_sandbox/accounts`)).json()) as {
    accounts: Record<string, { requests: Record<string, Record<string, number>> }>
  }
  const requests = Object.values(accounts.accounts["sandbox-full"]?.requests ?? {})
  return {
    records,
    seconds,
    requests: requests.reduce((sum, byStatus) => sum + Object.values(byStatus).reduce((a, b) => a + b, 0), 0),
    rateLimited: requests.reduce((sum, byStatus) => sum + (byStatus["429"] ?? 0), 0),
  }
}

const main = async () => {
  const { url, child } = await startSandbox(["--latency-ms", String(latencyMs)])
  try {
    console.log(
      `full-refresh contacts read, ~20,000 contacts, sandbox latency ${latencyMs} ms, limit 1,800 req/min`,
    )
    console.log("concurrency  records  seconds  records/s  % of 1,500 ceiling  requests  req/min  429s")
    for (const concurrency of [1, 4]) {
      const outcome = await readOnce(url, concurrency)
      const perSecond = outcome.records / outcome.seconds
      console.log(
        [
          String(concurrency).padStart(11),
          String(outcome.records).padStart(8),
          outcome.seconds.toFixed(1).padStart(8),
          perSecond.toFixed(0).padStart(10),
          `${((perSecond / ceilingRecordsPerSecond) * 100).toFixed(0)}%`.padStart(19),
          String(outcome.requests).padStart(9),
          ((outcome.requests / outcome.seconds) * 60).toFixed(0).padStart(8),
          String(outcome.rateLimited).padStart(5),
        ].join(" "),
      )
    }
    console.log(`peak RSS of the reading process: ${(process.resourceUsage().maxRSS / 1024).toFixed(0)} MB`)
  } finally {
    child.kill()
  }
}

await main()
