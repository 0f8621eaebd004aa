import * as Either from "effect/Either"
import { describe, expect, it } from "vitest"
import * as Filters from "./Filters.ts"

const encodePeople = (filters: unknown) => Filters.encode(Filters.PeopleFilters, filters)

describe("Filters.encode", () => {
  it("joins comma lists with ',' and tech lists with '~', in the spec's order", () => {
    const encoded = encodePeople({
      job_levels: ["vp", "dir"],
      company_domain: ["a.com", "b.io"],
      tech_product: ["Salesforce Sales Cloud", "HubSpot"],
      verified: true,
      company_min_size: 50,
      matchOnJobHistory: false,
      sort_by: "company_name",
      sort_direction: "desc",
    })
    expect(encoded).toEqual(
      Either.right([
        ["company_domain", "a.com,b.io"],
        ["company_min_size", "50"],
        ["verified", "true"],
        ["tech_product", "Salesforce Sales Cloud~HubSpot"],
        ["matchOnJobHistory", "false"],
        ["job_levels", "vp,dir"],
        ["sort_by", "company_name"],
        ["sort_direction", "desc"],
      ]),
    )
  })

  it("leaves out empty lists: an empty list is no filter", () => {
    expect(encodePeople({ job_levels: [], company_name: ["Acme"] })).toEqual(
      Either.right([["company_name", "Acme"]]),
    )
  })

  it("refuses a comma list value that contains a comma, naming the field and index", () => {
    const result = encodePeople({ company_name: ["Acme", "Smith, Jones & Co"] })
    expect(Either.isLeft(result)).toBe(true)
    const issue = Either.getLeft(result).pipe((option) => (option._tag === "Some" ? option.value : undefined))
    expect(issue?.path).toBe("company_name[1]")
    expect(issue?.description).toContain("without ','")
  })

  it("refuses a tilde list value that contains a tilde, but allows commas in it", () => {
    const tilde = encodePeople({ tech_vendor: ["Acme~Corp"] })
    expect(Either.isLeft(tilde) && tilde.left.path).toBe("tech_vendor[0]")
    expect(encodePeople({ tech_vendor: ["Acme, Inc."] })).toEqual(
      Either.right([["tech_vendor", "Acme, Inc."]]),
    )
  })

  it("refuses a NUL in any text filter, listed or not, on every endpoint's filters", () => {
    const people = encodePeople({ company_name: ["Acme\u0000"] })
    expect(Either.isLeft(people) && people.left.path).toBe("company_name[0]")
    expect(Either.isLeft(people) && people.left.description).toContain("without a NUL character (U+0000)")
    expect(Either.isLeft(encodePeople({ last_name: "Reyes\u0000" }))).toBe(true)
    const append = Filters.encode(Filters.TechnologyFilters, { company_domain: ["a.com\u0000"] })
    expect(Either.isLeft(append) && append.left.path).toBe("company_domain[0]")
    const products = Filters.encode(Filters.ProductFilters, { product: ["\u0000cloud"] })
    expect(Either.isLeft(products) && products.left.path).toBe("product[0]")
    // Other characters a name may hold are sent as they are.
    expect(encodePeople({ last_name: "O'Brien-Søren" })).toEqual(
      Either.right([["last_name", "O'Brien-Søren"]]),
    )
  })

  it("refuses empty list values", () => {
    const result = encodePeople({ email: ["a@b.com", "  "] })
    expect(Either.isLeft(result) && result.left.path).toBe("email[1]")
  })

  it("refuses codes outside the spec's lists", () => {
    const level = encodePeople({ job_levels: ["vp", "ceo"] })
    expect(Either.isLeft(level) && level.left.path).toBe("job_levels[1]")
    expect(Either.isLeft(level) && level.left.description).toBe(
      'Expected one of brd, chf, vp, dir, mgr, stf, actual "ceo"',
    )
    const department = encodePeople({ job_departments: ["it"] })
    expect(Either.isLeft(department) && department.left.path).toBe("job_departments[0]")
    const required = encodePeople({ required_fields: ["fax"] })
    expect(Either.isLeft(required) && required.left.path).toBe("required_fields[0]")
  })

  it("accepts every documented code", () => {
    const result = encodePeople({
      job_levels: [...Filters.jobLevels],
      job_departments: [...Filters.jobDepartments],
      required_fields: [...Filters.requiredFieldCodes],
    })
    expect(result).toEqual(
      Either.right([
        ["job_levels", "brd,chf,vp,dir,mgr,stf"],
        ["job_departments", "fnad,hr,it_is,lgl,mrkt,ops,prc,enrd,sale,other"],
        ["required_fields", "address,phone,direct_phone,any_mobile,personal_email,linkedin_url,job_title"],
      ]),
    )
  })

  it("types numbers and booleans strictly", () => {
    expect(Either.isLeft(encodePeople({ company_min_size: 10.5 }))).toBe(true)
    expect(Either.isLeft(encodePeople({ company_min_size: -1 }))).toBe(true)
    expect(Either.isLeft(encodePeople({ verified: "true" }))).toBe(true)
    expect(Either.isLeft(encodePeople({ mobile_phone: "(512) 555-0100" }))).toBe(true)
    expect(Either.isLeft(encodePeople({ location_country_codes: ["USA"] }))).toBe(true)
    expect(Either.isLeft(encodePeople({ sort_by: "company_size" }))).toBe(true)
  })

  it("refuses crossed ranges", () => {
    const result = encodePeople({ company_min_size: 500, company_max_size: 100 })
    expect(Either.isLeft(result) && result.left.description).toContain(
      "company_min_size (500) must not exceed",
    )
    expect(Either.isLeft(encodePeople({ company_min_revenue: 9, company_max_revenue: 1 }))).toBe(true)
  })

  it("refuses a ZIP radius without ZIP codes, naming the radius", () => {
    for (const filters of [
      { company_location_zipcodes_distance: 25 },
      { company_location_zipcodes_distance: 25, company_location_zipcodes: [] },
    ]) {
      const result = encodePeople(filters)
      expect(Either.isLeft(result) && result.left.path).toBe("company_location_zipcodes_distance")
      expect(Either.isLeft(result) && result.left.description).toContain("give company_location_zipcodes too")
    }
    expect(
      Either.isRight(
        encodePeople({ company_location_zipcodes_distance: 25, company_location_zipcodes: ["02110"] }),
      ),
    ).toBe(true)
    expect(Either.isRight(encodePeople({ company_location_zipcodes: ["02110"] }))).toBe(true)
  })

  it("refuses a LinkedIn identifier where the spec wants the full profile URL", () => {
    for (const token of ["dana-reyes", "in/dana-reyes", "  "]) {
      const result = encodePeople({ linkedin_url: token })
      expect(Either.isLeft(result) && result.left.path).toBe("linkedin_url")
      expect(Either.isLeft(result) && result.left.description).toContain("full profile URL")
    }
    for (const url of [
      "linkedin.com/in/dana-reyes",
      "https://www.linkedin.com/in/dana-reyes/",
      "http://uk.linkedin.com/in/dana",
    ])
      expect(Either.isRight(encodePeople({ linkedin_url: url }))).toBe(true)
  })

  it("refuses unknown parameters rather than dropping them", () => {
    const result = encodePeople({ job_level: ["vp"] })
    expect(Either.isLeft(result) && result.left.path).toBe("job_level")
  })

  it("taxonomy products need a product or vendor term", () => {
    const none = Filters.encode(Filters.ProductFilters, { sort_by: "vendor" })
    expect(Either.isLeft(none) && none.left.description).toContain("at least one product or vendor")
    expect(Filters.encode(Filters.ProductFilters, { product: ["sales", "cloud"] })).toEqual(
      Either.right([["product", "sales~cloud"]]),
    )
  })

  it("lists the tech filters in use", () => {
    expect(
      Filters.techFiltersUsed({ tech_category: ["CRM"], tech_vendor: [], company_domain: ["a.com"] }),
    ).toEqual(["tech_category"])
  })
})
