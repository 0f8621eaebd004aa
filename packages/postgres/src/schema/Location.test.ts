import { describe, expect, it } from "vitest"
import * as Location from "./Location.ts"

describe("Location.parse", () => {
  it("splits the provider's City, Region, Country form", () => {
    expect(Location.parse("Philadelphia, PA, US")).toEqual({
      city: "Philadelphia",
      region: "PA",
      country: "US",
    })
    expect(Location.parse("London, ENG, GB")).toEqual({ city: "London", region: "ENG", country: "GB" })
    expect(Location.parse("  San  Jose ,CA,   US  ")).toEqual({
      city: "San Jose",
      region: "CA",
      country: "US",
    })
  })

  it("keeps extra leading parts in the city, and skips empty parts", () => {
    expect(Location.parse("Suite 5, Austin, TX, US")).toEqual({
      city: "Suite 5, Austin",
      region: "TX",
      country: "US",
    })
    expect(Location.parse("Austin, , TX, US")).toEqual({ city: "Austin", region: "TX", country: "US" })
    expect(Location.parse("Washington, D.C., United States")).toEqual({
      city: "Washington",
      region: "D.C.",
      country: "United States",
    })
  })

  it("splits a two-part string only when the second part is a code, and then gives no country", () => {
    expect(Location.parse("Austin, TX")).toEqual({ city: "Austin", region: "TX", country: null })
    expect(Location.parse("Toronto, Canada")).toEqual({ city: null, region: null, country: null })
    expect(Location.parse("Austin, tx")).toEqual({ city: null, region: null, country: null })
  })

  it("reads a lone two-letter code as the country, and nothing from anything else", () => {
    expect(Location.parse("US")).toEqual({ city: null, region: null, country: "US" })
    for (const odd of ["Berlin", "NSW", "", "   ", ",", ", ,", null, undefined])
      expect(Location.parse(odd)).toEqual({ city: null, region: null, country: null })
  })
})
