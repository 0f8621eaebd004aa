/**
 * The market views end to end, on Postgres and PGlite: three syncs 3 months apart (the last a few
 * days ago), each after the sandbox moved to its next generation, with a market in the config.
 * Each view then equals what the sandbox says the companies used at those observations (computed
 * here from its data, not from the tables); a market changed in SQL changes them with no re-sync,
 * a sync without a market section leaves it, one with a section replaces it, and a misspelt name
 * is refused with the nearest name before anything is bought.
 */
import { Sync } from "@salesintel/cli"
import { Sql } from "@salesintel/postgres"
import type { Sandbox } from "@salesintel/sandbox"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { backends, open } from "../packages/postgres/src/testing/Backends.ts"
import { sandboxForFile } from "./sandbox.ts"

const sandbox = sandboxForFile({ seed: 29, contacts: 5_000, companies: 300 })
const silent = { isTTY: false, write: () => true }
const generations = [0, 1, 2]
const day = 86_400_000

/** Calendar months back from `at` (UTC), same day and time. */
const monthsBefore = (at: Date, months: number) => {
  const moved = new Date(at)
  moved.setUTCMonth(moved.getUTCMonth() - months)
  return moved
}
/** The last sync 5 days ago (inside the 90 days), the others 3 and 6 calendar months before it. */
const last = new Date(Math.floor(Date.now() / day) * day - 5 * day + 12 * 3_600_000)
const times = [monthsBefore(last, 6), monthsBefore(last, 3), last].map((at) => at.toISOString())
const months = times.map((at) => `${at.slice(0, 7)}-01`)

interface Use {
  readonly product: string
  readonly vendor: string
  readonly category: string
}
type Role = "ours" | "rival" | "complement"
type Market = Readonly<Record<Role, ReadonlyArray<string>>>

/**
 * The market the syncs declare: two popular products of ours, rivals and complements named by
 * vendor and by product, and beside them the products the sandbox drops and adopts most between
 * the syncs (so the opportunities and the runs of use are not empty by chance of the seed).
 */
let declared: Market = { ours: [], rival: [], complement: [] }
const pickMarket = (): Market => {
  const ours = ["Marketo Engage", "Adobe Analytics"]
  const most = (from: number, change: "adopted" | "dropped", taken: ReadonlyArray<string>, n: number) => {
    const counts = new Map<string, number>()
    for (const c of sandbox.dataset.technologyChanges(generations[from]!, generations[from + 1]!))
      if (c.change === change && !taken.includes(c.product) && !taken.includes(c.vendor))
        counts.set(c.product, (counts.get(c.product) ?? 0) + 1)
    return [...counts]
      .sort((a, b) => b[1] - a[1] || (a[0] < b[0] ? -1 : 1))
      .slice(0, n)
      .map(([product]) => product)
  }
  const rival = ["HubSpot", "Pardot", "Mixpanel"]
  rival.push(...most(1, "dropped", [...ours, ...rival], 2), ...most(0, "adopted", [...ours, ...rival], 1))
  const complement = ["Salesforce Sales Cloud", "Slack"]
  complement.push(...most(1, "adopted", [...ours, ...rival, ...complement], 2))
  return { ours, rival, complement }
}
const configMarket = (market: Market) => ({
  ours: market.ours,
  rivals: market.rival,
  complements: market.complement,
})

/** The sandbox's data at each generation, made once. */
const atGeneration = new Map<number, Sandbox["dataset"]>()
/** What company `id` used at sync `step`, as the sandbox says it (each product once). */
const usesAt = (id: number, step: number): ReadonlyArray<Use> => {
  const generation = generations[step]!
  const dataset = atGeneration.get(generation) ?? sandbox.dataset.resized({ generation })
  atGeneration.set(generation, dataset)
  const seen = new Map<string, Use>()
  for (const t of dataset.companyTechnologiesById(id)!.technologies)
    if (t.in_use !== false)
      seen.set(`${t.product}\u0000${t.vendor}`, {
        product: String(t.product),
        vendor: String(t.vendor),
        category: String(t.category),
      })
  return [...seen.values()]
}
/** Whether `use` has `role` in `market`: its product or its vendor is named there. */
const hasRole = (market: Market, role: Role, use: Use) =>
  market[role].includes(use.product) || market[role].includes(use.vendor)

const sorted = (rows: ReadonlyArray<Record<string, unknown>>) =>
  rows.map((row) => JSON.stringify(row, Object.keys(row).sort())).sort()

