/**
 * Packed ids: whatever the ids (the provider's `m-` + token shape, tokens of many widths, emails,
 * any Unicode), they unpack to exactly the set packed; and the shapes a state holds most pack small.
 */
import fc from "fast-check"
import { describe, expect, it } from "vitest"
import * as PackedIds from "./PackedIds.ts"

const roundTrip = (ids: ReadonlyArray<string>) => [...PackedIds.unpack(PackedIds.pack(ids))].sort()

const base36 = fc.string({ unit: fc.constantFrom(..."0123456789abcdefghijklmnopqrstuvwxyz"), maxLength: 12 })
/** Ids of the shapes that meet: prefixed tokens, bare numbers, emails, domains, any text. */
const id = fc.oneof(
  fc.tuple(fc.constantFrom("m-", "d-", "", "x"), base36).map(([prefix, token]) => prefix + token),
  fc
    .tuple(
      fc.stringMatching(/^[a-z.]{1,12}$/),
      fc.constantFrom("acme", "globex", "初め"),
      fc.constantFrom("com", "io"),
    )
    .map(([name, company, tld]) => `email:${name}@${company}.${tld}`),
  fc.string({ unit: "grapheme", maxLength: 8 }),
  fc.string({ unit: "binary", maxLength: 8 }).filter((text) => !/[\ud800-\udfff]/.test(text)),
)

/** `count` emails of the shape a known-contacts file holds (a name, a company, a domain). */
const emails = (count: number) =>
  Array.from(
    { length: count },
    (_, i) =>
      `email:${["ana", "bo", "chen", "dee"][i % 4]}.${["lee", "ng", "ortiz"][i % 3]}${i}@company${i % 997}.${["com", "io", "net"][i % 3]}`,
  )

describe("PackedIds", () => {
  it("unpacks to exactly the ids packed, whatever they are", () => {
    fc.assert(
      fc.property(fc.uniqueArray(id, { maxLength: 200 }), (ids) => {
        expect(roundTrip(ids)).toEqual([...ids].sort())
      }),
      { numRuns: 300 },
    )
  })

  it("keeps a character outside the BMP whole where two ids share half of it", () => {
    // "😀" and "😁" share their first UTF-16 unit: front-coding must not cut between the two.
    const ids = ["a😀", "a😁", "a😁b", "😀", "😁x"]
    expect(roundTrip(ids)).toEqual([...ids].sort())
  })

  it("keeps tokens of every width, leading zeros and all", () => {
    const ids = [
      "m-0",
      "m-00",
      "m-007",
      "m-1",
      "m-10",
      "m-2",
      "m-zzzzzzzzzz",
      "m-0000000000",
      "7",
      "07",
      "100",
    ]
    const many = Array.from({ length: 500 }, (_, i) => `m-${i.toString(36)}`)
    const distinct = [...new Set([...ids, ...many])]
    expect(roundTrip(distinct)).toEqual(distinct.sort())
  })

  it("packs the provider's ids as numbers and emails front-coded, each small", () => {
    const ids = Array.from(
      { length: 20_000 },
      (_, i) => `m-${((i * 2_654_435_761) % 2 ** 32).toString(36).padStart(7, "0")}`,
    )
    const known = emails(20_000)
    const bytesPerId = (list: ReadonlyArray<string>) => PackedIds.pack(list).length / list.length
    // Random 32-bit tokens take about 3 bytes.
    expect(bytesPerId(ids)).toBeLessThan(3.5)
    // Before, each email was a "shape" of its own (its top-level domain read as a token): 7.4 bytes
    // an email here, where front-coded they take 4.5.
    expect(bytesPerId(known)).toBeLessThan(5.5)
    expect(roundTrip(known)).toEqual([...known].sort())
  })
})
