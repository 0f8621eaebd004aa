/**
 * `salesintel plan`'s wording for companies: a domain that matches no company costs nothing, so
 * the plan's credits for the keys it cannot know (never looked up, or matched none when last
 * looked up) are an upper bound, and it says so; the keys the saved state knows matched a company
 * are counted exactly. The plan is the source's, run dry on the provider in memory.
 */
import { StreamState } from "@salesintel/airbyte"
import { Allowance, Config, CostPlan as SourcePlan } from "@salesintel/source"
import * as Effect from "effect/Effect"
import * as Either from "effect/Either"
import { describe, expect, it } from "vitest"
import { fakeProvider } from "../../source/src/testing/FakeProvider.ts"
import * as Plan from "./Plan.ts"

const day = 86_400_000
const now = 100 * day

const planOf = (domains: ReadonlyArray<string>, companiesState?: Readonly<Record<string, unknown>>) => {
  const config = Either.getOrThrow(
    Config.decode({
      api_key: "test-key",
      credit_budget: 1_000,
      companies: { domains, refresh_after_days: 30 },
    }),
  )
  const state = companiesState === undefined ? [] : [StreamState.saved("companies", companiesState)]
  return Effect.runPromise(
    SourcePlan.plan({ config, state, mode: "exact", now }).pipe(
      Effect.provide(fakeProvider({ contacts: 0 }).layer),
    ),
  )
}

const target = "embedded PGlite in db, schema salesintel"

describe("salesintel plan: companies not known to match", () => {
  it("says the credits of domains never looked up are an upper bound", async () => {
    const plan = await planOf(["one.example", "two.example", "nosuch.example"])
    expect(plan.credits).toBe(3)
    expect(plan.creditsExact).toBe(false)
    expect(plan.companies?.unconfirmed).toBe(3)
    const text = Plan.render(plan, target)
    expect(text).toContain(
      "companies: 3 domains (3 new, 0 due again), 0 names (0 new, 0 due again): at most 3 credits at one per key, 1 requests",
    )
    expect(text).toContain(
      "  3 keys not looked up yet, or that matched no company when last looked up: each costs one credit if it matches a company and nothing if it matches none, so their 3 credits are an upper bound",
    )
    expect(text).toContain("credits: at most 3 of the 1,000 credit budget (an upper bound: see companies)")
    expect(JSON.parse(Plan.toJson(plan))).toMatchObject({
      credits: 3,
      credits_exact: false,
      companies: { unconfirmed: 3, domains: { unconfirmed: 3 } },
    })
  })

  it("counts exactly the domains the saved state knows matched a company, and says which are not known", async () => {
    // Looked up 40 days ago (due again at 30): two matched a company, nosuch.example none.
    const looked = { [String(now / day - 40)]: ["one.example", "two.example", "nosuch.example"] }
    const plan = await planOf(["one.example", "two.example", "nosuch.example", "three.example"], {
      domains: looked,
      unmatched: { domains: ["nosuch.example"] },
    })
    expect(plan.credits).toBe(4)
    expect(plan.companies?.unconfirmed).toBe(2)
    const text = Plan.render(plan, target)
    expect(text).toContain("at most 4 credits at one per key")
    expect(text).toContain(
      "  2 keys not looked up yet, or that matched no company when last looked up: each costs one credit if it matches a company and nothing if it matches none, so their 2 credits are an upper bound; the other 2 matched a company when last looked up (one credit each)",
    )

    // Every key known to match: the figure is exact, and said as before.
    const matched = await planOf(["one.example", "two.example"], { domains: looked })
    expect(matched.creditsExact).toBe(true)
    const exact = Plan.render(matched, target)
    expect(exact).toContain(
      "companies: 2 domains (0 new, 2 due again), 0 names (0 new, 0 due again): 2 credits at one per key, 1 requests",
    )
    expect(exact).not.toContain("upper bound")
    expect(exact).toContain("credits: 2 of the 1,000 credit budget")
  })
})

describe("salesintel plan: the credit allowance", () => {
  it("says spent this period, left and the renewal, and plans within what is left", async () => {
    const config = Either.getOrThrow(
      Config.decode({
        api_key: "test-key",
        credit_budget: 1_000,
        credit_allowance: { credits: 1_002, per: "day" },
        companies: { domains: ["one.example", "two.example", "three.example"] },
      }),
    )
    const at = Date.UTC(2026, 10, 24, 10)
    const allowance = Allowance.standingOf({ credits: 1_002, per: "day" }, at, 1_000, "runs")
    const plan = await Effect.runPromise(
      SourcePlan.plan({ config, state: [], mode: "exact", now: at, allowance }).pipe(
        Effect.provide(fakeProvider({ contacts: 0 }).layer),
      ),
    )
    expect(plan.credits).toBe(2)
    expect(plan.creditLimit).toBe(2)
    const text = Plan.render(plan, target)
    expect(text).toContain(
      "credit allowance: 1,000 of 1,002 credits spent this day (since 2026-11-24T00:00:00.000Z), 2 left; renews at 2026-11-25T00:00:00.000Z",
    )
    expect(text).toContain(
      "of the 1,000 credit budget (this run may spend 2: what the credit allowance has left)",
    )
    expect(JSON.parse(Plan.toJson(plan))).toMatchObject({
      credit_limit: 2,
      allowance: {
        credits: 1_002,
        per: "day",
        period_start: "2026-11-24T00:00:00.000Z",
        spent: 1_000,
        left: 2,
        renews_at: "2026-11-25T00:00:00.000Z",
        counted_from: "runs",
      },
    })
  })
})
