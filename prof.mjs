import { startSandbox } from "@salesintel/sandbox"
import { Plan } from "@salesintel/cli"
import * as Effect from "effect/Effect"
const s = await startSandbox({ seed: 42, contacts: 100_000, companies: 10_000 })
const config = { api_key: "sandbox-full", base_url: s.url, credit_budget: 100000, requests_per_minute: 60000,
  contacts: { searches: [{ name: "it", filters: { job_departments: ["it_is"] } }] } }
for (let i=0;i<2;i++){
let t = Date.now()
const p = await Effect.runPromise(Plan.makePlan({ config, state: [], mode: "exact" }))
console.log("plan", Date.now() - t, p.credits, p.requests)
}
await s.close()
