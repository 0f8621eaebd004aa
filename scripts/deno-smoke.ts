// Deno smoke test of @salesintel/core (run by `npm run test:deno`, not by vitest): a paged,
// retried, budgeted read against a local HTTP server, through the core's own source files and
// fetch, under the Deno binary. Exits non-zero on any mismatch.
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Schema from "effect/Schema"
import * as Stream from "effect/Stream"
import { Client, Connection, CreditBudget, Pager } from "../packages/core/src/index.ts"

const total = 120
let requests = 0
const seenKeys = new Set<string>()

const server = Deno.serve({ hostname: "127.0.0.1", port: 0, onListen: () => {} }, (request: Request) => {
  requests++
  seenKeys.add(request.headers.get("x-cb-apikey") ?? "")
  const url = new URL(request.url)
  // The first attempt at every page fails once: the retry policy must recover each of them.
  if (requests % 2 === 1) return new Response(JSON.stringify({ error: "try again" }), { status: 503 })
  const page = Number(url.searchParams.get("page"))
  const pageSize = Number(url.searchParams.get("page_size"))
  const start = (page - 1) * pageSize
  const ids = Array.from({ length: Math.max(0, Math.min(pageSize, total - start)) }, (_, i) => start + i)
  const body = {
    is_preview: false,
    page,
    page_size: pageSize,
    result_count: total,
    search_results: ids.map((id) => ({ match_id: `m-${id}`, first_name: `Person ${id}` })),
  }
  return new Response(JSON.stringify(body), { headers: { "content-type": "application/json" } })
})

const config = Schema.decodeUnknownSync(Connection.ConnectionConfig)({
  api_key: "deno-smoke-key",
  base_url: `http://127.0.0.1:${server.addr.port}`,
  retry: { initial_delay_ms: 5, max_delay_ms: 20 },
})

const program = Effect.gen(function* () {
  const client = yield* Client.SalesIntelClient
  const events = yield* Stream.runCollect(
    Pager.stream({
      fetch: (paging) => client.searchPeople({ job_levels: ["vp"] }, paging),
      credited: true,
      pageSize: 50,
      concurrency: 2,
    }),
  )
  const budget = yield* CreditBudget.CreditBudget
  return { events: [...events], snapshot: yield* budget.snapshot }
})

const { events, snapshot } = await Effect.runPromise(
  program.pipe(Effect.provide(Layer.merge(Client.layerFetch(config), CreditBudget.layer(1_000)))),
)
await server.shutdown()

const ids = events.flatMap((event) =>
  event._tag === "PageFetched" ? event.page.items.map((item) => item.record.match_id) : [],
)
const expected = Array.from({ length: total }, (_, i) => `m-${i}`)
const problems: Array<string> = []
if (JSON.stringify(ids) !== JSON.stringify(expected))
  problems.push(`records: got ${ids.length}, expected ${total} in order`)
if (snapshot.spent !== total || snapshot.reserved !== 0) problems.push(`credits: ${JSON.stringify(snapshot)}`)
if (requests !== 6) problems.push(`requests: ${requests}, expected 6 (3 pages, each retried once)`)
if (seenKeys.size !== 1 || !seenKeys.has("deno-smoke-key")) problems.push("the API key header was not sent")

if (problems.length > 0) {
  console.error(`deno smoke test FAILED under Deno ${Deno.version.deno}:\n- ${problems.join("\n- ")}`)
  Deno.exit(1)
}
console.log(
  `deno smoke test passed under Deno ${Deno.version.deno}: ${ids.length} records over ${requests} requests (3 retried), ${snapshot.spent} credits`,
)
