/**
 * `salesintel plan --quick` against the sandbox, on each backend: it lists no ids, so what a search
 * holds comes from its last read (the contacts state's record of each search), and on a target a
 * sync brought up to date it says close to nothing, as the exact plan and the next sync do. Within
 * 10% (or 100 credits) of the exact plan and of what the next sync spends: after a sync, after the
 * provider's data moves a generation (contacts change jobs, in and out of the searches), and with
 * new contacts at the provider. On an empty target it stays an upper bound; its bounds hold the
 * exact figure throughout.
 */
import { Plan, Sync } from "@salesintel/cli"
import * as Effect from "effect/Effect"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { backends, open } from "../packages/postgres/src/testing/Backends.ts"
import { fastPace, sandboxForFile } from "./sandbox.ts"

const contacts = 40_000
const sandbox = sandboxForFile({ seed: 7, contacts, companies: 4_000 })

const silent = { isTTY: false, write: () => true }

const config = () => ({
  api_key: "unset",
  base_url: sandbox.url,
  credit_budget: 100_000,
  requests_per_minute: fastPace,
  contacts: {
    searches: [
      { name: "it-vps", filters: { job_departments: ["it_is"], job_levels: ["vp"] } },
      { name: "it", filters: { job_departments: ["it_is"] } },
    ],
    refresh_after_days: 30,
  },
  companies: { from_contacts: true },
})

const resize = async (changes: { contacts?: number; generation?: number }) => {
  const response = await fetch(`${sandbox.url}/_sandbox/dataset`, {
    method: "POST",
    body: JSON.stringify(changes),
  })
  await response.body?.cancel()
  expect(response.status).toBe(200)
}

/** Within 10% of `expected`, or 100 credits. */
const close = (quick: number, expected: number) =>
  expect(Math.abs(quick - expected)).toBeLessThanOrEqual(Math.max(100, expected * 0.1))

describe.each(await backends())("plan --quick on $name", (backend) => {
  let database: Awaited<ReturnType<typeof open>>
  beforeAll(async () => {
    // The dataset is the file's: each backend starts from the same provider data.
    await resize({ contacts, generation: 0 })
    database = await open(backend, "e2e quick plan")
  })
  afterAll(async () => {
    await database?.close()
  })

  const planOf = async (mode: "exact" | "quick") => {
    const state = await database.run(Plan.savedStateIn(database.schema))
    const key = sandbox.key()
    const plan = await Effect.runPromise(
      Plan.makePlan({ config: { ...config(), api_key: key }, state, mode }),
    )
    expect(sandbox.charged(key)).toBe(0)
    return plan
  }
  const plans = async () => {
    const [exact, quick] = [await planOf("exact"), await planOf("quick")]
    console.info(
      `${backend.name}: exact ${exact.credits}, quick ${quick.credits} [${quick.estimate?.creditsAtLeast}, ${quick.estimate?.creditsAtMost}]`,
    )
    return { exact, quick }
  }
  const syncSpends = async () => {
    const key = sandbox.key()
    const outcome = await database.run(
      Sync.sync({ config: { ...config(), api_key: key }, schema: database.schema, progress: silent }),
    )
    expect(outcome.error).toBeUndefined()
    return outcome.creditsSpent
  }
  /** Quick within 10% (or 100) of exact and of the sync after it; exact inside quick's bounds. */
  const agreed = async () => {
    const { exact, quick } = await plans()
    const spent = await syncSpends()
    console.info(`${backend.name}: the sync spent ${spent}`)
    close(quick.credits, exact.credits)
    close(quick.credits, spent)
    expect(quick.estimate?.creditsAtLeast ?? Number.NaN).toBeLessThanOrEqual(spent)
    expect(quick.estimate?.creditsAtMost ?? Number.NaN).toBeGreaterThanOrEqual(spent)
    return { exact, quick, spent }
  }

  it("on an empty target it is an upper bound, and says every search is unknown", async () => {
    const { exact, quick } = await plans()
    const spent = await syncSpends()
    expect(quick.credits).toBeGreaterThanOrEqual(exact.credits)
    expect(quick.credits).toBeGreaterThanOrEqual(spent)
    expect(spent).toBeGreaterThan(1_000)
    // it-vps, with nothing held fresh, is read directly: every match due, whatever it held.
    expect(quick.estimate?.searchesUnknown).toEqual(["it"])
  }, 300_000)

  it("after a sync, it says close to nothing, as the exact plan and the next sync", async () => {
    const { quick, spent } = await agreed()
    expect(spent).toBe(0)
    expect(quick.estimate?.searchesUnknown).toEqual([])
    expect(quick.estimate?.heldTaken).toBeGreaterThan(1_000)
    // What the command prints: the estimate, its bounds and what it could not know.
    const printed = Plan.render(quick, "the target")
    expect(printed).toContain(`credits: about 0 of the 100,000 credit budget (an estimate: between 0 and `)
    expect(printed).toContain("not known: which of the ")
    const json = JSON.parse(Plan.toJson(quick)) as { estimate: Record<string, unknown> }
    expect(json.estimate.credits_at_least).toBe(0)
    expect(json.estimate.credits_at_most).toBe(quick.estimate?.creditsAtMost)
  }, 300_000)

  it("after the provider's data moves a generation (contacts move in and out of the searches)", async () => {
    await resize({ generation: 1 })
    await agreed()
  }, 300_000)

  it("with new contacts at the provider", async () => {
    await resize({ contacts: contacts + 4_000 })
    const { spent } = await agreed()
    expect(spent).toBeGreaterThan(0)
  }, 300_000)
})
