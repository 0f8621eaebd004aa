/**
 * Technographics intelligence end to end, on Postgres and PGlite: three syncs a month apart, each
 * after the sandbox moved to its next generation, buy every company and the leaders again. The
 * install base, its trend, the displacements and the champion moves then equal what the sandbox
 * says it showed at those three observations (not what the tables say), and loading the same
 * records again changes none of them.
 */
import { Sync } from "@salesintel/cli"
import { Loader, Sql } from "@salesintel/postgres"
import type { Sandbox } from "@salesintel/sandbox"
import * as Stream from "effect/Stream"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { backends, open } from "../packages/postgres/src/testing/Backends.ts"
import { state } from "../packages/postgres/src/testing/Records.ts"
import { sandboxForFile } from "./sandbox.ts"

const sandbox = sandboxForFile({ seed: 23, contacts: 6_000, companies: 400 })

const silent = { isTTY: false, write: () => true }
const generations = [0, 1, 2]
/** The three observations: a month apart, each in its own calendar month (UTC). */
const times = ["2026-08-14T12:00:00.000Z", "2026-09-14T12:00:00.000Z", "2026-10-15T12:00:00.000Z"]
const months = ["2026-08-01", "2026-09-01", "2026-10-01"]

const setGeneration = sandbox.setGeneration

/** Rows as plain values: dates as ISO text, bigints and numerics as numbers. */
const plain = (rows: ReadonlyArray<Record<string, unknown>>) =>
  rows.map((row) =>
    Object.fromEntries(
      Object.entries(row).map(([key, value]) => [key, value instanceof Date ? value.toISOString() : value]),
    ),
  )
const sorted = (rows: ReadonlyArray<Record<string, unknown>>) =>
  rows.map((row) => JSON.stringify(row, Object.keys(row).sort())).sort()

/** The sandbox's data at each generation, made once. */
const atGeneration = new Map<number, Sandbox["dataset"]>()
/** The sandbox's products of a company at a generation. */
const productsAt = (
  companyId: number,
  generation: number,
): ReadonlyArray<{ product: string; vendor: string }> => {
  const dataset = atGeneration.get(generation) ?? sandbox.dataset.resized({ generation })
  atGeneration.set(generation, dataset)
  return dataset
    .companyTechnologiesById(companyId)!
    .technologies.filter((t) => t.in_use !== false)
    .map(({ product, vendor }) => ({ product: String(product), vendor: String(vendor) }))
}

