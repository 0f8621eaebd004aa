/**
 * 429s against the sandbox over real HTTP: answered without Retry-After (the provider documents
 * none), at a rate that would exhaust max_attempts many times over, they never end the read; it
 * ends with exactly the records (and credits) of a clean read.
 */
import { Commands } from "@salesintel/source"
import * as Effect from "effect/Effect"
import * as Stream from "effect/Stream"
import { describe, expect, it } from "vitest"
import { sandboxForFile } from "./sandbox.ts"

const sandbox = sandboxForFile({ seed: 42, contacts: 100_000, companies: 10_000 })

const config = () => ({
  api_key: "sandbox-full",
  base_url: sandbox.url,
  credit_budget: 100_000,
  requests_per_minute: 60_000,
  // Two attempts only: a 429 that used one up would end the read within a few pages.
  retry: { max_attempts: 2, initial_delay_ms: 5, max_delay_ms: 50 },
  contacts: { searches: [{ name: "it-vps", filters: { job_departments: ["it_is"], job_levels: ["vp"] } }] },
})
const catalog = {
  streams: [{ stream: { name: "contacts" }, sync_mode: "full_refresh", destination_sync_mode: "overwrite" }],
}

const matchIdsOfRead = async () => {
  const messages = [
    ...(await Effect.runPromise(Stream.runCollect(Commands.read({ config: config(), catalog })))),
  ]
  const error = messages.find((m) => m.type === "TRACE" && m.trace.type === "ERROR")
  return {
    error,
    ids: messages.flatMap((m) => (m.type === "RECORD" ? [String(m.record.data.match_id)] : [])),
  }
}

describe("429s", () => {
  it("without Retry-After, many of them, never end a read that can wait them out", async () => {
    sandbox.reset()
    const clean = await matchIdsOfRead()
    expect(clean.error).toBeUndefined()

    sandbox.reset()
    sandbox.setFaults({ rate_limit_rate: 0.3, retry_after_header: 0 })
    const limited = await matchIdsOfRead()
    expect(limited.error).toBeUndefined()
    expect(limited.ids).toEqual(clean.ids)
    expect(sandbox.charged()).toBe(clean.ids.length)
    const rateLimited = Object.values(sandbox.requests()).reduce(
      (sum, byStatus) => sum + (byStatus["429"] ?? 0),
      0,
    )
    expect(rateLimited).toBeGreaterThan(5)
    sandbox.reset()
  }, 120_000)
})
