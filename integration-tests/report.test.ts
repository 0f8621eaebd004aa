/**
 * `salesintel report` end to end: the sandbox provider -> a sync -> the report's numbers, checked
 * against SQL and arithmetic of the test's own over the synced tables (on a real Postgres and on
 * PGlite); the HTML file self-contained and escaped; the command refusing a database that no sync
 * wrote; and the file drawn by headless Chromium without an error.
 */
import { execFile } from "node:child_process"
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { fileURLToPath, pathToFileURL } from "node:url"
import { Report, ReportData, Sync } from "@salesintel/cli"
import { Ddl, Sql } from "@salesintel/postgres"
import * as Effect from "effect/Effect"
import puppeteer, { type Page } from "puppeteer-core"
import { afterAll, beforeAll, describe, expect, it, onTestFinished } from "vitest"
import { backends, open } from "../packages/postgres/src/testing/Backends.ts"
import { runInProcess } from "./bins.ts"
import { fixtureAffinity, marketFixture } from "./market-fixture.ts"
import { fastPace, sandboxForFile } from "./sandbox.ts"

const chromium = "/usr/bin/chromium"

const sandbox = sandboxForFile({ seed: 7, contacts: 10_000, companies: 1_000 })

const silent = { isTTY: false, write: () => true }

/**
 * The pairs of texts of one chart that overlap as the browser lays them out (by more than half a
 * pixel each way; touching is not overlapping; the lines of one label are one), named by the
 * section and the texts.
 */
const textOverlaps = (page: Page) =>
  page.$$eval("section .chart svg", (svgs) =>
    svgs.flatMap((svg) => {
      const boxes = [...svg.querySelectorAll("text")]
        .filter((text) => (text.textContent ?? "").trim().length > 0)
        .map((text) => ({
          text: text.textContent ?? "",
          // The lines of one label (a run's number and date) share its transform, each at its y.
          label: text.getAttribute("transform"),
          line: text.getAttribute("y"),
          box: text.getBoundingClientRect(),
        }))
      const section = svg.closest("section")?.id ?? "?"
      return boxes.flatMap((one, index) =>
        boxes
          .slice(index + 1)
          .filter(
            (other) =>
              (one.label === null || one.label !== other.label || one.line === other.line) &&
              Math.min(one.box.right, other.box.right) - Math.max(one.box.left, other.box.left) > 0.5 &&
              Math.min(one.box.bottom, other.box.bottom) - Math.max(one.box.top, other.box.top) > 0.5,
          )
          .map((other) => `${section}: "${one.text}" over "${other.text}"`),
      )
    }),
  )

const setGeneration = sandbox.setGeneration

/** Strings that would run or break out of their element if the report did not escape them. */
const hostile = {
  category: "<script>alert('category')</script>",
  product: '<img src="x" onerror="alert(1)">',
  department: '"><svg onload="alert(2)">',
}

/** A program's exit code and output (the lint and git checks of a report written into the checkout). */
const run = (file: string, args: ReadonlyArray<string>, cwd: string) =>
  new Promise<{ code: number; stdout: string; stderr: string }>((resolve) => {
    execFile(file, [...args], { cwd, timeout: 60_000 }, (error, stdout, stderr) => {
      resolve({ code: error === null ? 0 : Number(error.code ?? 1), stdout, stderr })
    })
  })

/** `salesintel ARGS`, in process: what it prints and its exit code are the command's logic. */
const runCli = (args: ReadonlyArray<string>) => runInProcess("salesintel", args, { env: {} })

// The test's own size bands, written out independently of the report's SizeBands.ts.
const band = (size: number | null): string => {
  if (size === null) return "unknown"
  if (size < 50) return "1-49"
  if (size < 200) return "50-199"
  if (size < 1000) return "200-999"
  if (size < 5000) return "1,000-4,999"
  return "5,000+"
}

