import { Streams } from "@salesintel/airbyte"
import { type Contact, Page } from "@salesintel/core"
import * as Schema from "effect/Schema"
import { describe, expect, it } from "vitest"
import { contact } from "../../../core/src/testing/Records.ts"
import * as Output from "./Output.ts"

const decode = Schema.decodeUnknownSync(Streams.streams.contacts.schema)
const item = (id: number, overrides: Record<string, unknown> = {}): Page.Item<Contact.Contact> => {
  const raw = contact(id, overrides)
  return { record: decode(raw), raw }
}
const record = (value: Page.Item<Contact.Contact>) => Output.record(Streams.streams.contacts, value)

describe("Output.pageRecords", () => {
  it("passes a page's rejected records on first, then its records, each record once", () => {
    const bad: Page.Rejected = {
      raw: { email: "x@y.z" },
      path: "search_results[1].match_id",
      description: "is missing",
    }
    // m-1 is sent twice (charged twice, as the provider charges every record on a page): its last
    // copy is the one kept, where the loader would have kept it.
    const outputs = Output.pageRecords(
      { items: [item(1, { job_title: "first" }), item(2), item(1, { job_title: "last" })], rejected: [bad] },
      record,
    )
    expect(outputs.map((output) => output._tag)).toEqual(["Rejected", "Record", "Record"])
    expect(outputs[0]).toEqual({ _tag: "Rejected", rejected: bad })
    expect(outputs.flatMap((output) => (output._tag === "Record" ? [output.data.job_title] : []))).toEqual([
      "IT Manager",
      "last",
    ])
    expect(Page.reasonOf(bad)).toBe("search_results[1].match_id: is missing")
  })
})

describe("Streams.keyOfRaw", () => {
  it("reads a record's key by its stream's key paths, and none where a part is missing or empty", () => {
    expect(Streams.keyOfRaw(Streams.streams.contacts, { match_id: "m-1" })).toBe("m-1")
    expect(Streams.keyOfRaw(Streams.streams.companies, { company_id: 7 })).toBe("7")
    expect(Streams.keyOfRaw(Streams.streams.taxonomy_products, { product: "P", vendor: "V" })).toBe(
      '["P","V"]',
    )
    expect(Streams.keyOfRaw(Streams.streams.contacts, { match_id: "" })).toBeUndefined()
    expect(Streams.keyOfRaw(Streams.streams.contacts, { email: "x" })).toBeUndefined()
    expect(Streams.keyOfRaw(Streams.streams.contacts, 7)).toBeUndefined()
  })
})
