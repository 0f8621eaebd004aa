/**
 * 429s against the sandbox over real HTTP: answered without Retry-After (the provider documents
 * none), at a rate that would exhaust max_attempts many times over, they never end the read; it
 * ends with exactly the records (and credits) of a clean read. Answered with Retry-After, the read
 * says it waits (RATE_LIMITED) and still buys each record once.
 */
import { Commands } from "@salesintel/source"
import * as Effect from "effect/Effect"
import * as Stream from "effect/Stream"
import { describe, expect, it } from "vitest"
import { messageProblems } from "../packages/airbyte/src/testing/AirbyteSchema.ts"
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

describe("a read the provider holds back with Retry-After", () => {
  it("says RATE_LIMITED for the stream while it waits, every message valid, and buys nothing twice", async () => {
    const key = sandbox.key()
    // A fifth of the requests refused with Retry-After: 1 (second), every one of them waited out.
    sandbox.setFaults({ rate_limit_rate: 0.2, retry_after_s: 1, retry_after_header: 1 }, key)
    const startedAt = Date.now()
    const messages = [
      ...(await Effect.runPromise(
        Stream.runCollect(Commands.read({ config: { ...config(), api_key: key, retry: {} }, catalog })),
      )),
    ]
    const endedAt = Date.now()
    expect(messages.filter((m) => m.type === "TRACE" && m.trace.type === "ERROR")).toEqual([])
    for (const message of messages) expect(messageProblems(message)).toEqual([])
    const refused = Object.values(sandbox.requests(key)).reduce(
      (sum, byStatus) => sum + (byStatus["429"] ?? 0),
      0,
    )
    expect(refused, "429s answered").toBeGreaterThan(0)
    const limited = messages.flatMap((m) =>
      m.type === "TRACE" && m.trace.type === "STREAM_STATUS" && m.trace.stream_status.reasons !== undefined
        ? [
            {
              stream: m.trace.stream_status.stream_descriptor.name,
              status: m.trace.stream_status.status,
              reasons: m.trace.stream_status.reasons,
            },
          ]
        : [],
    )
    expect(limited.length, "RATE_LIMITED statuses").toBeGreaterThan(0)
    for (const { stream, status, reasons } of limited) {
      expect([stream, status, reasons.map((r) => r.type)]).toEqual(["contacts", "RUNNING", ["RATE_LIMITED"]])
      // When the wait ends: a second after a 429 the read saw.
      const reset = reasons[0]?.rate_limited?.quota_reset ?? 0
      expect(reset).toBeGreaterThan(startedAt + 1_000 - 50)
      expect(reset).toBeLessThanOrEqual(endedAt + 1_000)
    }
    expect(
      messages.some(
        (m) =>
          m.type === "LOG" &&
          m.log.message.startsWith("contacts: waiting out the provider's rate limit until"),
      ),
    ).toBe(true)
    // Every record paid for once and delivered once.
    const ids = messages.flatMap((m) => (m.type === "RECORD" ? [String(m.record.data.match_id)] : []))
    expect(ids.length).toBeGreaterThan(0)
    expect(new Set(ids).size).toBe(ids.length)
    expect(sandbox.charged(key)).toBe(ids.length)
  }, 120_000)
})
