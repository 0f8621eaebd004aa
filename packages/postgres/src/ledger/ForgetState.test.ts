import { PackedIds } from "@salesintel/airbyte"
import { describe, expect, it } from "vitest"
import { stateWithout } from "./ForgetState.ts"

describe("ForgetState: the forgotten taken out of a saved state", () => {
  it("takes ids out of listed and packed days, drops an emptied day, and keeps the rest", () => {
    const many = Array.from({ length: 70 }, (_, i) => `m-${i}`)
    const state = {
      known: { "20400": PackedIds.pack(many), "20401": ["m-gone"], "20402": ["m-kept"] },
      emails: { "20401": ["jane@example.com", "joe@example.com"] },
      searches: { "it-leaders": { matches: 3 } },
    }
    const { state: after, removed } = stateWithout(
      state,
      ["known", "emails"],
      new Set(["m-5", "m-gone", "jane@example.com"]),
      false,
    )
    expect(removed).toBe(3)
    const known = (after as { known: Record<string, unknown> }).known
    expect(PackedIds.unpack(String(known["20400"]))).toEqual(many.filter((id) => id !== "m-5"))
    expect(known["20401"]).toBeUndefined()
    expect(known["20402"]).toEqual(["m-kept"])
    expect((after as { emails: unknown }).emails).toEqual({ "20401": ["joe@example.com"] })
    expect((after as { searches: unknown }).searches).toEqual(state.searches)
  })

  it("takes domains out of the companies' sets and their unmatched list", () => {
    const { state: after, removed } = stateWithout(
      { domains: { "20400": ["acme.com", "other.com"] }, unmatched: { domains: ["acme.com"], names: ["x"] } },
      ["domains", "contact_domains"],
      new Set(["acme.com"]),
      true,
    )
    expect(removed).toBe(2)
    expect(after).toEqual({ domains: { "20400": ["other.com"] }, unmatched: { domains: [], names: ["x"] } })
  })
})
