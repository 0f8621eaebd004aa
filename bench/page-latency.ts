// Benchmark: time to serve one 50-record page with common filters at 1,000,000 contacts,
// over real HTTP on 127.0.0.1. The sandbox runs in a child process (its CLI), so client
// and server do not share an event loop. "first page" requests are fresh filter sets (no
// cached result set: the query is evaluated from the indexes); "next pages" page through
// a query already evaluated, as a connector does.
import { Agent, request } from "node:http"
import { startSandbox } from "./sandbox.ts"

const contacts = Number(process.env.BENCH_CONTACTS ?? 1_000_000)
const companies = Number(process.env.BENCH_COMPANIES ?? 50_000)
const pagesPerQuery = 20

const started = performance.now()
const { url, child } = await startSandbox([
  "--contacts",
  String(contacts),
  "--companies",
  String(companies),
  "--requests-per-minute",
  "0",
])
const startupMs = performance.now() - started

const agent = new Agent({ keepAlive: true, maxSockets: 1 })
const get = (path: string, key = "sandbox-full"): Promise<{ status: number; body: string; ms: number }> =>
  new Promise((resolve, reject) => {
    const t0 = performance.now()
    const req = request(
      `${url}${path}`,
      { agent, headers: { "X-CB-ApiKey": key, Accept: "application/json" } },
      (res) => {
        const chunks: Buffer[] = []
        res.on("data", (c: Buffer) => chunks.push(c))
        res.on("end", () =>
          resolve({
            status: res.statusCode ?? 0,
            body: Buffer.concat(chunks).toString(),
            ms: performance.now() - t0,
          }),
        )
      },
    )
    req.on("error", reject)
    req.end()
  })

// Ten variants per scenario, all distinct, so every "first page" is a fresh evaluation.
const states = ["CA", "TX", "NY", "MA", "WA", "IL", "FL", "GA", "CO", "PA"]
const departments = ["sale", "enrd", "it_is", "mrkt", "ops", "fnad", "hr", "other", "lgl", "prc"]
const products = [
  "Salesforce Sales Cloud",
  "HubSpot CRM",
  "Zendesk",
  "Okta",
  "Slack",
  "Zoom",
  "Tableau",
  "Shopify",
  "Jira",
  "Stripe",
]
const scenarios: Array<{ name: string; query: (variant: number) => string }> = [
  {
    name: "job_departments",
    query: (v) => `job_departments=${["sale", "enrd", "it_is", "mrkt", "ops"][v % 5]}`,
  },
  {
    name: "job_levels + state",
    query: (v) => `job_levels=vp,dir&company_location_states=${states[v % states.length]}`,
  },
  {
    name: "size range + department",
    query: (v) => `company_min_size=${200 + v * 50}&company_max_size=4999&job_departments=it_is`,
  },
  {
    name: "tech_product + level",
    query: (v) => `tech_product=${encodeURIComponent(products[v]!)}&job_levels=mgr`,
  },
  {
    name: "required_fields + verified",
    query: (v) => `required_fields=phone,linkedin_url&verified=true&job_departments=${departments[v]}`,
  },
  {
    name: "preview: department + state",
    query: (v) => `job_departments=sale&company_location_states=${states[v % 10]}`,
  },
]

const quantile = (sorted: number[], q: number) =>
  sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))]!
const fmt = (xs: number[]) => {
  const s = [...xs].sort((a, b) => a - b)
  return `median ${quantile(s, 0.5).toFixed(2)} ms  p99 ${quantile(s, 0.99).toFixed(2)} ms  (n=${s.length})`
}

// Warm the server's JIT with unrelated queries (not the measured filter sets), as a
// sandbox that has been serving a test suite for a while would be.
for (let i = 0; i < 60; i++) {
  await get(
    `/service/people/preview?company_min_size=${1 + i}&job_levels=${["stf", "vp,dir", "mgr"][i % 3]}&company_location_states=${states[i % 10]}&required_fields=phone&verified=${i % 2 === 0}&page=${1 + (i % 3)}`,
  )
  await get(
    `/service/people?tech_category=Sales&company_max_size=${100_000 + i}&job_departments=${departments[i % 10]}&sort_by=company_name`,
  )
}

const info = JSON.parse((await get("/_sandbox/dataset")).body) as { rss_mb: number; contacts: number }
console.log(`sandbox page latency: ${info.contacts} contacts, ${companies} companies, 50 records per page`)
console.log(
  `start-up ${(startupMs / 1000).toFixed(2)} s (process spawn to listening), server RSS ${info.rss_mb} MB`,
)
const allFirst: number[] = []
const allNext: number[] = []
for (const scenario of scenarios) {
  const first: number[] = []
  const next: number[] = []
  const endpoint = scenario.name.startsWith("preview") ? "/service/people/preview" : "/service/people"
  for (let v = 0; v < 10; v++) {
    for (let page = 1; page <= pagesPerQuery; page++) {
      const r = await get(`${endpoint}?${scenario.query(v)}&page=${page}&page_size=50`)
      if (r.status !== 200)
        throw new Error(`${scenario.name}: ${r.status} ${r.body}`)
        // A fresh variant's first page is evaluated from the indexes; later variants repeat
        // earlier filter sets only when v >= the number of distinct values.
      ;(page === 1 ? first : next).push(r.ms)
    }
  }
  allFirst.push(...first)
  allNext.push(...next)
  console.log(`  ${scenario.name.padEnd(28)} first page: ${fmt(first)}`)
  console.log(`  ${"".padEnd(28)} next pages: ${fmt(next)}`)
}
console.log(`  ${"all".padEnd(28)} first page: ${fmt(allFirst)}`)
console.log(`  ${"".padEnd(28)} next pages: ${fmt(allNext)}`)
console.log(`  ${"".padEnd(28)} every page: ${fmt([...allFirst, ...allNext])}`)

agent.destroy()
child.kill("SIGTERM")
