import { describe, expect, it } from "vitest"
import * as Catalog from "./Catalog.ts"
import * as FieldPaths from "./FieldPaths.ts"
import * as Message from "./Message.ts"
import * as Streams from "./Streams.ts"

const contact = {
  match_id: "m1",
  first_name: "Ada",
  personal_email: "ada@home.example",
  phone_numbers: [
    { type: "mobile", value: "5551234567" },
    { type: "work", value: "5557654321" },
  ],
  addresses: [
    { location_id: 1, street_1: "1 Main St", city: "Philadelphia" },
    { location_id: 2, city: "Boston" },
  ],
  company: { name: "Acme", revenue: 12.5, domains: ["acme.example"] },
  extra_from_provider: { kept: true },
}

describe("FieldPaths.declaredPaths", () => {
  it("lists the record Schema's fields, nested ones dotted and through arrays and nullable unions", () => {
    const paths = FieldPaths.declaredPaths(Streams.streams.contacts.jsonSchema)
    for (const path of ["match_id", "personal_email", "phone_numbers", "phone_numbers.value"])
      expect(paths.has(path), path).toBe(true)
    for (const path of ["addresses.street_1", "company.revenue", "dates.created_date"])
      expect(paths.has(path), path).toBe(true)
    expect(paths.has("personal_emial")).toBe(false)
    expect(paths.has("company.nonsense")).toBe(false)
    expect(FieldPaths.declaredPaths(Streams.streams.companies.jsonSchema).has("technologies.in_use")).toBe(
      true,
    )
  })
})

describe("FieldPaths.remove", () => {
  const removing = (paths: ReadonlyArray<string>) => (value: unknown) =>
    FieldPaths.remove(value, FieldPaths.treeOf(paths))

  it("drops top-level fields and keeps the rest, provider additions included", () => {
    const result = removing(["personal_email", "phone_numbers"])(contact) as Record<string, unknown>
    expect(Object.keys(result)).toEqual([
      "match_id",
      "first_name",
      "addresses",
      "company",
      "extra_from_provider",
    ])
    expect(result.company).toBe(contact.company)
  })

  it("drops a nested field in an object and in every element of an array", () => {
    const result = removing(["company.revenue", "addresses.street_1"])(contact) as typeof contact
    expect(result.company).toEqual({ name: "Acme", domains: ["acme.example"] })
    expect(result.addresses).toEqual([
      { location_id: 1, city: "Philadelphia" },
      { location_id: 2, city: "Boston" },
    ])
    // Only what changed is copied; the input is untouched.
    expect(result.phone_numbers).toBe(contact.phone_numbers)
    expect(contact.company.revenue).toBe(12.5)
    expect(contact.addresses[0]?.street_1).toBe("1 Main St")
  })

  it("returns the same value when none of the fields is there", () => {
    const record = { match_id: "m2", company: null, addresses: [{ city: "X" }] }
    expect(removing(["personal_email", "company.revenue", "addresses.street_1"])(record)).toBe(record)
  })

  it("lets a dropped field win over a path inside it, in either order", () => {
    for (const paths of [
      ["company", "company.revenue"],
      ["company.revenue", "company"],
    ])
      expect(Object.keys(removing(paths)(contact) as object)).not.toContain("company")
  })

  it("leaves null, scalars and arrays of scalars alone", () => {
    const remove = removing(["company.revenue"])
    expect(remove(null)).toBeNull()
    expect(remove({ company: "Acme" })).toEqual({ company: "Acme" })
    const scalars = { company: [1, 2] }
    expect(remove(scalars)).toBe(scalars)
  })
})

describe("FieldPaths.removeFromRecord", () => {
  const entry = Streams.streams.contacts
  const decoded = { stream: entry, value: { ...contact, extra_from_provider: undefined } }
  const tree = FieldPaths.treeOf(["personal_email", "phone_numbers.value"])

  it("removes the fields from the data, the decoded value and the data's text", () => {
    const message: Message.RecordMessage = {
      ...Message.record("contacts", contact, 1, decoded as Streams.Decoded<unknown>),
      dataText: JSON.stringify(contact),
    }
    const result = FieldPaths.removeFromRecord(message, tree)
    expect(result.dataText).toBeUndefined()
    for (const value of [result.record.data, result.decoded?.value]) {
      expect(JSON.stringify(value)).not.toContain("ada@home.example")
      expect(JSON.stringify(value)).not.toContain("5551234567")
      expect((value as typeof contact).phone_numbers.map((phone) => phone.type)).toEqual(["mobile", "work"])
    }
    expect(result.decoded?.stream).toBe(entry)
    expect(message.record.data).toBe(contact)
  })

  it("returns the message itself when the record has none of the fields (its text stays valid)", () => {
    const data = { match_id: "m3" }
    const message = { ...Message.record("contacts", data, 1), dataText: '{"match_id":"m3"}' }
    expect(FieldPaths.removeFromRecord(message, tree)).toBe(message)
  })
})

describe("Catalog.deselectedFields (Airbyte's field selection: the configured json_schema's properties)", () => {
  const configured = (jsonSchema?: Readonly<Record<string, unknown>>): Catalog.ConfiguredStream => ({
    stream: { name: "contacts", ...(jsonSchema === undefined ? {} : { json_schema: jsonSchema }) },
    sync_mode: "incremental",
    destination_sync_mode: "append_dedup",
  })

  it("selects everything when the configured stream lists no properties", () => {
    expect(Catalog.deselectedFields(configured())).toEqual([])
    expect(Catalog.deselectedFields(configured({ type: "object" }))).toEqual([])
  })

  it("selects everything when the configured schema is the discovered one", () => {
    expect(Catalog.deselectedFields(configured(Streams.streams.contacts.jsonSchema))).toEqual([])
  })

  it("leaves out the declared fields the configured schema omits, never the key or the cursor", () => {
    const {
      personal_email: _,
      phone_numbers: __,
      match_id: ___,
      _salesintel_fetched_at: ____,
      ...rest
    } = Streams.streams.contacts.jsonSchema.properties as Record<string, unknown>
    const deselected = Catalog.deselectedFields(configured({ type: "object", properties: rest }))
    expect([...deselected].sort()).toEqual(["personal_email", "phone_numbers"])
  })

  it("decodes json_schema from a configured catalog", () => {
    const catalog = Catalog.decodeConfigured({
      streams: [
        { ...configured(), stream: { name: "contacts", json_schema: { properties: { match_id: {} } } } },
      ],
    })
    expect(catalog._tag).toBe("Right")
    if (catalog._tag === "Right")
      expect(Catalog.deselectedFields(catalog.right.streams[0]!)).toContain("email")
  })
})
