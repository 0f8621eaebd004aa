/**
 * The budget as the provider counts it. Requests that time out while the provider still answers
 * (and charges) never push its count past credit_budget; a contact a search bought is not bought
 * again by an email that finds it; a budget smaller than a page still buys what it covers.
 */
import { describe, expect, it } from "vitest"
import { chaosConfig, chaosFile, charged, query, record, sync, writeJson } from "./harness.ts"

const file = chaosFile({ latencyMs: 0, reference: false })
const fresh = () => file.fresh()

const search = { searches: [{ name: "it-vps", filters: { job_departments: ["it_is"], job_levels: ["vp"] } }] }

describe("credits", () => {
  it("requests timing out under latency jitter never make the provider charge past the budget", async () => {
    const budget = 300
    const sandbox = file.provider
    sandbox.reset()
    // Answers take 0 to 2 s; the client gives up after 1 s, while the provider still charges.
    sandbox.setFaults({ latency_ms: 0, jitter_ms: 2_000 })
    try {
      const config = chaosConfig(sandbox, {
        credit_budget: budget,
        // Free requests wait out the jitter; credited ones give up after 1 s, often mid-answer.
        timeout_ms: 3_000,
        credited_timeout_ms: 1_000,
        retry: { max_attempts: 3, initial_delay_ms: 50, max_delay_ms: 200 },
        companies: undefined,
        taxonomy: undefined,
        contacts: search,
      })
      const finished = await sync(fresh(), writeJson(config)).done
      const counted = Number(/credits spent: (\d+) of/.exec(finished.stdout)?.[1])
      const uncertain = Number(/(\d+) of those credits were possibly charged/.exec(finished.stdout)?.[1] ?? 0)
      record({
        case: "timeouts under jitter, budget 300",
        exit: finished.code ?? "?",
        charged: charged(sandbox),
        "our count": counted,
        "possibly charged without delivery": uncertain,
        budget,
      })
      // The provider's count never passes the budget, and ours is never below the provider's.
      expect(charged(sandbox)).toBeLessThanOrEqual(budget)
      expect(counted).toBeGreaterThanOrEqual(charged(sandbox))
      expect(counted).toBeLessThanOrEqual(budget)
    } finally {
      sandbox.reset()
    }
  })

  it("an email that finds a contact a search already bought costs nothing more", async () => {
    const sandbox = file.provider
    const target = fresh()
    sandbox.reset()
    const searchOnly = await sync(target, writeJson(chaosConfig(sandbox, { contacts: search }))).done
    expect(searchOnly.code, searchOnly.stderr).toBe(0)
    const searchCredits = charged(sandbox)
    const bought = await query(target, "SELECT match_id FROM $schema.contacts ORDER BY match_id LIMIT 5")
    const emails = bought.map((row) => sandbox.dataset.contactByMatchId(String(row.match_id))?.email)
    expect(emails.every((email) => typeof email === "string")).toBe(true)

    const other = fresh()
    sandbox.reset()
    const withEmails = chaosConfig(sandbox, { contacts: { ...search, emails } })
    const finished = await sync(other, writeJson(withEmails)).done
    record({
      case: "email overlapping a search",
      exit: finished.code ?? "?",
      charged: charged(sandbox),
      "search alone": searchCredits,
      "extra credits": charged(sandbox) - searchCredits,
    })
    expect(finished.code, finished.stderr).toBe(0)
    expect(charged(sandbox)).toBe(searchCredits)
    const searches = await query(
      other,
      `SELECT DISTINCT search FROM $schema.contacts WHERE match_id = ANY($1::text[])`,
      [bought.map((row) => String(row.match_id))],
    )
    // The search that bought them stays theirs.
    expect(searches.map((row) => row.search)).toEqual(["it-vps"])
  })

  it("a budget smaller than a page still buys what it covers", async () => {
    const budget = 10
    const sandbox = file.provider
    sandbox.reset()
    const config = chaosConfig(sandbox, { credit_budget: budget, contacts: undefined, taxonomy: undefined })
    const finished = await sync(fresh(), writeJson(config)).done
    record({
      case: "budget 10 < page 50, 25 domains",
      exit: finished.code ?? "?",
      charged: charged(sandbox),
      budget,
    })
    expect(finished.code, finished.stderr).toBe(0)
    expect(charged(sandbox)).toBe(budget)
  })
})
