/**
 * How fast the market and intelligence views answer at a customer's size: 20,000 companies
 * (`BENCH_COMPANIES`) observed 10 times each, a month apart (the last 5 days ago), 10 products in
 * use at each observation: 200,000 company observations and 2,000,000 technology_observations
 * rows, with one product of each company changing every month (so adoptions and drops), 5,000
 * company moves of contacts in the last 90 days, 100,000 technology_changes rows and a market of
 * 12 entries. Rows are made by SQL (generate_series) in a schema of the run's own, dropped at the
 * end; the tables the loader keeps with the log (LogDerived.ts) are then made from it, timed. Each view is timed three times (the median printed) for `SELECT count(*)` over it and for a
 * typical query, with the server's settings and again with JIT off; the aim is under a second each.
 */
import { Database as Db, Ddl, History, PgDatabase, Sql } from "@salesintel/postgres"
import * as Effect from "effect/Effect"

const companies = Number(process.env.BENCH_COMPANIES ?? 20_000)
const observations = 10
const productsPerObservation = 10
const productPool = 200
const url = process.env.DATABASE_URL || "postgres://postgres@127.0.0.1:5432/test"
const schema = `salesintel_bench_views_${process.pid}`
const { Database } = Db
const table = (name: string) => Sql.qualified(schema, name)

/** Observation `o` (0..9) of every company: month o of the ten, the last 5 days ago. */
const observedAt = (o: string) =>
  `(now() - interval '5 days' - (${observations - 1} - ${o}) * interval '1 month')`
/** Product k of company c at observation o: one of the ten moves each month. */
const productAt = (c: string, k: string, o: string) =>
  `((${c} * 7 + ${k} * 13 + CASE WHEN ${k} = 0 THEN ${o} ELSE 0 END) % ${productPool})`

const fillSql = `
INSERT INTO ${table("companies")} (company_id, company_name, company_domains, size_range, revenue_range, naics_codes, _raw, _synced_at)
SELECT c, 'Company ' || c, ARRAY['c' || c || '.example.com'], '100-249', '$10M - $50M', ARRAY['484121'], '{}'::jsonb, now()
FROM generate_series(1, ${companies}) c;
INSERT INTO ${table("company_observations")} (company_id, observed_at, company_name, products_in_use)
SELECT c, ${observedAt("o")}, 'Company ' || c, ${productsPerObservation}
FROM generate_series(1, ${companies}) c, generate_series(0, ${observations - 1}) o;
INSERT INTO ${table("technology_observations")} (company_id, observed_at, category, subcategory, product, vendor)
SELECT c, ${observedAt("o")}, 'Category ' || (p % 20), 'Subcategory ' || (p % 40), 'Product ' || p, 'Vendor ' || (p % 40)
FROM generate_series(1, ${companies}) c, generate_series(0, ${observations - 1}) o,
  generate_series(0, ${productsPerObservation - 1}) k, LATERAL (SELECT ${productAt("c", "k", "o")} AS p) x;
INSERT INTO ${table("technology_changes")} (company_id, company_name, category, subcategory, product, vendor, change, observed_at, last_seen_at)
SELECT (i % ${companies}) + 1, 'Company ' || ((i % ${companies}) + 1), 'Category 1', 'Subcategory 1', 'Product ' || (i % ${productPool}),
  'Vendor ' || (i % 40), CASE WHEN i % 2 = 0 THEN 'adopted' ELSE 'dropped' END, now() - (i % 180) * interval '1 day',
  now() - (i % 180 + 30) * interval '1 day'
FROM generate_series(1, 100000) i;
INSERT INTO ${table("job_changes")} (match_id, display_name, from_company_id, from_company_name, to_company_id, to_company_name, changed, observed_at, last_seen_at)
SELECT 'm-' || i, 'Person ' || i, (i * 3) % ${companies} + 1, 'Company ' || ((i * 3) % ${companies} + 1), (i * 7) % ${companies} + 1,
  'Company ' || ((i * 7) % ${companies} + 1), ARRAY['company'], now() - interval '5 days', now() - interval '35 days'
FROM generate_series(1, 5000) i;
INSERT INTO ${table("market")} (role, product, vendor) VALUES
  ('ours', 'Product 1', NULL), ('ours', 'Product 2', NULL), ('ours', 'Product 3', NULL),
  ('rival', NULL, 'Vendor 5'), ('rival', NULL, 'Vendor 6'), ('rival', 'Product 7', NULL), ('rival', 'Product 8', NULL),
  ('rival', 'Product 9', 'Vendor 9'), ('complement', 'Product 10', NULL), ('complement', 'Product 11', NULL),
  ('complement', NULL, 'Vendor 12'), ('complement', 'Product 13', NULL);
ANALYZE ${table("companies")}; ANALYZE ${table("company_observations")}; ANALYZE ${table("technology_observations")};
ANALYZE ${table("technology_changes")}; ANALYZE ${table("job_changes")}; ANALYZE ${table("market")};`

