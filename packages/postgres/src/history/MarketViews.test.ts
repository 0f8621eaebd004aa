/**
 * The market views on every backend, with observations made by hand: the profile's flags, rival
 * accounts and since when, the opportunities (a rival dropped, a complement adopted, a champion of
 * ours gone to a rival's account), affinity, our share per month, and a market changed in SQL
 * changing them with no reload. And the trend's fix: a company that drops a product mid-month
 * counts as not using it that month.
 */
import type { Message } from "@salesintel/airbyte"
import * as Stream from "effect/Stream"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { qualified } from "../database/Sql.ts"
import * as Loader from "../load/Loader.ts"
import { type Backend, backends, open } from "../testing/Backends.ts"
import { contact, record, state } from "../testing/Records.ts"
import * as Market from "./Market.ts"

const all = await backends()
const day = 86_400_000
const iso = (ms: number) => new Date(ms).toISOString()
/** Two observations in one old month (the trend's fix), then two recent ones, inside the 90 days. */
const march3 = "2025-03-03T08:00:00.000Z"
const march20 = "2025-03-20T08:00:00.000Z"
const r1 = iso(Math.floor(Date.now() / day) * day - 60 * day)
const r2 = iso(Math.floor(Date.now() / day) * day - 10 * day)
const monthOf = (at: string) => `${at.slice(0, 7)}-01`

const observed = (id: number, products: ReadonlyArray<[string, string]>, at: string) => ({
  company_id: id,
  company_name: `Company ${id}`,
  company_domains: [`c${id}.example.com`],
  company: { id, name: `Company ${id}`, size: 131, size_range: "100-249" },
  technologies: products.map(([product, vendor]) => ({
    category: "Marketing",
    subcategory: "Marketing Automation",
    product,
    vendor,
    in_use: true,
  })),
  _salesintel_fetched_at: at,
})
const rival1: [string, string] = ["Rival One", "Rival Inc"]
const rival2: [string, string] = ["Rival Two", "Rival Inc"]
const comp: [string, string] = ["Comp", "Comp Co"]
const ours: [string, string] = ["Ours", "Us"]
const other: [string, string] = ["X", "X Co"]

const companies = (list: ReadonlyArray<Record<string, unknown>>): Array<Message.Message> => [
  ...list.map((data) => record("companies", data)),
  state("companies", { done: list.length }),
]
const person = (companyId: number, at: string) =>
  record(
    "contacts",
    contact(1, {
      display_name: "Dana Reyes",
      company_id: companyId,
      company: { id: companyId, name: `Company ${companyId}` },
      company_name: `Company ${companyId}`,
      _salesintel_fetched_at: at,
    }),
  )

const history: ReadonlyArray<ReadonlyArray<Message.Message>> = [
  companies([observed(5, [["A", "V"]], march3)]),
  companies([observed(5, [["B", "V"]], march20)]),
  [
    ...companies([
      observed(1, [rival1, comp], r1),
      observed(2, [other], r1),
      observed(3, [rival2], r1),
      observed(4, [ours, rival1], r1),
    ]),
    person(4, r1),
    state("contacts", { done: 1 }),
  ],
  [
    ...companies([
      observed(1, [comp], r2),
      observed(2, [other, comp], r2),
      observed(3, [rival2], r2),
      observed(4, [ours, rival1], r2),
    ]),
    person(3, r2),
    state("contacts", { done: 2 }),
  ],
]

