/**
 * The hand-written decoders agree with the schemas: on every value they accept they give the
 * schema's result, and what they leave (`miss`) is left to the schema.
 */
import * as Either from "effect/Either"
import * as Schema from "effect/Schema"
import { describe, expect, it } from "vitest"
import * as CompanyTechnologies from "./CompanyTechnologies.ts"
import * as Contact from "./Contact.ts"
import * as FastDecode from "./FastDecode.ts"
import * as Taxonomy from "./Taxonomy.ts"
import { company, contact } from "./testing/Records.ts"

const agrees = <A, I>(schema: Schema.Schema<A, I>, fast: FastDecode.Fast<A>, input: unknown) => {
  const fastResult = fast(input)
  const schemaResult = Schema.decodeUnknownEither(schema)(input)
  if (fastResult === FastDecode.miss) return "miss"
  expect(Either.isRight(schemaResult)).toBe(true)
  if (Either.isRight(schemaResult)) expect(fastResult).toEqual(schemaResult.right)
  return "fast"
}

describe("FastDecode", () => {
  it("decodes canonical records exactly as the schemas do", () => {
    for (let id = 0; id < 20; id++) {
      expect(agrees(Contact.Contact, FastDecode.contact, contact(id))).toBe("fast")
      expect(agrees(Contact.PreviewContact, FastDecode.previewContact, contact(id))).toBe("fast")
    }
    expect(agrees(CompanyTechnologies.CompanyTechnologies, FastDecode.companyTechnologies, company(7))).toBe(
      "fast",
    )
    for (const odd of [
      { is_international: "no" },
      { verified: null, is_international: true },
      { verified: 1 },
    ])
      agrees(CompanyTechnologies.CompanyTechnologies, FastDecode.companyTechnologies, {
        ...company(7),
        ...odd,
      })
    expect(agrees(Taxonomy.Category, FastDecode.category, { category: "A", subcategories: ["x"] })).toBe(
      "fast",
    )
    expect(agrees(Taxonomy.Product, FastDecode.product, { product: "P", vendor: null })).toBe("fast")
  })

  it("never accepts what the schema rejects, and leaves unusual spellings to the schema", () => {
    const odd: ReadonlyArray<Record<string, unknown>> = [
      { company_id: "x" },
      { company_id: 1.5 },
      { company_id: " 12" },
      { match_id: "" },
      { match_id: 1 },
      { dates: { created_date: "2024-01-02T03:04:05Z" } },
      { dates: { created_date: "1e3" } },
      { company: { revenue: "NaN" } },
      { phone_numbers: [{ value: 5 }] },
      { addresses: [{ location_id: "12", is_hq: "yes" }] },
      { addresses: [{ location_id: "12" }] },
      { social_profiles: "linkedin" },
      { position_location_id: null, company_domains: null, company: null },
      { _score: { value: 1.5 }, cds_batch_id: "b-1", company_score: 3, company_status: ["x"] },
      { _score: undefined, company_status: null },
      { company_size: "12", company_revenue: "41.5", company_size_range: "10-49" },
      { company_size: "12.5" },
      { company_revenue: "forty" },
      { company_revenue_range: 5 },
    ]
    for (const overrides of odd) {
      agrees(Contact.Contact, FastDecode.contact, contact(1, overrides))
      agrees(Contact.PreviewContact, FastDecode.previewContact, contact(1, overrides))
    }
    expect(agrees(Contact.Contact, FastDecode.contact, [])).toBe("miss")
    expect(agrees(Contact.Contact, FastDecode.contact, contact(1, { company_id: "x" }))).toBe("miss")
  })
})

describe("FastDecode.decoders", () => {
  it("decode with the fast path or the schema, and name the bad value's path either way", () => {
    const { contact: decoder } = FastDecode.decoders
    expect(Either.getOrThrow(decoder.decode(contact(3)))).toEqual(
      Either.getOrThrow(Schema.decodeUnknownEither(Contact.Contact)(contact(3))),
    )
    // An ISO date is beyond the fast path; the schema decodes it.
    const iso = decoder.decode(contact(3, { dates: { created_date: "2024-01-02T03:04:05Z" } }))
    expect(Either.getOrThrow(iso).dates?.created_date).toBe(Date.parse("2024-01-02T03:04:05Z"))
    const bad = decoder.decode(contact(3, { company: { id: "twelve" } }))
    expect(Either.isLeft(bad) && bad.left.path).toBe("company.id")
  })
})
