/**
 * What a company bought proves held (`heldBy`): each of its domains and its whole name, trimmed of
 * spaces and case-folded, from the flat fields or else the nested block, as the loader reads them
 * back from the `companies` row (HeldCompanies.ts in @salesintel/postgres).
 */
import { describe, expect, it } from "@effect/vitest"
import { heldBy } from "./Keys.ts"

describe("the keys a company bought proves held", () => {
  it("are its domains and its whole name, as the row's columns take them", () => {
    expect(
      heldBy({ company_id: 1, company_name: " Acme  Corp ", company_domains: ["Acme.com ", "", "acme.io"] }),
    ).toEqual({ domains: ["acme.com", "acme.io"], names: ["acme  corp"] })
    // The nested block when the flat fields are missing (the columns' precedence).
    expect(heldBy({ company_id: 2, company: { name: "Beta", domains: ["BETA.example"] } })).toEqual({
      domains: ["beta.example"],
      names: ["beta"],
    })
    expect(heldBy({ company_id: 3, company_name: "  ", company_domains: null })).toEqual({
      domains: [],
      names: [],
    })
  })
})