describe.each(all.map((backend): [string, Backend] => [backend.name, backend]))(
  "the market views on %s",
  (_, backend) => {
    let env: Awaited<ReturnType<typeof open>>
    const table = (name: string) => qualified(env.schema, name)
    const rows = async (sql: string) =>
      (await env.query(sql)).map((row) =>
        Object.fromEntries(
          Object.entries(row).map(([key, value]) => [
            key,
            value instanceof Date ? value.toISOString() : value,
          ]),
        ),
      )
    beforeAll(async () => {
      env = await open(backend, "market views")
      for (const messages of history)
        await env.run(Loader.load(Stream.fromIterable(messages), { schema: env.schema }))
      await env.run(
        Market.replace(env.schema, [
          { role: "ours", product: "Ours", vendor: null },
          { role: "rival", product: null, vendor: "Rival Inc" },
          { role: "complement", product: "Comp", vendor: "Comp Co" },
        ]),
      )
    })
    afterAll(async () => {
      await env?.close()
    })

    it("the trend counts a company at its last observation of the month: dropped mid-month is not using", async () => {
      expect(
        await rows(
          `SELECT product, companies_observed::int AS observed, companies_using::int AS using, adoptions::int AS adoptions,
           drops::int AS drops FROM ${table("technology_install_base_trend")} WHERE month = '2025-03-01' ORDER BY product`,
        ),
      ).toEqual([
        { product: "A", observed: 1, using: 0, adoptions: 0, drops: 1 },
        { product: "B", observed: 1, using: 1, adoptions: 1, drops: 0 },
      ])
      expect(
        await rows(
          `SELECT companies_using::int AS using FROM ${table("technology_install_base_trend_by_category")} WHERE month = '2025-03-01'`,
        ),
      ).toEqual([{ using: 1 }])
    })

    it("the profile: products at the latest observation, and which are ours, rivals', complements'", async () => {
      expect(
        await rows(
          `SELECT company_id::int AS id, company_domain, company_size_range, products, uses_ours, uses_rival, uses_complement,
           ours_count::int AS ours, rivals_count::int AS rivals, complements_count::int AS complements
         FROM ${table("account_technology_profile")} ORDER BY company_id`,
        ),
      ).toEqual(
        [
          [1, ["Comp"], false, false, true, 0, 0, 1],
          [2, ["Comp", "X"], false, false, true, 0, 0, 1],
          [3, ["Rival Two"], false, true, false, 0, 1, 0],
          [4, ["Ours", "Rival One"], true, true, false, 1, 1, 0],
          [5, ["B"], false, false, false, 0, 0, 0],
        ].map(([id, products, uses_ours, uses_rival, uses_complement, o, r, c]) => ({
          id,
          company_domain: `c${id}.example.com`,
          company_size_range: "100-249",
          products,
          uses_ours,
          uses_rival,
          uses_complement,
          ours: o,
          rivals: r,
          complements: c,
        })),
      )
    })

    it("rival accounts: on a rival and none of ours, since the first of its unbroken run", async () => {
      expect(
        await rows(
          `SELECT company_id::int AS id, rival_products, using_rival_since FROM ${table("rival_accounts")}`,
        ),
      ).toEqual([{ id: 3, rival_products: ["Rival Two"], using_rival_since: r1 }])
    })

    it("the opportunities: a rival dropped, a complement adopted, a champion of ours gone to a rival's account", async () => {
      const found = await rows(
        `SELECT reason, company_id::int AS id, product, role, happened_at, contact_id, contact_name, evidence
       FROM ${table("displacement_opportunities")} ORDER BY reason`,
      )
      expect(found.map(({ evidence: _, ...row }) => row)).toEqual([
        {
          reason: "adopted a complement",
          id: 2,
          product: "Comp",
          role: "complement",
          happened_at: r2,
          contact_id: null,
          contact_name: null,
        },
        {
          reason: "champion joined a rival account",
          id: 3,
          product: "Rival Two",
          role: "rival",
          happened_at: r2,
          contact_id: "m-1",
          contact_name: "Dana Reyes",
        },
        {
          reason: "dropped a rival",
          id: 1,
          product: "Rival One",
          role: "rival",
          happened_at: r2,
          contact_id: null,
          contact_name: null,
        },
      ])
      expect(found[1]?.evidence).toBe(
        `Dana Reyes left Company 4, which used Ours (ours) at its observation of ${r1.slice(0, 10)}, and was seen at Company 3 on ${r2.slice(0, 10)}, which uses Rival Two (Rival Inc) at its observation of ${r2.slice(0, 10)}`,
      )
    })

    it("affinity: pairs in use together at the latest observations, with the lift", async () => {
      expect(
        await rows(
          `SELECT product_a, product_b, companies_both::int AS both, companies_a::int AS a, companies_b::int AS b,
           companies_observed::int AS observed, lift::float8 AS lift FROM ${table("product_affinity")} ORDER BY product_a`,
        ),
      ).toEqual([
        { product_a: "Comp", product_b: "X", both: 1, a: 2, b: 1, observed: 5, lift: 2.5 },
        { product_a: "Ours", product_b: "Rival One", both: 1, a: 1, b: 1, observed: 5, lift: 5 },
      ])
    })

    // Companies 1-4 are observed in the latest month and the one or two before (under 3 months);
    // company 5 only in March 2025. So 3 and 6 months before, none is observed (company 5 last
    // was long before, companies 1-4 first after): no share there, yet net adoptions count from
    // each company's last observation up to that month, else its first.
    it("momentum: a company not observed in a period's month is neither observed nor using there", async () => {
      const momentum = await rows(
        `SELECT product, share_now::float8 AS now, share_3m_before::float8 AS before_3m,
           share_6m_before::float8 AS before_6m, companies_using_now::int AS using_now,
           companies_using_3m::int AS using_3m, companies_using_6m::int AS using_6m,
           companies_observed_now::int AS observed_now, companies_observed_3m::int AS observed_3m,
           companies_observed_6m::int AS observed_6m, net_adoptions_3m::int AS net_3m,
           net_adoptions_6m::int AS net_6m
         FROM ${table("product_momentum")} ORDER BY product`,
      )
      const row = (product: string, using: number, net: number) => ({
        product,
        now: using / 4,
        before_3m: null,
        before_6m: null,
        using_now: using,
        using_3m: 0,
        using_6m: 0,
        observed_now: 4,
        observed_3m: 0,
        observed_6m: 0,
        net_3m: net,
        net_6m: net,
      })
      expect(momentum).toEqual([
        row("Comp", 2, 1),
        row("Ours", 1, 0),
        row("Rival One", 1, -1),
        row("Rival Two", 1, 0),
        row("X", 1, 0),
      ])
    })

    it("our share per month, and a market changed in SQL changes the views with no reload", async () => {
      const share = () =>
        rows(
          `SELECT month::text AS month, role, companies_observed::int AS observed, companies_using::int AS using
         FROM ${table("market_share_trend")} WHERE month >= '${monthOf(r1)}' ORDER BY month, role`,
        )
      expect(await share()).toEqual([
        { month: monthOf(r1), role: "complement", observed: 4, using: 1 },
        { month: monthOf(r1), role: "ours", observed: 4, using: 1 },
        { month: monthOf(r1), role: "rival", observed: 4, using: 3 },
        { month: monthOf(r2), role: "complement", observed: 4, using: 2 },
        { month: monthOf(r2), role: "ours", observed: 4, using: 1 },
        { month: monthOf(r2), role: "rival", observed: 4, using: 2 },
      ])
      await env.query(`UPDATE ${table("market")} SET role = 'ours' WHERE vendor = 'Rival Inc'`)
      expect(await rows(`SELECT company_id FROM ${table("rival_accounts")}`)).toEqual([])
      expect((await share()).filter((row) => row.role === "ours").map((row) => row.using)).toEqual([3, 2])
      await env.query(`UPDATE ${table("market")} SET role = 'rival' WHERE vendor = 'Rival Inc'`)
    })
  },
)
