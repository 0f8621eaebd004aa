/**
 * The observation log and the views over it, on every backend, with observations made by hand:
 * the install base's first and last seen, its monthly trend, a displacement inside the window and
 * one outside it, a champion move; a reload of the same observations changes none of them.
 */
import type { Message } from "@salesintel/airbyte"
import * as Stream from "effect/Stream"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { qualified } from "../database/Sql.ts"
import * as Loader from "../load/Loader.ts"
import { type Backend, backends, open } from "../testing/Backends.ts"
import { company, contact, record, state } from "../testing/Records.ts"
import { displacementWindowDays } from "./Intelligence.ts"

const all = await backends()

const t0 = "2026-01-10T08:00:00.000Z"
const t1 = "2026-02-15T08:00:00.000Z"
const t2 = "2026-07-01T08:00:00.000Z"
const t3 = "2026-11-01T08:00:00.000Z"

/** A company observed at `at` using `products` (all of one subcategory, Marketing Automation). */
const observed = (id: number, products: ReadonlyArray<string>, at: string) => ({
  ...company(id, products),
  _salesintel_fetched_at: at,
})

const companies = (list: ReadonlyArray<Record<string, unknown>>): Array<Message.Message> => [
  ...list.map((data) => record("companies", data)),
  state("companies", { done: list.length }),
]

const person = (companyId: number, at: string) =>
  contact(1, {
    company_id: companyId,
    company: { id: companyId, name: `Company ${companyId}` },
    company_name: `Company ${companyId}`,
    _salesintel_fetched_at: at,
  })

const contacts = (list: ReadonlyArray<Record<string, unknown>>): Array<Message.Message> => [
  ...list.map((data) => record("contacts", data)),
  state("contacts", { done: list.length }),
]

/** The observations, in the order they happen: company 1 replaces A by C (a displacement). */
const history: ReadonlyArray<ReadonlyArray<Message.Message>> = [
  [...companies([observed(1, ["A", "B"], t0), observed(2, ["A"], t0)]), ...contacts([person(1, t0)])],
  [
    ...companies([observed(1, ["B", "C"], t1), observed(2, ["A"], t1), observed(3, ["A", "B"], t1)]),
    ...contacts([person(2, t1)]),
  ],
  companies([observed(1, ["B", "C"], t2), observed(3, ["B"], t2)]),
  // Company 3 adopts D 123 days after dropping A: outside the window, no displacement.
  companies([observed(3, ["B", "D"], t3)]),
]