/** Each view and a query a user would run on it. */
const cases: ReadonlyArray<readonly [view: string, typical: string]> = [
  ["account_technology_profile", "WHERE uses_rival AND NOT uses_ours ORDER BY company_id LIMIT 50"],
  ["technology_install_base", "WHERE product = 'Product 7' AND in_use ORDER BY first_seen_at LIMIT 50"],
  ["top_products_by_category", "WHERE rank_in_category <= 5 ORDER BY category, rank_in_category"],
  ["recent_technology_adoptions", "ORDER BY observed_at DESC LIMIT 50"],
  ["recent_technology_drops", "ORDER BY observed_at DESC LIMIT 50"],
  ["rival_accounts", "ORDER BY using_rival_since LIMIT 50"],
  ["displacement_opportunities", "ORDER BY happened_at DESC LIMIT 50"],
  [
    "product_affinity",
    "WHERE product_a = 'Product 1' OR product_b = 'Product 1' ORDER BY lift DESC LIMIT 20",
  ],
  ["product_momentum", "ORDER BY share_now - share_3m_before DESC LIMIT 20"],
  ["market_share_trend", "WHERE role = 'ours' ORDER BY month"],
  ["technology_install_base_trend", "WHERE product = 'Product 1' ORDER BY month"],
  ["technology_install_base_trend_by_category", "WHERE category = 'Category 1' ORDER BY month"],
  ["technology_displacements", "ORDER BY adopted_at DESC LIMIT 50"],
  ["champion_moves", "WHERE joined_company_uses IS FALSE LIMIT 50"],
]

const median = (values: ReadonlyArray<number>) =>
  [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)] ?? 0

const timed = (sql: string) =>
  Effect.gen(function* () {
    const db = yield* Database
    const runs: Array<number> = []
    let rows = 0
    for (let run = 0; run < 3; run++) {
      const started = performance.now()
      const result = yield* db.query(sql)
      runs.push((performance.now() - started) / 1000)
      rows = result.length
    }
    return { seconds: median(runs), rows }
  })

const program = Effect.gen(function* () {
  const db = yield* Database
  yield* Ddl.ensure(schema)
  const started = performance.now()
  yield* db.exec(fillSql)
  console.log(`rows made in ${((performance.now() - started) / 1000).toFixed(1)} s`)
  // The log is written here by SQL, not by the loader: the tables kept with it are made from it
  // as migration 12 makes them from a log held (what a load keeps with each batch).
  const derived = performance.now()
  yield* db.exec(History.LogDerived.fillSql(schema))
  yield* db.exec(History.LogDerived.tables.map((shape) => `ANALYZE ${table(shape.name)}`).join(";\n"))
  console.log(
    `tables kept with the log made from it in ${((performance.now() - derived) / 1000).toFixed(1)} s`,
  )
  const [counted] = yield* db.query(
    `SELECT (SELECT count(*) FROM ${table("company_observations")})::int AS companies,
       (SELECT count(*) FROM ${table("technology_observations")})::int AS products`,
  )
  console.log(
    `${companies.toLocaleString("en-US")} companies, ${counted?.companies} company observations, ${counted?.products} technology_observations rows`,
  )
  console.log(
    "view | count(*) rows | count(*) s | typical query s (rows) | count(*) s, jit off | typical query s, jit off",
  )
  let slowest = 0
  let slowestWithoutJit = 0
  for (const [view, typical] of cases) {
    const [n] = yield* db.query(`SELECT count(*)::int AS n FROM ${table(view)}`)
    const count = yield* timed(`SELECT count(*)::int AS n FROM ${table(view)}`)
    const query = yield* timed(`SELECT * FROM ${table(view)} ${typical}`)
    // The same with Postgres's JIT off (a reader's session or role can set it; a view cannot):
    // above jit_optimize_above_cost it compiles each plan for up to a second.
    yield* db.exec("SET jit = off")
    const countWithoutJit = yield* timed(`SELECT count(*)::int AS n FROM ${table(view)}`)
    const queryWithoutJit = yield* timed(`SELECT * FROM ${table(view)} ${typical}`)
    yield* db.exec("RESET jit")
    slowest = Math.max(slowest, count.seconds, query.seconds)
    slowestWithoutJit = Math.max(slowestWithoutJit, countWithoutJit.seconds, queryWithoutJit.seconds)
    console.log(
      `${view} | ${n?.n} | ${count.seconds.toFixed(3)} | ${query.seconds.toFixed(3)} (${query.rows}) | ${countWithoutJit.seconds.toFixed(3)} | ${queryWithoutJit.seconds.toFixed(3)}`,
    )
  }
  console.log(
    `slowest: ${slowest.toFixed(3)} s, ${slowestWithoutJit.toFixed(3)} s with jit off (aim: under 1 s)`,
  )
  return slowest
})

const cleanup = Effect.flatMap(Database, (db) =>
  db.exec(`DROP SCHEMA IF EXISTS ${Sql.ident(schema)} CASCADE`),
)
const slowest = await Effect.runPromise(
  Effect.provide(Effect.ensuring(program, Effect.orDie(cleanup)), PgDatabase.layer(url)),
)
process.exitCode = slowest < 1 ? 0 : 1
