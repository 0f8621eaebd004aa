import * as Either from "effect/Either"
import { describe, expect, it } from "vitest"
import * as Streams from "./Streams.ts"

const conformed = <A>(entry: Streams.StreamEntry<A>, raw: Record<string, unknown>) =>
  entry.conform(raw, Either.getOrThrow(entry.decode(raw)))

describe("Conform", () => {
  it("writes loosely sent values as decoded, at every depth, and keeps every other key as sent", () => {
    const raw = {
      match_id: "m-1",
      company_id: "17",
      company: { id: "17", revenue: "12.5", name: "Acme", extra: { kept: true } },
      addresses: [{ location_id: "3", city: "Austin" }, { location_id: 4 }],
      dates: { created_date: "1622329525877", last_modified_date: "2021-06-01T00:00:00Z" },
      surprise: "kept",
    }
    expect(conformed(Streams.streams.contacts, raw)).toEqual({
      match_id: "m-1",
      company_id: 17,
      company: { id: 17, revenue: 12.5, name: "Acme", extra: { kept: true } },
      addresses: [{ location_id: 3, city: "Austin" }, { location_id: 4 }],
      dates: { created_date: 1622329525877, last_modified_date: Date.parse("2021-06-01T00:00:00Z") },
      surprise: "kept",
    })
    // The raw JSON itself is not changed.
    expect(raw.company.id).toBe("17")
  })

  it("hands back the raw object itself when nothing needs writing differently", () => {
    const raw = { match_id: "m-1", company_id: 17, company: { id: 17 }, addresses: [{ location_id: 3 }] }
    expect(conformed(Streams.streams.contacts, raw)).toBe(raw)
  })

  it("gives a key field its default: a product without a vendor", () => {
    expect(conformed(Streams.streams.taxonomy_products, { product: "Snowflake", vendor: null })).toEqual({
      product: "Snowflake",
      vendor: "",
    })
    expect(conformed(Streams.streams.taxonomy_products, { product: "Snowflake" })).toEqual({
      product: "Snowflake",
      vendor: "",
    })
  })

  it("leaves opaque values as sent", () => {
    const raw = { match_id: "m-1", _score: 3.5, cds_batch_id: { a: 1 } }
    expect(conformed(Streams.streams.contacts, raw)).toBe(raw)
  })
})
