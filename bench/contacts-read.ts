/**
 * One contacts read as `salesintel sync` runs it (the source's messages, consumed in this process)
 * against a sandbox in its own process, timed, with the sandbox's own count of the requests, the
 * 429s and the credits it charged. Shared by read-throughput and first-incremental.
 */
import { Commands } from "@salesintel/source"
import * as Effect from "effect/Effect"
import * as Stream from "effect/Stream"
import { accountCounts, post } from "./sandbox.ts"

/** 1,800 requests a minute is 30 pages of 50 a second: no client reads faster. */
export const ceilingRecordsPerSecond = 1_500

/** The benchmarks' search: 13,985 contacts in the default sandbox dataset, read through partitions. */
export const benchSearch = { name: "engineering", filters: { job_departments: ["enrd"] } }

export interface ReadOutcome {
  readonly records: number
  readonly seconds: number
  readonly requests: number
  /** Credited pages the sandbox answered. */
  readonly creditedPages: number
  readonly rateLimited: number
  readonly credits: number
  /** The contacts state of the last STATE message. */
  readonly state: unknown
}

export const readContacts = async (
  url: string,
  options: {
    readonly syncMode: "full_refresh" | "incremental"
    readonly latencyMs: number
    readonly state?: unknown
    readonly config?: Record<string, unknown>
  },
): Promise<ReadOutcome> => {
  await post(`${url}/_sandbox/reset`)
  await post(`${url}/_sandbox/faults`, { latency_ms: options.latencyMs })
  const config = {
    api_key: "sandbox-full",
    base_url: url,
    credit_budget: 1_000_000,
    contacts: { searches: [benchSearch] },
    ...options.config,
  }
  const catalog = {
    streams: [
      {
        stream: { name: "contacts" },
        sync_mode: options.syncMode,
        // Full refresh | Append: into overwrite the source would plan first (Replaced.ts), and this times the read.
        destination_sync_mode: options.syncMode === "incremental" ? "append_dedup" : "append",
        ...(options.syncMode === "incremental" ? { primary_key: [["match_id"]] } : {}),
      },
    ],
  }
  const state =
    options.state === undefined
      ? undefined
      : [{ type: "STREAM", stream: { stream_descriptor: { name: "contacts" }, stream_state: options.state } }]
  let records = 0
  let lastState: unknown
  const started = performance.now()
  await Effect.runPromise(
    Stream.runForEach(Commands.read({ config, catalog, state }), (message) =>
      Effect.sync(() => {
        if (message.type === "RECORD") records++
        if (message.type === "STATE") lastState = message.state.stream?.stream_state
        if (message.type === "TRACE" && message.trace.type === "ERROR")
          throw new Error(message.trace.error.message)
      }),
    ),
  )
  const seconds = (performance.now() - started) / 1000
  const counts = await accountCounts(url)
  return { records, seconds, ...counts, state: lastState }
}

/**
 * The physical limit of a read: its credited pages at the rate limit's 30 a second, plus one
 * latency for the last answer to come back. No client can read them faster.
 */
export const limitSeconds = (creditedPages: number, latencyMs: number): number =>
  creditedPages / 30 + latencyMs / 1000

export const percentOfCeiling = (recordsPerSecond: number): string =>
  `${((recordsPerSecond / ceilingRecordsPerSecond) * 100).toFixed(0)}%`