describe.each(await backends())("technographics intelligence on $name", (backend) => {
  let database: Awaited<ReturnType<typeof open>>
  const table = (name: string) => Sql.qualified(database.schema, name)
  const companyIds = () => sandbox.dataset.companies.map((company) => company.id)
  const config = () => ({
    api_key: "sandbox-full",
    base_url: sandbox.url,
    credit_budget: 100_000,
    requests_per_minute: 60_000,
    contacts: {
      refresh_after_days: 1,
      searches: [{ name: "leaders", filters: { job_levels: ["vp", "dir", "chf"] } }],
    },
    companies: {
      refresh_after_days: 1,
      domains: sandbox.dataset.companies.map((company) => company.domain),
    },
  })
  const query = async (sql: string) => plain(await database.query(sql))
  /** The contacts each sync bought (their fetched_at is its start). */
  const boughtContacts: Array<Set<string>> = []

  beforeAll(async () => {
    database = await open(backend, "e2e intelligence")
    sandbox.reset()
    for (const [step, generation] of generations.entries()) {
      await setGeneration(generation)
      const startedAt = Date.parse(times[step]!)
      const outcome = await database.run(
        Sync.sync({ config: config(), schema: database.schema, progress: silent, startedAt }),
      )
      expect(outcome.status).toBe("succeeded")
      const rows = await database.query(`SELECT match_id FROM ${table("contacts")} WHERE fetched_at = $1`, [
        times[step],
      ])
      boughtContacts.push(new Set(rows.map((row) => String(row.match_id))))
    }
    expect(
      await query(`SELECT count(*)::int AS n FROM ${table("companies")} WHERE fetched_at = '${times[2]}'`),
    ).toEqual([{ n: 400 }])
  }, 240_000)
  afterAll(async () => {
    await setGeneration(0)
    await database?.close()
  })

  it("the install base: first and last seen, observations and in use as the three observations showed them", async () => {
    const expected = companyIds().flatMap((companyId) => {
      const seen = new Map<string, Array<number>>()
      for (const [step, generation] of generations.entries())
        for (const { product, vendor } of productsAt(companyId, generation))
          seen.set(`${product}\u0000${vendor}`, [...(seen.get(`${product}\u0000${vendor}`) ?? []), step])
      return [...seen].map(([key, steps]) => {
        const [product, vendor] = key.split("\u0000")
        const first = steps[0]!
        // An adoption: in use at a step, not at the one before (the first observation is none).
        const adopted = steps.find((step) => step > 0 && !steps.includes(step - 1))
        return {
          company_id: companyId,
          product,
          vendor,
          first_seen_at: times[first],
          last_seen_at: times[steps.at(-1)!],
          observations: steps.length,
          in_use: steps.includes(2),
          adopted_at: adopted === undefined ? null : times[adopted],
        }
      })
    })
    const actual = await query(
      `SELECT company_id::int AS company_id, product, vendor, first_seen_at, last_seen_at,
         observations::int AS observations, in_use, adopted_at
       FROM ${table("technology_install_base")}`,
    )
    // The test means something only if products came and went.
    expect(expected.filter((row) => row.adopted_at !== null).length).toBeGreaterThan(10)
    expect(expected.filter((row) => !row.in_use).length).toBeGreaterThan(10)
    expect(sorted(actual)).toEqual(sorted(expected))
  })

  it("the trend: per product and month, users among the companies observed, adoptions and drops", async () => {
    const changes = generations.map((generation, step) =>
      step === 0 ? [] : sandbox.dataset.technologyChanges(generations[step - 1]!, generation),
    )
    const keys = new Set<string>()
    for (const [step, generation] of generations.entries()) {
      for (const companyId of companyIds())
        for (const { product, vendor } of productsAt(companyId, generation))
          keys.add(`${step}\u0000${product}\u0000${vendor}`)
      for (const change of changes[step]!) keys.add(`${step}\u0000${change.product}\u0000${change.vendor}`)
    }
    const expected = [...keys].map((key) => {
      const [stepText, product, vendor] = key.split("\u0000")
      const step = Number(stepText)
      const using = companyIds().filter((companyId) =>
        productsAt(companyId, generations[step]!).some((p) => p.product === product && p.vendor === vendor),
      ).length
      const mine = changes[step]!.filter((change) => change.product === product && change.vendor === vendor)
      const adoptions = mine.filter((change) => change.change === "adopted").length
      const drops = mine.filter((change) => change.change === "dropped").length
      return {
        month: months[step],
        product,
        vendor,
        companies_observed: 400,
        companies_using: using,
        share: Math.round((using / 400) * 10_000) / 10_000,
        adoptions,
        drops,
        net: adoptions - drops,
      }
    })
    const actual = await query(
      `SELECT month::text AS month, product, vendor, companies_observed::int AS companies_observed,
         companies_using::int AS companies_using, share::float8 AS share, adoptions::int AS adoptions,
         drops::int AS drops, net::int AS net
       FROM ${table("technology_install_base_trend")}`,
    )
    expect(sorted(actual)).toEqual(sorted(expected))
  })

  it("the displacements equal the sandbox's for the companies observed at every step", async () => {
    const truth = sandbox.dataset.displacements(generations).map((d) => ({
      company_id: d.company_id,
      category: d.category,
      subcategory: d.subcategory,
      dropped_product: d.dropped_product,
      dropped_vendor: d.dropped_vendor,
      dropped_at: times[d.dropped_step],
      adopted_product: d.adopted_product,
      adopted_vendor: d.adopted_vendor,
      adopted_at: times[d.adopted_step],
    }))
    // Made by the sandbox's displacements (dropped and adopted at one step), and more than a few.
    expect(truth.filter((d) => d.dropped_at === d.adopted_at).length).toBeGreaterThan(10)
    const actual = await query(
      `SELECT company_id::int AS company_id, category, subcategory, dropped_product, dropped_vendor, dropped_at,
         adopted_product, adopted_vendor, adopted_at
       FROM ${table("technology_displacements")}`,
    )
    expect(sorted(actual)).toEqual(sorted(truth))
  })

  it("the champion moves: the sandbox's company moves of contacts bought twice, crossed with the products where they were", async () => {
    const watched = new Set(companyIds())
    // A move is seen between two purchases of the contact in a row (a contact may skip a sync).
    const pairs = [
      [0, 1],
      [1, 2],
      [0, 2],
    ] as const
    const expected = pairs.flatMap(([from, to]) =>
      sandbox.dataset
        .jobChanges(generations[from]!, generations[to]!)
        .filter((move) => {
          const bought = boughtContacts.map((contacts) => contacts.has(move.match_id))
          return bought[from] && bought[to] && (to - from === 1 || !bought[1])
        })
        .filter((move) => move.from.company_id !== move.to.company_id && watched.has(move.from.company_id))
        .flatMap((move) => {
          // The company they left at its last observation before the move was seen: the sync before.
          const left = productsAt(move.from.company_id, generations[to - 1]!)
          const joined = watched.has(move.to.company_id) ? productsAt(move.to.company_id, 2) : undefined
          return left.map(({ product, vendor }) => ({
            match_id: move.match_id,
            left_company_id: move.from.company_id,
            joined_company_id: move.to.company_id,
            product,
            vendor,
            left_company_observed_at: times[to - 1],
            moved_seen_at: times[to],
            joined_company_uses:
              joined === undefined ? null : joined.some((p) => p.product === product && p.vendor === vendor),
          }))
        }),
    )
    expect(new Set(expected.map((row) => row.match_id)).size).toBeGreaterThan(3)
    expect(expected.some((row) => row.joined_company_uses === true)).toBe(true)
    const actual = await query(
      `SELECT match_id, left_company_id::int AS left_company_id, joined_company_id::int AS joined_company_id,
         product, vendor, left_company_observed_at, moved_seen_at, joined_company_uses
       FROM ${table("champion_moves")}`,
    )
    expect(sorted(actual)).toEqual(sorted(expected))
  })

  it("each run's row is dated as of its read, and keeps its own duration", async () => {
    const runs = await database.query(
      `SELECT started_at, extract(epoch FROM finished_at - started_at)::float8 AS seconds
       FROM ${table("_sync_runs")} ORDER BY id`,
    )
    expect(runs.map((run) => (run.started_at as Date).toISOString())).toEqual(times)
    for (const run of runs) {
      expect(Number(run.seconds)).toBeGreaterThanOrEqual(0)
      expect(Number(run.seconds)).toBeLessThan(120)
    }
  })

  it("loading the same records again changes none of them", async () => {
    const views = [
      "technology_install_base",
      "technology_install_base_trend",
      "technology_install_base_trend_by_category",
      "technology_displacements",
      "champion_moves",
    ]
    const everything = async () => {
      const all: Array<ReadonlyArray<string>> = []
      for (const view of views) all.push(sorted(await query(`SELECT * FROM ${table(view)}`)))
      return all
    }
    const before = await everything()
    const records = (stream: string) =>
      database.query(`SELECT _raw FROM ${table(stream)}`).then((rows) =>
        rows.map((row) => ({
          type: "RECORD" as const,
          record: { stream, data: row._raw as Record<string, unknown>, emitted_at: 0 },
        })),
      )
    // Each stream's records, then a STATE: the loader commits what a STATE follows.
    const messages = [
      ...(await records("companies")),
      state("companies", { reloaded: true }),
      ...(await records("contacts")),
      state("contacts", { reloaded: true }),
    ]
    expect(messages.length).toBeGreaterThan(1_000)
    await database.run(Loader.load(Stream.fromIterable(messages), { schema: database.schema }))
    expect(await everything()).toEqual(before)
  })
})
