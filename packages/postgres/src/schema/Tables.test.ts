/**
 * The table descriptions against the registry: one mapping per stream, no more (a type error
 * otherwise, checked here with @ts-expect-error so that loosening the type fails the test
 * type-check), and a record decoded once: what the source decoded in process maps to the same
 * rows as the same record decoded here from its JSON.
 */
import { Message, Streams } from "@salesintel/airbyte"
import * as Either from "effect/Either"
import { describe, expect, it } from "vitest"
import { company, contact } from "../testing/Records.ts"
import type { StreamMapping } from "./Mapping.ts"
import { allMappings, allTables, mappingOf, mappings } from "./Tables.ts"

describe("Tables", () => {
  it("has the tables of every stream of the registry, and only those", () => {
    expect(Object.keys(mappings).sort()).toEqual([...Streams.names].sort())
    for (const name of Streams.names) expect(mappings[name].stream).toBe(name)
    expect(allMappings.map((mapping) => mapping.stream)).toEqual(Streams.names)
    expect(mappingOf("people")).toBeUndefined()
    expect(new Set(allTables.map((table) => table.name)).size).toBe(allTables.length)
  })

  it("does not build with a stream missing, or one the registry does not have", () => {
    type ByStream = { readonly [Name in Streams.StreamName]: StreamMapping<Name> }
    // @ts-expect-error: companies (a registry stream) has no tables
    const missing: ByStream = {
      taxonomy_categories: mappings.taxonomy_categories,
      taxonomy_products: mappings.taxonomy_products,
      contacts: mappings.contacts,
    }
    const extra: ByStream = {
      ...mappings,
      // @ts-expect-error: people is not a registry stream
      people: mappings.contacts,
    }
    // @ts-expect-error: the contacts slot must hold the contacts stream's tables
    const swapped: ByStream = { ...mappings, contacts: mappings.companies }
    expect([missing, extra, swapped]).toHaveLength(3)
  })

  it("maps a record the source decoded to the same rows as the record decoded from its JSON", () => {
    const bothWays = <A>(entry: Streams.StreamEntry<A>, data: Message.JsonObject) => {
      const mapping = mappings[entry.name]
      const value = Either.getOrThrow(entry.decode(data))
      const inProcess = mapping.map(Message.record(entry.name, data, 1, { stream: entry, value }))
      const fromJson = mapping.map(Message.record(entry.name, data, 1))
      expect(Either.getOrThrow(inProcess)).toEqual(Either.getOrThrow(fromJson))
    }
    bothWays(Streams.streams.contacts, contact(7))
    bothWays(Streams.streams.companies, company(3, ["Marketo Engage", "Salesforce"]))
  })

  it("types the company's size and revenue, the location's parts, the social profiles and the sites", () => {
    const rowOf = (table: { readonly columns: ReadonlyArray<{ readonly name: string }> }, line: string) =>
      Object.fromEntries(line.split("\t").map((cell, index) => [table.columns[index]?.name, cell]))
    const mapped = (data: Message.JsonObject) =>
      Either.getOrThrow(mappings.contacts.map(Message.record("contacts", data, 1)))
    const nested = mapped(
      contact(1, {
        location: "San Jose, CA, US",
        social_profiles: [
          { type: "linkedin", url: "linkedin.com/in/a" },
          { type: "twitter", url: "twitter.com/a" },
        ],
        addresses: [
          { location_id: 11, is_hq: true, city: "Boston" },
          { location_id: null, city: "Nowhere" },
          { location_id: 12, is_hq: false, city: "San Jose" },
        ],
      }),
    )
    expect(rowOf(mappings.contacts.table, nested.line)).toMatchObject({
      company_size: "131",
      company_revenue: "41",
      company_size_range: "50-199",
      location_city: "San Jose",
      location_region: "CA",
      location_country: "US",
    })
    const [phones, profiles, sites] = mappings.contacts.children
    expect(phones?.table.name).toBe("contact_phones")
    expect(nested.children[1]?.map((line) => rowOf(profiles!.table, line))).toEqual([
      expect.objectContaining({ match_id: "m-1", position: "0", type: "linkedin" }),
      expect.objectContaining({ match_id: "m-1", position: "1", type: "twitter", url: "twitter.com/a" }),
    ])
    // Sites: keyed by location_id (an address without one is skipped), with the contact's company.
    expect(sites?.table.primaryKey).toEqual(["location_id"])
    expect(nested.children[2]?.map((line) => rowOf(sites!.table, line))).toEqual([
      expect.objectContaining({ location_id: "11", company_id: "1001", is_hq: "t", city: "Boston" }),
      expect.objectContaining({ location_id: "12", is_hq: "f", city: "San Jose" }),
    ])
    // Without the nested block, the flat copies; an unsplittable location leaves its parts null.
    const flat = mapped(contact(2, { company: null, company_size: "5000", location: "Somewhere" }))
    expect(rowOf(mappings.contacts.table, flat.line)).toMatchObject({
      company_size: "5000",
      company_size_range: "50-199",
      location: "Somewhere",
      location_city: "\\N",
    })
  })

  it("takes the decoded value only from its own stream's entry, and decodes otherwise", () => {
    const entry = Streams.streams.contacts
    const data = contact(1, { match_id: 42 })
    const value = Either.getOrThrow(entry.decode(contact(1)))
    const decodedHere = mappings.contacts.map(Message.record("contacts", data, 1))
    expect(Either.isLeft(decodedHere) && decodedHere.left.path).toBe("match_id")
    // The value the source decoded is used as it is: the data is not decoded again.
    const handedOver = mappings.contacts.map(Message.record("contacts", data, 1, { stream: entry, value }))
    expect(Either.getOrThrow(handedOver).key).toBe("m-1")
    // A value another entry decoded is not trusted: the data is decoded (and fails).
    const category = Either.getOrThrow(Streams.streams.taxonomy_categories.decode({ category: "CRM" }))
    const foreign = mappings.contacts.map(
      Message.record("contacts", data, 1, { stream: Streams.streams.taxonomy_categories, value: category }),
    )
    expect(Either.isLeft(foreign)).toBe(true)
  })
})