describe.each(await backends())("the market views on $name", (backend) => {
  let database: Awaited<ReturnType<typeof open>>
  const table = (name: string) => Sql.qualified(database.schema, name)
  const ids = () => sandbox.dataset.companies.map((company) => company.id)
  const config = (market: Market | undefined) => ({
    api_key: "sandbox-full",
    base_url: sandbox.url,
    credit_budget: 100_000,
    requests_per_minute: 60_000,
    contacts: {
      refresh_after_days: 1,
      searches: [{ name: "leaders", filters: { job_levels: ["vp", "dir", "chf"] } }],
    },
    companies: { refresh_after_days: 1, domains: sandbox.dataset.companies.map((company) => company.domain) },
    ...(market === undefined ? {} : { market: configMarket(market) }),
  })
  const sync = (market: Market | undefined, startedAt: string) =>
    database.run(
      Sync.sync({
        config: config(market),
        schema: database.schema,
        progress: silent,
        startedAt: Date.parse(startedAt),
      }),
    )
  const query = async (sql: string) =>
    (await database.query(sql)).map((row) =>
      Object.fromEntries(
        Object.entries(row).map(([key, value]) => [key, value instanceof Date ? value.toISOString() : value]),
      ),
    )
  /** Contacts each sync bought. */
  const bought: Array<Set<string>> = []

  beforeAll(async () => {
    database = await open(backend, "e2e market")
    sandbox.reset()
    declared = pickMarket()
    for (const [step, generation] of generations.entries()) {
      await sandbox.setGeneration(generation)
      expect((await sync(declared, times[step]!)).status).toBe("succeeded")
      const rows = await database.query(`SELECT match_id FROM ${table("contacts")} WHERE fetched_at = $1`, [
        times[step],
      ])
      bought.push(new Set(rows.map((row) => String(row.match_id))))
    }
  }, 300_000)
  afterAll(async () => {
    await sandbox.setGeneration(0)
    await database?.close()
  })

  it("the profile: each company's products at its latest observation, and its roles", async () => {
    const expected = sandbox.dataset.companies.map((company) => {
      const uses = usesAt(company.id, 2)
      const count = (role: Role) => uses.filter((use) => hasRole(declared, role, use)).length
      return {
        company_id: company.id,
        company_domain: company.domain,
        company_size_range: company.sizeRange,
        observed_at: times[2],
        products: [...new Set(uses.map((use) => use.product))].sort(),
        uses_ours: count("ours") > 0,
        uses_rival: count("rival") > 0,
        ours_count: count("ours"),
        rivals_count: count("rival"),
        complements_count: count("complement"),
      }
    })
    const actual = await query(
      `SELECT company_id::int AS company_id, company_domain, company_size_range, observed_at, products, uses_ours,
         uses_rival, ours_count::int AS ours_count, rivals_count::int AS rivals_count,
         complements_count::int AS complements_count FROM ${table("account_technology_profile")}`,
    )
    for (const row of actual) (row.products as Array<string>).sort()
    expect(expected.filter((row) => row.uses_ours).length).toBeGreaterThan(10)
    expect(sorted(actual)).toEqual(sorted(expected))
  })

  /** Rival accounts as `market` makes them, from the sandbox's data. */
  const rivalAccounts = (market: Market) =>
    ids().flatMap((id) => {
      const now = usesAt(id, 2)
      const rivals = now.filter((use) => hasRole(market, "rival", use))
      if (rivals.length === 0 || now.some((use) => hasRole(market, "ours", use))) return []
      // The first step of the unbroken run, up to the last, that showed each in use.
      const since = rivals.map((rival) => {
        let step = 2
        while (
          step > 0 &&
          usesAt(id, step - 1).some((use) => use.product === rival.product && use.vendor === rival.vendor)
        )
          step--
        return step
      })
      return [
        {
          company_id: id,
          rival_products: [...new Set(rivals.map((use) => use.product))].sort(),
          using_rival_since: times[Math.min(...since)],
        },
      ]
    })
  const actualRivalAccounts = async () => {
    const rows = await query(
      `SELECT company_id::int AS company_id, rival_products, using_rival_since FROM ${table("rival_accounts")}`,
    )
    for (const row of rows) (row.rival_products as Array<string>).sort()
    return sorted(rows)
  }

  it("rival accounts: on a rival and none of ours at the latest observation, since the start of the run", async () => {
    const expected = rivalAccounts(declared)
    expect(expected.length).toBeGreaterThan(10)
    expect(new Set(expected.map((row) => row.using_rival_since)).size).toBeGreaterThan(1)
    expect(await actualRivalAccounts()).toEqual(sorted(expected))
  })

  it("the opportunities in the 90 days: rivals dropped, complements adopted, champions of ours gone to a rival", async () => {
    // Only the last sync's changes are inside the 90 days (the one before is 3 months before it).
    const changes = sandbox.dataset.technologyChanges(generations[1]!, generations[2]!)
    const changed = changes.flatMap((change) => {
      const reason =
        change.change === "dropped" && hasRole(declared, "rival", change)
          ? "dropped a rival"
          : change.change === "adopted" && hasRole(declared, "complement", change)
            ? "adopted a complement"
            : undefined
      return reason === undefined
        ? []
        : [
            {
              reason,
              company_id: change.company_id,
              product: change.product,
              happened_at: times[2],
              contact_id: null,
            },
          ]
    })
    const watched = new Set(ids())
    const champions = ([0, 1] as const).flatMap((from) =>
      sandbox.dataset
        .jobChanges(generations[from]!, generations[2]!)
        .filter((move) => bought[from]!.has(move.match_id) && bought[2]!.has(move.match_id))
        .filter((move) => from === 1 || !bought[1]!.has(move.match_id))
        .filter((move) => move.from.company_id !== move.to.company_id && watched.has(move.from.company_id))
        .filter((move) => watched.has(move.to.company_id))
        // The company they left at its last observation before the move was seen used one of ours.
        .filter((move) => usesAt(move.from.company_id, 1).some((use) => hasRole(declared, "ours", use)))
        .flatMap((move) =>
          usesAt(move.to.company_id, 2)
            .filter((use) => hasRole(declared, "rival", use))
            .map((use) => ({
              reason: "champion joined a rival account",
              company_id: move.to.company_id,
              product: use.product,
              happened_at: times[2],
              contact_id: move.match_id,
            })),
        ),
    )
    for (const reason of ["dropped a rival", "adopted a complement"])
      expect(changed.filter((row) => row.reason === reason).length, reason).toBeGreaterThan(0)
    expect(champions.length).toBeGreaterThan(0)
    const actual = await query(
      `SELECT reason, company_id::int AS company_id, product, happened_at, contact_id, evidence
       FROM ${table("displacement_opportunities")}`,
    )
    for (const row of actual) expect(String(row.evidence)).toContain(times[2]!.slice(0, 10))
    expect(sorted(actual.map(({ evidence: _, ...row }) => row))).toEqual(sorted([...changed, ...champions]))
  })

  it("affinity: every pair in use together at the latest observations, with the lift", async () => {
    const users = new Map<string, Set<number>>()
    for (const id of ids())
      for (const use of usesAt(id, 2)) {
        const key = `${use.product}\u0000${use.vendor}`
        users.set(key, (users.get(key) ?? new Set()).add(id))
      }
    const keys = [...users.keys()].sort()
    const observed = ids().length
    const expected = keys.flatMap((a, index) =>
      keys.slice(index + 1).flatMap((b) => {
        const both = [...users.get(a)!].filter((id) => users.get(b)!.has(id)).length
        const [countA, countB] = [users.get(a)!.size, users.get(b)!.size]
        return both === 0
          ? []
          : [
              {
                product_a: a.split("\u0000")[0],
                product_b: b.split("\u0000")[0],
                companies_both: both,
                companies_a: countA,
                companies_b: countB,
                lift: Math.round(((both * observed) / (countA * countB)) * 10_000) / 10_000,
              },
            ]
      }),
    )
    const actual = await query(
      `SELECT product_a, product_b, companies_both::int AS companies_both, companies_a::int AS companies_a,
         companies_b::int AS companies_b, lift::float8 AS lift FROM ${table("product_affinity")}`,
    )
    expect(expected.length).toBeGreaterThan(50)
    expect(sorted(actual)).toEqual(sorted(expected))
  })

  it("momentum: each product's share now, 3 and 6 months before, and the net adoptions since", async () => {
    const observed = ids().length
    const using = (step: number, key: string) =>
      ids().filter((id) => usesAt(id, step).some((use) => `${use.product}\u0000${use.vendor}` === key)).length
    const net = (from: number) =>
      generations
        .slice(from + 1)
        .flatMap((generation, index) =>
          sandbox.dataset.technologyChanges(generations[from + index]!, generation),
        )
    const keys = new Set<string>()
    for (const step of [0, 1, 2])
      for (const id of ids())
        for (const use of usesAt(id, step)) keys.add(`${use.product}\u0000${use.vendor}`)
    const netOf = (changes: ReturnType<typeof net>, key: string) =>
      changes
        .filter((change) => `${change.product}\u0000${change.vendor}` === key)
        .reduce((sum, change) => sum + (change.change === "adopted" ? 1 : -1), 0)
    const share = (count: number) => Math.round((count / observed) * 10_000) / 10_000
    const expected = [...keys].map((key) => ({
      product: key.split("\u0000")[0],
      share_now: share(using(2, key)),
      share_3m_before: share(using(1, key)),
      share_6m_before: share(using(0, key)),
      companies_observed_now: observed,
      companies_observed_3m: observed,
      companies_observed_6m: observed,
      net_adoptions_3m: netOf(net(1), key),
      net_adoptions_6m: netOf(net(0), key),
    }))
    const actual = await query(
      `SELECT product, share_now::float8 AS share_now, share_3m_before::float8 AS share_3m_before,
         share_6m_before::float8 AS share_6m_before, companies_observed_now::int AS companies_observed_now,
         companies_observed_3m::int AS companies_observed_3m, companies_observed_6m::int AS companies_observed_6m,
         net_adoptions_3m::int AS net_adoptions_3m, net_adoptions_6m::int AS net_adoptions_6m
       FROM ${table("product_momentum")}`,
    )
    expect(expected.filter((row) => row.net_adoptions_6m !== 0).length).toBeGreaterThan(5)
    expect(sorted(actual)).toEqual(sorted(expected))
  })

  /** Our share against rivals' and complements' per month, as `market` makes it. */
  const shareTrend = (market: Market) =>
    (["ours", "rival", "complement"] as const).flatMap((role) =>
      months.map((month, step) => ({
        month,
        role,
        companies_observed: ids().length,
        companies_using: ids().filter((id) => usesAt(id, step).some((use) => hasRole(market, role, use)))
          .length,
      })),
    )
  const actualShareTrend = async () =>
    sorted(
      await query(
        `SELECT month::text AS month, role, companies_observed::int AS companies_observed,
           companies_using::int AS companies_using FROM ${table("market_share_trend")}`,
      ),
    )

  it("top products per category and the market's share per month", async () => {
    expect(await actualShareTrend()).toEqual(sorted(shareTrend(declared)))
    const counts = new Map<string, number>()
    for (const id of ids())
      for (const use of usesAt(id, 2)) {
        const key = `${use.category}\u0000${use.product}`
        counts.set(key, (counts.get(key) ?? 0) + 1)
      }
    const expected = [...counts].map(([key, companies]) => {
      const [category, product] = key.split("\u0000")
      const above = [...counts].filter(([other, n]) => other.startsWith(`${category}\u0000`) && n > companies)
      return { category, product, companies_using: companies, rank_in_category: above.length + 1 }
    })
    const actual = await query(
      `SELECT category, product, companies_using::int AS companies_using, rank_in_category::int AS rank_in_category
       FROM ${table("top_products_by_category")}`,
    )
    expect(sorted(actual)).toEqual(sorted(expected))
  })

  it("a market changed in SQL changes the views at once, survives a sync without a market, and a sync with one replaces it", async () => {
    // Pardot moves from the rivals to our own products.
    const changed: Market = {
      ...declared,
      ours: [...declared.ours, "Pardot"],
      rival: declared.rival.filter((name) => name !== "Pardot"),
    }
    await database.query(`UPDATE ${table("market")} SET role = 'ours' WHERE product = 'Pardot'`)
    expect(await actualRivalAccounts()).toEqual(sorted(rivalAccounts(changed)))
    expect(sorted(rivalAccounts(changed))).not.toEqual(sorted(rivalAccounts(declared)))
    expect(await actualShareTrend()).toEqual(sorted(shareTrend(changed)))
    // An hour after the last sync: nothing is due, so nothing is bought or observed.
    const later = new Date(Date.parse(times[2]!) + 3_600_000).toISOString()
    expect((await sync(undefined, later)).status).toBe("succeeded")
    expect(await actualRivalAccounts()).toEqual(sorted(rivalAccounts(changed)))
    expect((await sync(declared, later)).status).toBe("succeeded")
    expect(await actualRivalAccounts()).toEqual(sorted(rivalAccounts(declared)))
  })

  it("a misspelt name is refused with the nearest, at its place, before anything is bought", async () => {
    const later = new Date(Date.parse(times[2]!) + 7_200_000).toISOString()
    const misspelt: Market = { ...declared, rival: [...declared.rival, "Mixpanl"] }
    await expect(sync(misspelt, later)).rejects.toThrow(
      `market.rivals[${declared.rival.length}]: "Mixpanl" is not a product or vendor of the taxonomy; did you mean "Mixpanel"?`,
    )
    expect(await actualRivalAccounts()).toEqual(sorted(rivalAccounts(declared)))
  })
})
