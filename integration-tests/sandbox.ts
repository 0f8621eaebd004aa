/**
 * The sandbox of a test file: started once before the file's tests and closed after them. Each
 * test (or each step of one) takes a key of its own with `key()`, and reads what the sandbox
 * charged and answered for that key alone (`charged(key)`, `requests(key)`): no test resets the
 * counters another reads, and no test counts another's requests.
 *
 * `fastPace` is the request pace for configs whose test is not about pacing: the sandbox is local,
 * and the connector's default (the provider's 1,800 a minute) would make a test wait for nothing.
 */

import type { FaultSettings } from "@salesintel/sandbox"
import {
  type AccountSpec,
  type Dataset,
  type Sandbox,
  type SandboxOptions,
  startSandbox,
} from "@salesintel/sandbox"
import { afterAll, beforeAll } from "vitest"

export const fastPace = 60_000

/** The key every test file had before keys of their own: full permissions, a million credits. */
export const sharedKey = "sandbox-full"

export interface FileSandbox {
  readonly url: string
  readonly dataset: Dataset
  /** The running sandbox, for what this file's helpers do not cover. */
  readonly running: Sandbox
  /** A new key with every permission (and `credits`, a million by default), counters at zero. */
  readonly key: (credits?: number) => string
  /** Credits the sandbox charged `key`. */
  readonly charged: (key?: string) => number
  /** Requests the sandbox answered for `key`, by endpoint and status. */
  readonly requests: (key?: string) => Record<string, Record<string, number>>
  /** How many requests the sandbox answered for `key`, whatever their endpoint and status. */
  readonly requestCount: (key?: string) => number
  readonly setFaults: (settings: FaultSettings, key?: string) => void
  /** Restores every key's balance and counters, and the faults, to their start values. */
  readonly reset: () => void
  /** Moves the provider's data to `generation` over HTTP, as a month passing would (0: as it began). */
  readonly setGeneration: (generation: number) => Promise<void>
  /** The contacts a search's filters match, as the provider's free preview counts them (for a new key). */
  readonly previewCount: (filters: Record<string, string>) => Promise<number>
}

export const sandboxForFile = (options: SandboxOptions): FileSandbox => {
  let started: Sandbox | undefined
  let keys = 0
  beforeAll(async () => {
    started = await startSandbox(options)
  })
  afterAll(async () => {
    await started?.close()
  })
  const running = (): Sandbox => {
    if (started === undefined) throw new Error("the file's sandbox is used before its beforeAll ran")
    return started
  }
  const account = (key: string) => running().accounts()[key]
  return {
    get url() {
      return running().url
    },
    get dataset() {
      return running().dataset
    },
    get running() {
      return running()
    },
    key: (credits = 1_000_000) => {
      keys += 1
      const spec: AccountSpec = {
        key: `test-key-${keys}`,
        permissions: ["people", "technologies", "tech_addon"],
        credits,
      }
      running().addAccount(spec)
      return spec.key
    },
    charged: (key = sharedKey) => account(key)?.credits_charged ?? 0,
    requests: (key = sharedKey) => account(key)?.requests ?? {},
    requestCount: (key = sharedKey) =>
      Object.values(account(key)?.requests ?? {})
        .flatMap((byStatus) => Object.values(byStatus))
        .reduce((sum, n) => sum + n, 0),
    setFaults: (settings, key) => running().setFaults(settings, key),
    reset: () => running().reset(),
    setGeneration: async (generation) => {
      const response = await fetch(`${running().url}/_sandbox/dataset`, {
        method: "POST",
        body: JSON.stringify({ generation }),
      })
      await response.body?.cancel()
      if (response.status !== 200)
        throw new Error(`the sandbox refused generation ${generation}: ${response.status}`)
    },
    previewCount: async (filters) => {
      const url = new URL("/service/people/preview", running().url)
      for (const [name, value] of Object.entries({ ...filters, page: "1", page_size: "1" }))
        url.searchParams.set(name, value)
      const spec: AccountSpec = { key: `test-preview-${++keys}`, permissions: ["people"], credits: 0 }
      running().addAccount(spec)
      const response = await fetch(url, { headers: { "X-CB-ApiKey": spec.key, Accept: "application/json" } })
      return ((await response.json()) as { result_count: number }).result_count
    },
  }
}
