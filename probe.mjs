import { Commands } from "@salesintel/source"
import { Effect, Stream } from "effect"

const config = {
  api_key: "sandbox-full",
  base_url: "http://127.0.0.1:18790",
  credit_budget: 1e6,
  concurrency: 4,
  contacts: { searches: [{ name: "sales", filters: { job_departments: ["sale"] } }] },
}
const catalog = {
  streams: [{ stream: { name: "contacts" }, sync_mode: "full_refresh", destination_sync_mode: "overwrite" }],
}
await fetch("http://127.0.0.1:18790/_sandbox/reset", { method: "POST" })
const t0 = performance.now()
let first,
  n = 0,
  states = 0
const gaps = []
let last
await Effect.runPromise(
  Stream.runForEach(Commands.read({ config, catalog }), (m) =>
    Effect.sync(() => {
      const now = performance.now()
      if (m.type === "RECORD") {
        n++
        if (!first) first = now
      }
      if (m.type === "STATE") {
        states++
        if (last) gaps.push(now - last)
        last = now
      }
    }),
  ),
)
const total = performance.now() - t0
gaps.sort((a, b) => a - b)
console.log({
  totalMs: Math.round(total),
  firstRecordMs: Math.round(first - t0),
  records: n,
  perSecond: Math.round((n / total) * 1000),
  states,
  medianGapMs: gaps[gaps.length >> 1]?.toFixed(1),
  p90: gaps[Math.floor(gaps.length * 0.9)]?.toFixed(1),
})
const acc = await (await fetch("http://127.0.0.1:18790/_sandbox/accounts")).json()
console.log(acc.accounts["sandbox-full"].requests)
