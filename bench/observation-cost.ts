/**
 * What keeping every observation costs a companies load: 20,000 companies of 20 technologies each
 * (`BENCH_COMPANIES`, `BENCH_TECHNOLOGIES`), loaded twice into the local Postgres (a first
 * observation, then a refresh a month later, which also finds the changes), each load timed whole;
 * then the observation log's own work alone, in the same run: the log emptied and written again
 * from the held tables by the same statement the merge runs (History.Observations.recordSql, through
 * seedSql), timed. The share is that work over the refresh's load. Contacts loads write no
 * observations (not measured here).
 */
import { Database as Db, History, Loader, PgDatabase, Sql } from "@salesintel/postgres"
import * as Effect from "effect/Effect"
import * as Stream from "effect/Stream"

const companies = Number(process.env.BENCH_COMPANIES ?? 20_000)
const technologies = Number(process.env.BENCH_TECHNOLOGIES ?? 20)
const url = process.env.DATABASE_URL || "postgres://postgres@127.0.0.1:5432/test"
const schema = "salesintel_bench_observations"
const { Database } = Db
const products = Array.from({ length: 60 }, (_, index) => `Product ${index}`)

/** A company as the source sends it; the refresh (`generation` 1) swaps one product of each. */
const company = (id: number, at: string, generation: number) => ({
  company_id: id,
  company_name: `Company ${id}`,
  company_domains: [`c${id}.example.com`],
  company: { id, name: `Company ${id}` },
  _salesintel_fetched_at: at,
  technologies: Array.from({ length: technologies }, (_, k) => ({
    category: "Category",
    subcategory: `Subcategory ${k % 5}`,
    product: products[(id + k * 3 + (k === 0 ? generation : 0)) % products.length],
    vendor: "Vendor",
    in_use: true,
  })),
})

function* messages(at: string, generation: number) {
  for (let id = 1; id <= companies; id++) {
    yield {
      type: "RECORD" as const,
      record: { stream: "companies", data: company(id, at, generation), emitted_at: 0 },
    }
    if (id % 2_000 === 0 || id === companies)
      yield {
        type: "STATE" as const,
        state: {
          type: "STREAM" as const,
          stream: { stream_descriptor: { name: "companies" }, stream_state: { upto: id } },
          sourceStats: { recordCount: 2_000 },
        },
      }
  }
}

const seconds = (from: number) => (performance.now() - from) / 1000

const program = Effect.gen(function* () {
  const db = yield* Database
  yield* db.exec(`DROP SCHEMA IF EXISTS ${Sql.ident(schema)} CASCADE`)
  const loads: Array<number> = []
  for (const [generation, at] of ["2026-01-01T00:00:00Z", "2026-02-01T00:00:00Z"].entries()) {
    const started = performance.now()
    yield* Loader.load(Stream.fromIterable([...messages(at, generation)]), { schema })
    loads.push(seconds(started))
  }
  const table = (name: string) => Sql.qualified(schema, name)
  const [counted] = yield* db.query(
    `SELECT (SELECT count(*) FROM ${table("company_observations")})::int AS companies,
       (SELECT count(*) FROM ${table("technology_observations")})::int AS products`,
  )
  // The log's own work for one load: the held companies' observation written again, alone.
  yield* db.exec(`TRUNCATE ${table("company_observations")}, ${table("technology_observations")}`)
  const started = performance.now()
  yield* db.exec(History.Observations.seedSql(schema))
  const alone = seconds(started)
  yield* db.exec(`DROP SCHEMA ${Sql.ident(schema)} CASCADE`)
  return { loads, alone, counted }
})

const { loads, alone, counted } = await Effect.runPromise(Effect.provide(program, PgDatabase.layer(url)))
const [first = 0, refresh = 0] = loads
console.log(`${companies.toLocaleString("en-US")} companies x ${technologies} technologies into Postgres`)
console.log(
  `  first load   ${first.toFixed(2)} s (${Math.round(companies / first).toLocaleString("en-US")} companies/s)`,
)
console.log(`  refresh load ${refresh.toFixed(2)} s (changes found and observations kept)`)
console.log(
  `  log written: ${counted?.companies} company observations, ${counted?.products} product rows over the two loads`,
)
console.log(
  `  the log's work for one load alone: ${alone.toFixed(2)} s, ${((alone / refresh) * 100).toFixed(0)}% of the refresh load`,
)
