/**
 * A whole read as `salesintel sync` runs it: several contacts searches, companies and the
 * taxonomy, every stream full refresh, the source's messages consumed in this process, against a
 * sandbox in its own process; timed, with the sandbox's count of the requests per endpoint. Used by
 * read-throughput for its whole-sync rows.
 */
import { readFileSync } from "node:fs"
import { fileURLToPath } from "node:url"
import { Commands } from "@salesintel/source"
import * as Effect from "effect/Effect"
import * as Stream from "effect/Stream"
import { benchSearch } from "./contacts-read.ts"
import { post } from "./sandbox.ts"

// Compiled to bench/dist/: the demo's config is two folders up.
const demoPath = fileURLToPath(new URL("../../spec/examples/demo.json", import.meta.url))

/** The demo's searches, companies and taxonomy, and the benchmark's search beside them. */
const syncConfig = (url: string) => {
  const demo = JSON.parse(readFileSync(demoPath, "utf8")) as {
    contacts: { searches: ReadonlyArray<unknown> }
    companies: { domains: ReadonlyArray<string> }
    taxonomy: unknown
  }
  return {
    api_key: "sandbox-full",
    base_url: url,
    credit_budget: 1_000_000,
    contacts: { searches: [benchSearch, ...demo.contacts.searches] },
    companies: { domains: demo.companies.domains },
    taxonomy: demo.taxonomy,
  }
}

const streams = ["taxonomy_categories", "taxonomy_products", "contacts", "companies"]

export interface SyncReadOutcome {
  readonly records: number
  readonly seconds: number
  /** The sandbox's count of answered requests by endpoint (all statuses). */
  readonly byEndpoint: Readonly<Record<string, number>>
  readonly rateLimited: number
}

const endpointCounts = async (url: string) => {
  const answer = (await (await fetch(`${url}/_sandbox/accounts`)).json()) as {
    accounts: Record<string, { requests: Record<string, Record<string, number>> }>
  }
  const requests = answer.accounts["sandbox-full"]?.requests ?? {}
  const byEndpoint = Object.fromEntries(
    Object.entries(requests).map(([endpoint, byStatus]) => [
      endpoint,
      Object.values(byStatus).reduce((a, b) => a + b, 0),
    ]),
  )
  const rateLimited = Object.values(requests).reduce((sum, byStatus) => sum + (byStatus["429"] ?? 0), 0)
  return { byEndpoint, rateLimited }
}

export const readSync = async (url: string, latencyMs: number): Promise<SyncReadOutcome> => {
  await post(`${url}/_sandbox/reset`)
  await post(`${url}/_sandbox/faults`, { latency_ms: latencyMs })
  const catalog = {
    streams: streams.map((name) => ({
      stream: { name },
      sync_mode: "full_refresh",
      // Full refresh | Append: into overwrite the source would plan first (Replaced.ts), and this times the read.
      destination_sync_mode: "append",
    })),
  }
  let records = 0
  const started = performance.now()
  await Effect.runPromise(
    Stream.runForEach(Commands.read({ config: syncConfig(url), catalog, state: undefined }), (message) =>
      Effect.sync(() => {
        if (message.type === "RECORD") records++
        if (message.type === "TRACE" && message.trace.type === "ERROR")
          throw new Error(message.trace.error.message)
      }),
    ),
  )
  const seconds = (performance.now() - started) / 1000
  return { records, seconds, ...(await endpointCounts(url)) }
}

/**
 * The physical limit of a whole read: the requests its data takes (every request but the free
 * counts that size the searches) at the rate limit's 30 a second, plus one latency for the last
 * answer.
 */
export const syncLimitSeconds = (byEndpoint: Readonly<Record<string, number>>, latencyMs: number): number => {
  const needed = Object.entries(byEndpoint)
    .filter(([endpoint]) => endpoint !== "people.preview")
    .reduce((sum, [, count]) => sum + count, 0)
  return needed / 30 + latencyMs / 1000
}