describe.each(all.map((backend): [string, Backend] => [backend.name, backend]))(
  "technographics intelligence on %s",
  (_, backend) => {
    let env: Awaited<ReturnType<typeof open>>
    beforeAll(async () => {
      env = await open(backend, "intelligence")
      for (const messages of history)
        await env.run(Loader.load(Stream.fromIterable(messages), { schema: env.schema }))
    })
    afterAll(async () => {
      await env?.close()
    })
    const rows = async (sql: string) =>
      (await env.query(sql)).map((row) =>
        Object.fromEntries(
          Object.entries(row).map(([key, value]) => [
            key,
            value instanceof Date ? value.toISOString() : value,
          ]),
        ),
      )
    const view = (name: string, columns: string, order: string) =>
      rows(`SELECT ${columns} FROM ${qualified(env.schema, name)} ORDER BY ${order}`)
    const installBase = () =>
      view(
        "technology_install_base",
        `company_id::int AS company, product, first_seen_at, last_seen_at, in_use, observations::int AS observations,
         company_observations::int AS company_observations, tenure_days, adopted_at, dropped_at`,
        "company_id, product",
      )
    const trend = () =>
      view(
        "technology_install_base_trend",
        `month::text AS month, product, companies_observed::int AS observed, companies_using::int AS using,
         share::float8 AS share, adoptions::int AS adoptions, drops::int AS drops, net::int AS net`,
        "month, product",
      )
    const displacements = () =>
      view(
        "technology_displacements",
        "company_id::int AS company, subcategory, dropped_product, adopted_product, dropped_at, adopted_at, days_apart",
        "company_id",
      )
    const moves = () =>
      view(
        "champion_moves",
        `match_id, left_company_id::int AS left_company, joined_company_id::int AS joined_company, product,
         left_company_observed_at, joined_company_uses`,
        "match_id, product",
      )
    const everything = async () => [await installBase(), await trend(), await displacements(), await moves()]

    const days = (from: string, to: string) => Math.floor((Date.parse(to) - Date.parse(from)) / 86_400_000)
    const seen = (
      company: number,
      product: string,
      first: string,
      last: string,
      counts: [number, number],
    ) => ({
      company,
      product,
      first_seen_at: first,
      last_seen_at: last,
      observations: counts[0],
      company_observations: counts[1],
      tenure_days: days(first, last),
    })

    it("the install base: first and last seen as the observations saw them, in use at the latest", async () => {
      expect(await installBase()).toEqual([
        { ...seen(1, "A", t0, t0, [1, 3]), in_use: false, adopted_at: null, dropped_at: t1 },
        { ...seen(1, "B", t0, t2, [3, 3]), in_use: true, adopted_at: null, dropped_at: null },
        // Adopted while watched: its adoption's date; A and B were there at the first observation.
        { ...seen(1, "C", t1, t2, [2, 3]), in_use: true, adopted_at: t1, dropped_at: null },
        { ...seen(2, "A", t0, t1, [2, 2]), in_use: true, adopted_at: null, dropped_at: null },
        { ...seen(3, "A", t1, t1, [1, 3]), in_use: false, adopted_at: null, dropped_at: t2 },
        { ...seen(3, "B", t1, t3, [3, 3]), in_use: true, adopted_at: null, dropped_at: null },
        { ...seen(3, "D", t3, t3, [1, 3]), in_use: true, adopted_at: t3, dropped_at: null },
      ])
    })

    it("the trend: users among the companies observed each month, adoptions and drops", async () => {
      const month = (
        m: string,
        product: string,
        observed: number,
        using: number,
        changes: [number, number],
      ) => ({
        month: m,
        product,
        observed,
        using,
        share: Math.round((using / observed) * 10_000) / 10_000,
        adoptions: changes[0],
        drops: changes[1],
        net: changes[0] - changes[1],
      })
      expect(await trend()).toEqual([
        month("2026-01-01", "A", 2, 2, [0, 0]),
        month("2026-01-01", "B", 2, 1, [0, 0]),
        // Company 3's first observation is not an adoption.
        month("2026-02-01", "A", 3, 2, [0, 1]),
        month("2026-02-01", "B", 3, 2, [0, 0]),
        month("2026-02-01", "C", 3, 1, [1, 0]),
        month("2026-07-01", "A", 2, 0, [0, 1]),
        month("2026-07-01", "B", 2, 2, [0, 0]),
        month("2026-07-01", "C", 2, 1, [0, 0]),
        month("2026-11-01", "B", 1, 1, [0, 0]),
        month("2026-11-01", "D", 1, 1, [1, 0]),
      ])
    })

    it(`displacements: a drop and a rival's adoption within ${displacementWindowDays} days, and no other`, async () => {
      expect(await displacements()).toEqual([
        {
          company: 1,
          subcategory: "Marketing Automation",
          dropped_product: "A",
          adopted_product: "C",
          dropped_at: t1,
          adopted_at: t1,
          days_apart: 0,
        },
      ])
    })

    it("champion moves: the products where the contact was, and whether the new company uses them", async () => {
      // Company 1 at its last observation before the move was seen (t0) used A and B; company 2 uses A.
      expect(await moves()).toEqual([
        {
          match_id: "m-1",
          left_company: 1,
          joined_company: 2,
          product: "A",
          left_company_observed_at: t0,
          joined_company_uses: true,
        },
        {
          match_id: "m-1",
          left_company: 1,
          joined_company: 2,
          product: "B",
          left_company_observed_at: t0,
          joined_company_uses: false,
        },
      ])
    })

    it("loading the latest observations again changes none of them", async () => {
      const before = await everything()
      const latest = [
        ...companies([observed(1, ["B", "C"], t2), observed(2, ["A"], t1), observed(3, ["B", "D"], t3)]),
        ...contacts([person(2, t1)]),
      ]
      for (let round = 0; round < 2; round++)
        await env.run(Loader.load(Stream.fromIterable(latest), { schema: env.schema }))
      expect(await everything()).toEqual(before)
    })

    it("records loaded out of order (an older run replayed) change none of them", async () => {
      const changeCounts = () =>
        rows(
          `SELECT (SELECT count(*) FROM ${qualified(env.schema, "technology_changes")})::int AS technologies,
             (SELECT count(*) FROM ${qualified(env.schema, "job_changes")})::int AS jobs`,
        )
      const before = [...(await everything()), await changeCounts()]
      await env.run(Loader.load(Stream.fromIterable(history[0]!), { schema: env.schema }))
      // Nor the change tables: an older observation is not compared with a newer row.
      expect([...(await everything()), await changeCounts()]).toEqual(before)
    })

    it("a product listed twice in one observation is one product in use; a contact left for no company is no move", async () => {
      const twice = (at: string) => ({
        ...observed(9, ["X"], at),
        technologies: [
          {
            category: "Marketing",
            subcategory: "Marketing Automation",
            product: "X",
            vendor: "V",
            in_use: true,
          },
          { category: "Analytics", subcategory: "Web Analytics", product: "X", vendor: "V", in_use: true },
        ],
      })
      for (const at of [t0, t1])
        await env.run(Loader.load(Stream.fromIterable(companies([twice(at)])), { schema: env.schema }))
      expect(
        await rows(
          `SELECT observations::int AS observations, company_observations::int AS company_observations
           FROM ${qualified(env.schema, "technology_install_base")} WHERE company_id = 9`,
        ),
      ).toEqual([{ observations: 2, company_observations: 2 }])
      // Contact 1 (at company 2 since t1) is seen at t2 with no company: a job change, not a move.
      const none = contact(1, {
        company_id: null,
        company: null,
        company_name: null,
        _salesintel_fetched_at: t2,
      })
      await env.run(Loader.load(Stream.fromIterable(contacts([none])), { schema: env.schema }))
      const [change] = await rows(
        `SELECT count(*)::int AS n FROM ${qualified(env.schema, "job_changes")} WHERE to_company_id IS NULL`,
      )
      expect(change).toEqual({ n: 1 })
      expect((await moves()).map((move) => move.joined_company)).toEqual([2, 2])
    })

    it("champion moves: the joined company's latest observation decides, not an earlier one", async () => {
      // Company 2 used A at t0 and t1; observed again at t3 it uses B instead (run last: it changes
      // what the tests before it read).
      await env.run(
        Loader.load(Stream.fromIterable(companies([observed(2, ["B"], t3)])), { schema: env.schema }),
      )
      expect((await moves()).map((move) => [move.product, move.joined_company_uses])).toEqual([
        ["A", false],
        ["B", true],
      ])
    })

    it("every column of the new views says what it holds", async () => {
      const undocumented = await env.query(
        `SELECT c.relname AS view, a.attname AS column
         FROM pg_attribute a JOIN pg_class c ON c.oid = a.attrelid JOIN pg_namespace n ON n.oid = c.relnamespace
         WHERE n.nspname = $1 AND a.attnum > 0 AND col_description(c.oid, a.attnum) IS NULL
           AND c.relname IN ('technology_install_base', 'technology_install_base_trend',
             'technology_install_base_trend_by_category', 'technology_displacements', 'champion_moves',
             'company_observations', 'technology_observations')`,
        [env.schema],
      )
      expect(undocumented).toEqual([])
    })
  },
)