describe.each(await backends())("salesintel report on $name", (backend) => {
  let database: Awaited<ReturnType<typeof open>>
  let refreshRunId = 0
  /** The domains the syncs watched. */
  let watched: ReadonlyArray<string> = []
  beforeAll(async () => {
    database = await open(backend, "e2e report")
    const config = {
      api_key: sandbox.key(),
      base_url: sandbox.url,
      credit_budget: 5_000,
      requests_per_minute: fastPace,
      contacts: {
        searches: [
          {
            name: "leaders",
            filters: { job_departments: ["it_is", "sale", "fnad"], job_levels: ["vp", "dir"] },
          },
        ],
      },
      companies: { domains: sandbox.dataset.companies.slice(0, 60).map((company) => company.domain) },
      taxonomy: { full_crawl: true },
    }
    const first = await database.run(Sync.sync({ config, schema: database.schema, progress: silent }))
    expect(first.status).toBe("succeeded")
    expect(first.creditsSpent).toBeGreaterThan(0)
    // A second run buys nothing: the credits chart has a run of zero too.
    const second = await database.run(Sync.sync({ config, schema: database.schema, progress: silent }))
    expect(second.status).toBe("succeeded")
    // Then the companies of 150 of the contacts are watched too (observed before the provider
    // moves on): the contacts who leave them are the champion moves.
    const theirs = await database.query(
      `SELECT DISTINCT company_id FROM ${table("contacts")} WHERE company_id IS NOT NULL ORDER BY company_id LIMIT 150`,
    )
    config.companies.domains = [
      ...config.companies.domains,
      ...theirs.flatMap((row) => sandbox.dataset.companyById(Number(row.company_id))?.domain ?? []),
    ]
    watched = config.companies.domains
    const third = await database.run(Sync.sync({ config, schema: database.schema, progress: silent }))
    expect(third.status).toBe("succeeded")
    // The provider moves on, and a full refresh buys everything again: the "what changed" sections.
    await setGeneration(2)
    try {
      const refresh = await database.run(
        Sync.sync({
          config,
          schema: database.schema,
          progress: silent,
          fullRefresh: ["contacts", "companies"],
        }),
      )
      expect(refresh.status).toBe("succeeded")
      refreshRunId = refresh.runId
    } finally {
      await setGeneration(0)
    }
    const [company] = await database.query(`SELECT company_id FROM ${table("companies")} LIMIT 1`)
    await database.query(
      `INSERT INTO ${table("company_technologies")} (company_id, position, category, subcategory, product, vendor, in_use, _synced_at)
       VALUES ($1, 9999, $2, NULL, $3, NULL, true, now())`,
      [company?.company_id, hostile.category, hostile.product],
    )
    await database.query(
      `UPDATE ${table("contacts")} SET job_department = $1 WHERE match_id = (SELECT min(match_id) FROM ${table("contacts")})`,
      [hostile.department],
    )
    await database.query(
      `INSERT INTO ${table("technology_changes")} (company_id, category, product, change, observed_at)
       VALUES ($1, $2, $3, 'adopted', now())`,
      [company?.company_id, hostile.category, hostile.product],
    )
    await database.query(
      `INSERT INTO ${table("job_changes")} (match_id, to_job_department, to_job_level, changed, observed_at)
       VALUES ('m-hostile', $1, 'vp', ARRAY['department'], now())`,
      [hostile.department],
    )
  }, 180_000)
  afterAll(async () => {
    await database?.close()
  })

  const table = (name: string) => Sql.qualified(database.schema, name)
  const read = () => database.run(ReportData.read(database.schema, backend.name))

  it("each chart's numbers are what SQL over the synced tables says", async () => {
    const data = await read()
    const [companyCount] = await database.query(`SELECT count(*)::int AS n FROM ${table("companies")}`)
    const companies = Number(companyCount?.n)
    // The 60 domains, and the companies of 150 contacts (some of them among the 60).
    expect(companies).toBe(new Set(watched).size)
    expect(data.companies).toBe(companies)

    // By category: every category, straight from company_technologies (not through the view).
    const byCategory = await database.query(
      `SELECT category, count(DISTINCT company_id)::int AS n FROM ${table("company_technologies")}
       WHERE in_use IS NOT FALSE GROUP BY category`,
    )
    expect(data.categories.length).toBe(byCategory.length)
    expect(data.categories.length).toBeGreaterThan(3)
    for (const row of byCategory) {
      const shown = data.categories.find((c) => c.category === row.category)
      expect(shown?.companies, String(row.category)).toBe(row.n)
      expect(shown?.share).toBeCloseTo(Number(row.n) / companies, 4)
    }
    expect(data.categories.map((c) => c.category)).toContain(hostile.category)

    // By product: the top N, counted here from the rows themselves.
    const uses = await database.query(
      `SELECT company_id::text AS company, product, vendor, in_use FROM ${table("company_technologies")}`,
    )
    const users = new Map<string, Set<string>>()
    for (const use of uses) {
      if (use.in_use === false) continue
      const key = JSON.stringify([use.product, use.vendor])
      users.set(key, (users.get(key) ?? new Set()).add(String(use.company)))
    }
    expect(data.products.length).toBe(Math.min(ReportData.defaultLimits.products, users.size))
    for (const product of data.products) {
      const count = users.get(JSON.stringify([product.product, product.vendor]))?.size
      expect(product.companies, String(product.product)).toBe(count)
      expect(product.share).toBeCloseTo(product.companies / companies, 4)
    }
    const shownKeys = new Set(data.products.map((p) => JSON.stringify([p.product, p.vendor])))
    const leastShown = Math.min(...data.products.map((p) => p.companies))
    for (const [key, set] of users) if (!shownKeys.has(key)) expect(set.size).toBeLessThanOrEqual(leastShown)
    expect(data.products.map((p) => p.companies)).toEqual(
      [...data.products.map((p) => p.companies)].sort((a, b) => b - a),
    )

    // By size band: each band's companies and, per top category, how many of them use it.
    const sizes = await database.query(
      `SELECT company_id::text AS company, size::int AS size FROM ${table("companies")}`,
    )
    const bandOf = new Map(
      sizes.map((row) => [String(row.company), band(row.size === null ? null : Number(row.size))]),
    )
    const topCategories = data.categories
      .flatMap((c) => (c.category === null ? [] : [c.category]))
      .slice(0, 6)
    expect(data.sizeBands.categories).toEqual(topCategories)
    const bandCounts = new Map<string, number>()
    for (const name of bandOf.values()) bandCounts.set(name, (bandCounts.get(name) ?? 0) + 1)
    expect(data.sizeBands.bands.map((b) => b.band).sort()).toEqual([...bandCounts.keys()].sort())
    expect(data.sizeBands.bands.length).toBeGreaterThan(1)
    const categoryUses = await database.query(
      `SELECT DISTINCT company_id::text AS company, category FROM ${table("company_technologies")} WHERE in_use IS NOT FALSE`,
    )
    for (const shown of data.sizeBands.bands) {
      expect(shown.bandCompanies, shown.band).toBe(bandCounts.get(shown.band))
      for (const category of topCategories) {
        const expected = categoryUses.filter(
          (use) => use.category === category && bandOf.get(String(use.company)) === shown.band,
        ).length
        expect(shown.using[category], `${shown.band} ${category}`).toBe(expected)
      }
    }

    // Contacts by department and level: every pair, keyed by the codes.
    const pairs = await database.query(
      `SELECT job_department, job_level, count(*)::int AS n FROM ${table("contacts")} GROUP BY 1, 2`,
    )
    expect(data.departmentLevels.length).toBe(pairs.length)
    expect(pairs.length).toBeGreaterThanOrEqual(6)
    for (const pair of pairs) {
      const shown = data.departmentLevels.find(
        (row) => row.department === pair.job_department && row.level === pair.job_level,
      )
      expect(shown?.contacts, `${pair.job_department} ${pair.job_level}`).toBe(pair.n)
    }
    // Shown with the lookup tables' labels, and as the code itself where they have none.
    const labelsOf = async (name: string) =>
      new Map(
        (await database.query(`SELECT code, label FROM ${table(name)}`)).map((row) => [row.code, row.label]),
      )
    const departmentLabels = await labelsOf("job_departments")
    const levelLabels = await labelsOf("job_levels")
    for (const row of data.departmentLevels) {
      expect(row.departmentLabel).toBe(
        row.department === null ? null : (departmentLabels.get(row.department) ?? row.department),
      )
      expect(row.levelLabel).toBe(row.level === null ? null : (levelLabels.get(row.level) ?? row.level))
    }
    expect(data.departmentLevels.map((row) => row.departmentLabel)).toContain("IT")
    expect(data.departmentLevels.map((row) => row.departmentLabel)).toContain(hostile.department)
    const [contactCount] = await database.query(`SELECT count(*)::int AS n FROM ${table("contacts")}`)
    expect(data.contacts).toBe(contactCount?.n)

    // Credits per run: the streams' credits of each run row, and the provider's own count.
    const runs = await database.query(
      `SELECT id::int AS id, coalesce((SELECT sum((value->>'credits')::int) FROM jsonb_each(streams)), 0)::int AS credits
       FROM ${table("_sync_runs")} ORDER BY id`,
    )
    expect(data.runs.map((run) => [run.id, run.credits])).toEqual(runs.map((run) => [run.id, run.credits]))
    expect(data.runs.map((run) => run.credits)[1]).toBe(0)
    expect(data.runs[0]?.credits).toBeGreaterThan(0)
  })

  it("the 'what changed' numbers are what SQL over the change tables says", async () => {
    const { changes } = await read()
    // Per run: adoptions, drops and job changes, counted here from the rows.
    const perRun = await database.query(
      `SELECT run_id::int AS run_id,
         (SELECT count(*)::int FROM ${table("technology_changes")} t WHERE t.run_id IS NOT DISTINCT FROM r.run_id AND t.change = 'adopted') AS adopted,
         (SELECT count(*)::int FROM ${table("technology_changes")} t WHERE t.run_id IS NOT DISTINCT FROM r.run_id AND t.change = 'dropped') AS dropped,
         (SELECT count(*)::int FROM ${table("job_changes")} j WHERE j.run_id IS NOT DISTINCT FROM r.run_id) AS jobs
       FROM (SELECT run_id FROM ${table("technology_changes")} UNION SELECT run_id FROM ${table("job_changes")}) r
       ORDER BY run_id NULLS FIRST`,
    )
    expect(changes.runs.map((run) => [run.runId, run.adopted, run.dropped, run.jobChanges])).toEqual(
      perRun.map((row) => [row.run_id, row.adopted, row.dropped, row.jobs]),
    )
    // The refresh run (the third) found changes of every kind; the hand-made rows have no run.
    const refresh = changes.runs.find((run) => run.runId === refreshRunId)
    expect(refresh?.adopted).toBeGreaterThan(0)
    expect(refresh?.dropped).toBeGreaterThan(0)
    expect(refresh?.jobChanges).toBeGreaterThan(0)
    // Per product: each row's totals from the rows themselves.
    const rows = await database.query(`SELECT product, vendor, change FROM ${table("technology_changes")}`)
    expect(changes.products.length).toBeGreaterThan(1)
    for (const product of changes.products) {
      const mine = rows.filter((row) => row.product === product.product && row.vendor === product.vendor)
      expect([product.adopted, product.dropped], String(product.product)).toEqual([
        mine.filter((row) => row.change === "adopted").length,
        mine.filter((row) => row.change === "dropped").length,
      ])
      expect(product.byRun.reduce((sum, [, adopted]) => sum + adopted, 0)).toBe(product.adopted)
    }
    // Job changes: every change counted once, under the labels of the department and level moved to.
    const jobs = await database.query(`SELECT count(*)::int AS n FROM ${table("job_changes")}`)
    expect(changes.jobs.reduce((sum, row) => sum + row.changes, 0)).toBe(jobs[0]?.n)
    expect(changes.jobs.map((row) => row.departmentLabel)).toContain(hostile.department)
  })

  it("the install base, displacement and champion numbers are what SQL over the observations says", async () => {
    const { intelligence } = await read()
    // The top products: the most in use at their companies' latest observation, counted here.
    const inUse = await database.query(
      `WITH latest AS (SELECT company_id, max(observed_at) AS at FROM ${table("company_observations")} GROUP BY company_id)
       SELECT t.product, t.vendor, count(DISTINCT t.company_id)::int AS companies
       FROM ${table("technology_observations")} t JOIN latest l ON l.company_id = t.company_id AND l.at = t.observed_at
       GROUP BY t.product, t.vendor ORDER BY companies DESC, product, vendor LIMIT ${ReportData.defaultLimits.trendProducts}`,
    )
    expect(intelligence.trends.map((trend) => [trend.product, trend.vendor, trend.inUse])).toEqual(
      inUse.map((row) => [row.product, row.vendor, row.companies]),
    )
    // Each month's share: companies whose last observation of the month showed it, over those observed.
    const month = (column: string) => `to_char(${column} AT TIME ZONE 'UTC', 'YYYY-MM-01')`
    for (const trend of intelligence.trends) {
      const rows = await database.query(
        `WITH last AS (
           SELECT DISTINCT ON (company_id, ${month("observed_at")}) company_id, observed_at, ${month("observed_at")} AS month
           FROM ${table("company_observations")} ORDER BY company_id, ${month("observed_at")}, observed_at DESC)
         SELECT l.month, count(DISTINCT l.company_id)::int AS observed, count(DISTINCT t.company_id)::int AS using
         FROM last l
         LEFT JOIN ${table("technology_observations")} t ON t.company_id = l.company_id AND t.observed_at = l.observed_at
           AND t.product = $1 AND t.vendor IS NOT DISTINCT FROM $2
         GROUP BY 1 HAVING count(t.company_id) > 0 ORDER BY 1`,
        [trend.product, trend.vendor],
      )
      expect(
        trend.points.map((point) => [point.month, point.companiesObserved, point.companiesUsing]),
        String(trend.product),
      ).toEqual(rows.map((row) => [row.month, row.observed, row.using]))
      for (const point of trend.points)
        expect(point.share).toBeCloseTo(point.companiesUsing / point.companiesObserved, 4)
    }
    // Replacements, worked out here from the observation rows (not through the views' SQL): each
    // company's observations in time, what each shows that the one before did not (adopted) and the
    // reverse (dropped), then every drop and adoption of a rival of its subcategory within 90 days.
    const observed = await database.query(
      `SELECT company_id::text AS company, observed_at FROM ${table("company_observations")} ORDER BY company_id, observed_at`,
    )
    const listed = await database.query(
      `SELECT company_id::text AS company, observed_at, category, subcategory, product, vendor
       FROM ${table("technology_observations")}`,
    )
    type Listed = { category: unknown; subcategory: unknown; product: unknown; vendor: unknown }
    const at = (company: unknown, time: unknown) => `${String(company)}@${(time as Date).toISOString()}`
    const productsAt = new Map<string, Map<string, Listed>>()
    for (const row of listed) {
      const key = at(row.company, row.observed_at)
      const products = productsAt.get(key) ?? new Map<string, Listed>()
      products.set(`${String(row.product)}|${String(row.vendor)}`, row as unknown as Listed)
      productsAt.set(key, products)
    }
    const steps: Array<{ company: string; time: number; adopted: Array<Listed>; dropped: Array<Listed> }> = []
    for (const [index, row] of observed.entries()) {
      const before = observed[index - 1]
      if (before === undefined || before.company !== row.company) continue
      const now = productsAt.get(at(row.company, row.observed_at)) ?? new Map<string, Listed>()
      const then = productsAt.get(at(before.company, before.observed_at)) ?? new Map<string, Listed>()
      steps.push({
        company: String(row.company),
        time: (row.observed_at as Date).getTime(),
        adopted: [...now].filter(([key]) => !then.has(key)).map(([, product]) => product),
        dropped: [...then].filter(([key]) => !now.has(key)).map(([, product]) => product),
      })
    }
    const pairs = new Map<string, Set<string>>()
    for (const drop of steps)
      for (const adoption of steps.filter(
        (step) => step.company === drop.company && Math.abs(step.time - drop.time) <= 90 * 86_400_000,
      ))
        for (const from of drop.dropped)
          for (const to of adoption.adopted)
            if (
              from.subcategory !== null &&
              from.subcategory === to.subcategory &&
              from.category === to.category &&
              `${from.product}|${from.vendor}` !== `${to.product}|${to.vendor}`
            ) {
              const key = `${String(from.product)} -> ${String(to.product)}`
              pairs.set(key, (pairs.get(key) ?? new Set()).add(drop.company))
            }
    expect(pairs.size).toBeGreaterThan(0)
    const shown = intelligence.displacements.map(
      (row) => [`${row.droppedProduct} -> ${row.adoptedProduct}`, row.companies] as const,
    )
    expect(shown).toHaveLength(Math.min(pairs.size, ReportData.defaultLimits.intelligenceRows))
    for (const [pair, companies] of shown) expect(companies, pair).toBe(pairs.get(pair)?.size)
    expect(shown.map(([, companies]) => companies)).toEqual(
      [...pairs.values()]
        .map((companies) => companies.size)
        .sort((a, b) => b - a)
        .slice(0, shown.length),
    )
    // Champion moves: contacts who left a company, by the products there before the move was seen.
    const moved = await database.query(
      `SELECT t.product, count(DISTINCT j.change_id)::int AS moves
       FROM ${table("job_changes")} j
       JOIN LATERAL (SELECT max(o.observed_at) AS at FROM ${table("company_observations")} o
         WHERE o.company_id = j.from_company_id AND o.observed_at < j.observed_at) s ON true
       JOIN ${table("technology_observations")} t ON t.company_id = j.from_company_id AND t.observed_at = s.at
       WHERE 'company' = ANY(j.changed) AND j.to_company_id IS NOT NULL AND j.to_company_id <> j.from_company_id
       GROUP BY t.product ORDER BY moves DESC, t.product`,
    )
    expect(moved.length).toBeGreaterThan(0)
    expect(intelligence.champions.map((row) => [row.product, row.moves])).toEqual(
      moved.slice(0, ReportData.defaultLimits.intelligenceRows).map((row) => [row.product, row.moves]),
    )
    // Each move lands in one of the three: the company joined uses it, does not, was never observed.
    for (const row of intelligence.champions)
      expect(row.joinedUsing + row.joinedNotUsing + row.joinedUnobserved).toBe(row.moves)
  })

  it("the HTML is one self-contained file: ten inline SVG charts, no script, nothing by URL, every string escaped", async () => {
    const html = await database.run(Report.generate({ schema: database.schema, target: backend.name }))
    expect(html.match(/<svg[\s>]/g)?.length).toBe(10)
    expect(html).not.toMatch(/<script/i)
    expect(html).not.toMatch(/<link|<iframe|<img|@import/i)
    expect(html).not.toMatch(/(?:src|href)\s*=\s*["']?\s*(?:https?:)?\/\//i)
    expect(html).not.toMatch(/url\(\s*["']?(?:https?:)?\/\//i)
    // Every hostile string shows as text: escaped wherever it lands.
    expect(html).not.toContain(hostile.category)
    expect(html).not.toContain(hostile.product)
    expect(html).not.toContain(hostile.department)
    // No element carries an event handler: the hostile attributes stayed text.
    expect(html).not.toMatch(/<[a-z][^>]*\son[a-z]+\s*=/i)
    expect(html).toContain("&lt;script&gt;alert(&#39;category&#39;)&lt;/script&gt;")
    expect(html).toContain("&quot;&gt;&lt;svg onload=&quot;alert(2)&quot;&gt;")
    // The numbers behind each chart are in a table under it (folded), and again for print.
    expect(html.match(/<details><summary>[^<]*<\/summary><table>/g)?.length).toBe(10)
    expect(html.match(/<div class="print-numbers"><table>/g)?.length).toBe(10)
    // Every chart titled (its accessible name); no CDATA a plain HTML parser stumbles on.
    expect(html.match(/<svg\b[^>]*role="img"[^>]*><title>[^<]+<\/title>/g)?.length).toBe(10)
    expect(html).not.toContain("CDATA")
    // No market declared: the market's section says how to declare one, in one line.
    expect(html).toMatch(
      /<section id="market">.*class="nodata">No market[^<]*market: \{ours, rivals, complements\}/,
    )
  })

  it("a schema with the tables but no data: every section says no data", async () => {
    const empty = `${database.schema} empty`
    try {
      await database.run(Ddl.ensure(empty))
      const html = await database.run(Report.generate({ schema: empty, target: backend.name }))
      expect(html.match(/class="nodata">no data</g)?.length).toBe(10)
      expect(html).not.toMatch(/<svg[\s>]/)
    } finally {
      await database.query(`DROP SCHEMA IF EXISTS ${Sql.ident(empty)} CASCADE`)
    }
  })

  it("Your market: the shares, the accounts to act on and the products beside ours, from the market's table and views", async () => {
    const marketSchema = `${database.schema} market`
    try {
      await database.run(Ddl.ensure(marketSchema))
      // Before a market is declared the section says how; a loader with the market but an empty
      // one says so too (the table is there, nothing in it).
      const before = await database.run(ReportData.read(marketSchema, backend.name))
      expect(before.market._tag).toBe("Undeclared")
      for (const statement of marketFixture(marketSchema)) await database.query(statement)
      const limits = { ...ReportData.defaultLimits, opportunities: 5, affinity: 3 }
      const { market } = await database.run(ReportData.read(marketSchema, backend.name, limits))
      if (market._tag !== "Declared") throw new Error("the fixture's market is declared")
      expect(market.shares.map((point) => [point.month, point.role, point.companiesUsing])).toEqual([
        ["2026-09-01", "complement", 35],
        ["2026-09-01", "ours", 24],
        ["2026-09-01", "rival", 31],
        ["2026-10-01", "complement", 38],
        ["2026-10-01", "ours", 30],
        ["2026-10-01", "rival", 31],
        ["2026-11-01", "complement", 43],
        ["2026-11-01", "ours", 34],
        ["2026-11-01", "rival", 34],
      ])
      // The latest five of seven, each with its company's domain and size, and its evidence.
      expect(market.opportunities.total).toBe(7)
      expect(
        market.opportunities.rows.map((row) => [row.companyDomain, row.happenedOn, row.contactName]),
      ).toEqual([
        ["acmesilveranalytics.com", "2026-11-20", null],
        ["lumenacmefoods.com", "2026-11-19", null],
        ["terrafalconsystems.com", "2026-11-18", null],
        ["redwoodbluemanufacturing.com", "2026-11-17", "Betty Lewis"],
        ["polarvertexmotors.com", "2026-11-16", "Elizabeth Lewis"],
      ])
      // Ours first in every pair (matched by product, or by vendor: Notion Labs'), a pair of two of
      // ours once, a pair without ours left out; the three used together most of four.
      expect(market.affinity.total).toBe(fixtureAffinity.length)
      expect(
        market.affinity.rows.map((row) => [row.ourProduct, row.product, row.companiesBoth, row.lift]),
      ).toEqual(fixtureAffinity.slice(0, 3))
      const html = await database.run(Report.generate({ schema: marketSchema, target: backend.name, limits }))
      expect(html).toContain('<section id="market-share">')
      expect(html).toContain("Your market: accounts to act on (top 5 of 7)")
      expect(html).toContain("Your market: what is used beside ours (top 3 of 4)")
      expect(html).toContain("Asana + Google Workspace (Google)")
      expect(html.match(/<svg[\s>]/g)?.length).toBe(2)
    } finally {
      await database.query(`DROP SCHEMA IF EXISTS ${Sql.ident(marketSchema)} CASCADE`)
    }
  })

  it("a schema no sync wrote is refused, naming it and what is missing, and nothing is created", async () => {
    const missing = `${database.schema} missing`
    const error = await database.run(Effect.flip(Report.generate({ schema: missing, target: backend.name })))
    expect(error._tag).toBe("NotSynced")
    expect(error.message).toContain(`no synced data in schema "${missing}"`)
    expect(error.message).toContain("_sync_runs")
    const [schema] = await database.query(
      "SELECT count(*)::int AS n FROM information_schema.schemata WHERE schema_name = $1",
      [missing],
    )
    expect(schema?.n).toBe(0)
  })

  it.runIf(backend.name === "pglite")(
    "the command writes the file from a PGlite directory, refuses one that holds no database, and Chromium draws it without an error",
    { timeout: 180_000 },
    async () => {
      const dir = mkdtempSync(join(tmpdir(), "salesintel-report-"))
      onTestFinished(() => rmSync(dir, { recursive: true, force: true }))
      const out = join(dir, "report.html")
      const nowhere = join(tmpdir(), `salesintel-no-db-${Math.random().toString(36).slice(2)}`)
      const refused = await runCli(["report", "--pglite-dir", nowhere, "--out", out])
      expect(refused.code).toBe(1)
      expect(refused.stderr).toContain(`no database in ${nowhere}`)
      expect(existsSync(nowhere)).toBe(false)
      expect(existsSync(out)).toBe(false)

      // PGlite's files are one process's at a time: the test lets go of them while the command runs.
      await database.suspend()
      try {
        const written = await runCli([
          "report",
          "--pglite-dir",
          String(database.pgliteDir),
          "--schema",
          database.schema,
          "--out",
          out,
        ])
        expect(written.stderr).toBe("")
        expect(written.code).toBe(0)
        expect(written.stdout).toContain(`wrote ${out}`)
      } finally {
        await database.resume()
      }
      const html = readFileSync(out, "utf8")
      expect(html.match(/<svg[\s>]/g)?.length).toBe(10)
      // Written into a checkout as the README shows (report.html): git ignores it, and lint passes
      // over it (it is plain HTML with titled charts, were it checked).
      const root = fileURLToPath(new URL("..", import.meta.url))
      const inCheckout = join(root, "report.html")
      writeFileSync(inCheckout, html)
      try {
        // Git ignores it (read from .gitignore: a checkout CI makes need not be a git repository).
        const ignores = readFileSync(join(root, ".gitignore"), "utf8").split("\n")
        expect(ignores).toContain("/report.html")
        // `npm run lint` with the report in the checkout.
        const lint = await run(join(root, "node_modules/.bin/biome"), ["check", "."], root)
        expect(lint.code, lint.stdout + lint.stderr).toBe(0)
        const checked = await run(
          join(root, "node_modules/.bin/biome"),
          ["check", "--vcs-use-ignore-file=false", "report.html"],
          root,
        )
        expect(checked.stdout + checked.stderr).toContain("Checked 1 file")
        expect(checked.code, checked.stdout + checked.stderr).toBe(0)
      } finally {
        rmSync(inCheckout, { force: true })
      }

      // Chromium comes from the system (Debian's package, which .ci/run installs): CI must have it.
      if (!existsSync(chromium)) {
        if (process.env.CI === "true")
          throw new Error(`CI=true needs Chromium at ${chromium} (.ci/run installs it)`)
        console.warn(`no Chromium at ${chromium}: the report's drawing in a browser is not checked`)
        return
      }
      const browser = await puppeteer.launch({
        executablePath: chromium,
        headless: true,
        args: ["--no-sandbox", "--disable-gpu", "--disable-background-networking"],
        timeout: 60_000,
      })
      try {
        const page = await browser.newPage()
        const problems: Array<string> = []
        const requests: Array<string> = []
        page.on("pageerror", (error) => problems.push(`page error: ${String(error)}`))
        page.on("console", (message) => {
          if (message.type() === "error" || message.type() === "warn")
            problems.push(`console ${message.type()}: ${message.text()}`)
        })
        page.on("dialog", (dialog) => {
          problems.push(`dialog: ${dialog.message()}`)
          void dialog.dismiss()
        })
        page.on("request", (request) => requests.push(request.url()))
        page.on("requestfailed", (request) => problems.push(`request failed: ${request.url()}`))
        const url = pathToFileURL(out).href
        await page.goto(url, { waitUntil: "load", timeout: 60_000 })
        const charts = await page.$$eval("section .chart svg", (svgs) =>
          svgs.map((svg) => {
            const box = svg.getBoundingClientRect()
            return { width: box.width, height: box.height, shapes: svg.querySelectorAll("path, rect").length }
          }),
        )
        const noData = await page.$$eval(".nodata", (nodes) =>
          nodes.map((node) => node.closest("section")?.id),
        )
        expect(problems).toEqual([])
        // The file is the only thing loaded: nothing from the network.
        expect(requests).toEqual([url])
        // Only the market's section, which says how to declare one (this sync declared none).
        expect(noData).toEqual(["market"])
        // As Chromium draws them, no text of a chart covers another (value labels above all).
        expect(await textOverlaps(page)).toEqual([])
        expect(charts.length).toBe(10)
        for (const chart of charts) {
          expect(chart.width).toBeGreaterThan(300)
          expect(chart.height).toBeGreaterThan(100)
          expect(chart.shapes).toBeGreaterThan(5)
        }
        // Printed, every table is open: on screen they are folded.
        const shownTables = () =>
          page.$$eval("table", (tables) => tables.filter((table) => table.checkVisibility()).length)
        expect(await shownTables()).toBe(0)
        await page.emulateMediaType("print")
        expect(await shownTables()).toBe(10)
        await page.emulateMediaType("screen")

        // The market's sections, from the fixture's market and views: drawn, the list shown open,
        // no text over another.
        const marketSchema = `${database.schema} market drawn`
        try {
          await database.run(Ddl.ensure(marketSchema))
          for (const statement of marketFixture(marketSchema)) await database.query(statement)
          const market = join(dir, "market.html")
          writeFileSync(
            market,
            await database.run(Report.generate({ schema: marketSchema, target: backend.name })),
          )
          await page.goto(pathToFileURL(market).href, { waitUntil: "load", timeout: 60_000 })
          const drawn = await page.$$eval("#market-share svg, #market-affinity svg", (svgs) =>
            svgs.map((svg) => svg.querySelectorAll("path, rect").length),
          )
          expect(drawn).toHaveLength(2)
          for (const shapes of drawn) expect(shapes).toBeGreaterThan(5)
          expect(await page.$eval("#market-opportunities table", (table) => table.checkVisibility())).toBe(
            true,
          )
          expect(await page.$$eval("#market-opportunities tbody tr", (rows) => rows.length)).toBe(7)
          expect(await textOverlaps(page)).toEqual([])
          expect(problems).toEqual([])
        } finally {
          await database.query(`DROP SCHEMA IF EXISTS ${Sql.ident(marketSchema)} CASCADE`)
        }
      } finally {
        await browser.close()
      }
    },
  )
})
