/**
 * What an analyst asks after a sync, on a real Postgres server and on embedded PGlite: "IT
 * directors at companies of 1,000+ employees in California" answered from typed columns and the
 * label tables (no `_raw`), and the same answer as the `_raw` expressions it used to take; the
 * contact's site through position_location_id; social profiles as rows; comments on the columns.
 */
import { Sync } from "@salesintel/cli"
import { Sql } from "@salesintel/postgres"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { backends, open } from "../packages/postgres/src/testing/Backends.ts"
import { fastPace, sandboxForFile } from "./sandbox.ts"

const sandbox = sandboxForFile({ seed: 5, contacts: 40_000, companies: 3_000 })

const silent = { isTTY: false, write: () => true }

describe.each(await backends())("analyst queries after a sync on $name", (backend) => {
  let database: Awaited<ReturnType<typeof open>>
  beforeAll(async () => {
    database = await open(backend, "analyst")
    sandbox.reset()
    const outcome = await database.run(
      Sync.sync({
        config: {
          api_key: "sandbox-full",
          requests_per_minute: fastPace,
          base_url: sandbox.url,
          credit_budget: 5_000,
          contacts: {
            searches: [
              { name: "it-directors", filters: { job_departments: ["it_is"], job_levels: ["dir"] } },
            ],
          },
          companies: { domains: sandbox.dataset.companies.slice(0, 10).map((company) => company.domain) },
          taxonomy: { products: ["cloud"] },
        },
        schema: database.schema,
        progress: silent,
      }),
    )
    expect(outcome.error).toBeUndefined()
    expect(outcome.status).toBe("succeeded")
  }, 180_000)
  afterAll(async () => {
    await database?.close()
  })

  const query = (sql: string, params: ReadonlyArray<unknown> = []) => database.query(sql, params)
  const table = (name: string) => Sql.qualified(database.schema, name)

  it("finds IT directors at companies of 1,000+ employees in California from typed columns and labels", async () => {
    const typed = await query(
      `SELECT c.match_id, c.company_size::int AS company_size, c.location_city
       FROM ${table("contacts")} c
       JOIN ${table("job_departments")} d ON d.code = c.job_department
       JOIN ${table("job_levels")} l ON l.code = c.job_level
       WHERE d.label = 'IT' AND l.label = 'Director'
         AND c.company_size >= 1000 AND c.location_region = 'CA' AND c.location_country = 'US'
       ORDER BY c.match_id`,
    )
    // What the same question took before: expressions on the JSON.
    const fromJson = await query(
      `SELECT match_id FROM ${table("contacts")}
       WHERE _raw->>'job_department' = 'it_is' AND _raw->>'job_level' = 'dir'
         AND (_raw->'company'->>'size')::int >= 1000 AND _raw->>'location' LIKE '%, CA, US'
       ORDER BY match_id`,
    )
    expect(typed.length).toBeGreaterThan(0)
    expect(typed.map((row) => row.match_id)).toEqual(fromJson.map((row) => row.match_id))
    for (const row of typed) {
      const source = sandbox.dataset.contactByMatchId(String(row.match_id))
      expect(row.company_size).toBe(source?.company.size)
      expect(source?.location).toBe(`${row.location_city}, CA, US`)
    }
    // The labeled view answers it too.
    const [viaView] = await query(
      `SELECT count(*)::int AS n FROM ${table("contacts_labeled")}
       WHERE job_department_label = 'IT' AND job_level_label = 'Director' AND company_size >= 1000 AND location_region = 'CA'`,
    )
    expect(viaView?.n).toBe(typed.length)
  })

  it("joins a contact to its site through position_location_id", async () => {
    const [counts] = await query(
      `SELECT count(*)::int AS sited, count(s.location_id)::int AS joined,
              count(*) FILTER (WHERE s.city IS DISTINCT FROM c.location_city)::int AS elsewhere
       FROM ${table("contacts")} c
       LEFT JOIN ${table("company_sites")} s ON s.location_id = c.position_location_id
       WHERE c.position_location_id IS NOT NULL`,
    )
    expect(counts?.sited).toBeGreaterThan(0)
    expect(counts?.joined).toBe(counts?.sited)
    // A contact at a site is located where the site is.
    expect(counts?.elsewhere).toBe(0)
    const sample = await query(
      `SELECT c.match_id, s.location_id::bigint AS location_id, s.is_hq, s.street_1, s.company_id::bigint AS company_id
       FROM ${table("contacts")} c JOIN ${table("company_sites")} s ON s.location_id = c.position_location_id LIMIT 20`,
    )
    for (const row of sample) {
      const source = sandbox.dataset.contactByMatchId(String(row.match_id))
      const address = source?.addresses.find((candidate) => candidate.location_id === Number(row.location_id))
      expect(address?.street_1).toBe(row.street_1)
      expect(address?.is_hq).toBe(row.is_hq)
      expect(Number(row.company_id)).toBe(source?.company_id)
    }
    // One row per site, however many contacts list it.
    const [sites] = await query(
      `SELECT count(*)::int AS rows, count(DISTINCT location_id)::int AS sites FROM ${table("company_sites")}`,
    )
    expect(sites?.rows).toBe(sites?.sites)
  })

  it("holds every social profile as a row, and the companies' documented fields typed", async () => {
    const [profiles] = await query(
      `SELECT (SELECT count(*) FROM ${table("contact_social_profiles")})::int AS rows,
              (SELECT coalesce(sum(jsonb_array_length(_raw->'social_profiles')), 0) FROM ${table("contacts")})::int AS listed,
              (SELECT count(*) FROM ${table("contact_social_profiles")} WHERE type IN ('facebook', 'twitter'))::int AS others`,
    )
    expect(profiles?.rows).toBe(profiles?.listed)
    expect(profiles?.others).toBeGreaterThan(0)
    const companies = await query(
      `SELECT company_id::bigint AS company_id, size::int AS size, size_range, revenue::float8 AS revenue, revenue_range,
              is_international, verified, naics_codes FROM ${table("companies")}`,
    )
    expect(companies.length).toBe(10)
    for (const row of companies) {
      const source = sandbox.dataset.companyTechnologiesById(Number(row.company_id))
      expect(row).toMatchObject({
        size: source?.company.size,
        size_range: source?.company.size_range,
        revenue: source?.company.revenue,
        revenue_range: source?.company.revenue_range,
        verified: source?.verified,
      })
      // One organization may come once per country (is_international not filtered): either value.
      expect(typeof row.is_international).toBe("boolean")
    }
  })

  it("describes the columns analysts filter on", async () => {
    const comments = await query(
      `SELECT a.attname AS name, col_description(a.attrelid, a.attnum) AS doc FROM pg_attribute a
       WHERE a.attrelid = $1::regclass AND a.attname IN ('company_size', 'location_region', 'job_level')`,
      [table("contacts")],
    )
    expect(comments).toHaveLength(3)
    for (const comment of comments) expect(String(comment.doc ?? "")).not.toBe("")
  })
})
