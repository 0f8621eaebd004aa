// Unit tests of the synthetic dataset: determinism, reversible ids, and the distributions
// the connector's partitioning and analytics depend on.
import { describe, expect, it } from "vitest"
import { Flag } from "./Contacts.ts"
import { Dataset } from "./Dataset.ts"
import { DigitCodec, IdCodec } from "./Random.ts"

const dataset = Dataset.build()

describe("Dataset", () => {
  it("has the documented defaults", () => {
    expect([dataset.seed, dataset.contactCount, dataset.companyCount, dataset.generation]).toEqual([
      42, 100_000, 10_000, 0,
    ])
  })

  it("is a pure function of the seed", () => {
    const again = Dataset.build({ contacts: 500, companies: 50 })
    const same = Dataset.build({ contacts: 500, companies: 50 })
    const other = Dataset.build({ contacts: 500, companies: 50, seed: 43 })
    expect(again.contact(123)).toEqual(same.contact(123))
    expect(again.company(7)).toEqual(same.company(7))
    expect(other.contact(123)).not.toEqual(again.contact(123))
  })

  it("keeps contacts when the count grows, and the generation only moves last_modified_date forward", () => {
    const small = Dataset.build({ contacts: 1000, companies: 100 })
    const big = small.resized({ contacts: 2000 })
    expect(big.contact(999)).toEqual(small.contact(999))
    const modified = small.resized({ generation: 2 })
    let moved = 0
    for (let i = 0; i < 1000; i++) {
      const before = small.contact(i).dates
      const after = modified.contact(i).dates
      expect(after.created_date).toBe(before.created_date)
      if (after.last_modified_date !== before.last_modified_date) {
        moved++
        expect(Number(after.last_modified_date)).toBeGreaterThan(Number(before.last_modified_date))
      }
    }
    expect(moved).toBeGreaterThan(40)
    expect(moved).toBeLessThan(200)
  })

  it("match ids are unique, stable and decode back to their index", () => {
    const seen = new Set<string>()
    for (let i = 0; i < 5000; i++) {
      const id = dataset.matchId(i)
      expect(dataset.indexOfMatchId(id)).toBe(i)
      expect(dataset.contactByMatchId(id)?.match_id).toBe(id)
      seen.add(id)
    }
    expect(seen.size).toBe(5000)
    expect(dataset.indexOfMatchId("m-zzzzzzz")).toBeUndefined()
    expect(dataset.indexOfMatchId("bogus")).toBeUndefined()
  })

  it("codecs are bijective", () => {
    const ids = new IdCodec(9, 1)
    const digits = new DigitCodec(9, 2)
    for (const i of [0, 1, 2, 999_999, 4_000_000, 9_999_999]) {
      expect(ids.decode(ids.encode(i))).toBe(i)
      expect(digits.decode(digits.encode(i))).toBe(i)
      expect(digits.encode(i)).toMatch(/^\d{7}$/)
    }
  })

  it("every contact has a level, a department, a work email at its company's domain, and digit-only phones", () => {
    for (let i = 0; i < 3000; i++) {
      const c = dataset.contact(i)
      expect(c.email.endsWith(`@${c.company_domains[0]}`)).toBe(true)
      expect(c.job_level).toMatch(/^(brd|chf|vp|dir|mgr|stf)$/)
      for (const p of c.phone_numbers) expect(p.value).toMatch(/^\d+$/)
      for (const s of c.social_profiles) expect(s.url).not.toMatch(/^https?:/)
      if (c.position_location_id !== null) {
        expect(c.addresses.map((a) => a.location_id)).toContain(c.position_location_id)
      }
      expect(c.addresses.filter((a) => a.is_hq).length).toBeLessThanOrEqual(1)
    }
  })

  it("optional fields are absent on some contacts, so required_fields filters", () => {
    const counts = { personal: 0, phones: 0, title: 0, address: 0, pastJob: 0 }
    for (let i = 0; i < 5000; i++) {
      const c = dataset.contact(i)
      if (c.personal_email !== null) counts.personal++
      if (c.phone_numbers.length > 0) counts.phones++
      if (c.job_title !== null) counts.title++
      if (c.addresses.length > 0) counts.address++
      if (dataset.posFlags[dataset.indexToPos[i]!]! & Flag.pastJob) counts.pastJob++
    }
    for (const n of Object.values(counts)) {
      expect(n).toBeGreaterThan(250)
      expect(n).toBeLessThan(5000)
    }
  })

  it("simple filters match well over 10,000 contacts and partitions split them", () => {
    const sale = dataset.departmentLists[8]!
    expect(sale.length).toBeGreaterThan(15_000)
    // No single state or company holds a partition-breaking share.
    const perCompany = new Map<number, number>()
    for (const p of sale) {
      const c = dataset.siteCompany[dataset.posSite[p]!]!
      perCompany.set(c, (perCompany.get(c) ?? 0) + 1)
    }
    expect(Math.max(...perCompany.values())).toBeLessThan(1000)
  })

  it("technology adoption has a few very common products and a long tail", () => {
    const users = dataset.productCompanies.map((l) => l.length).sort((a, b) => b - a)
    expect(users[0]!).toBeGreaterThan(dataset.companyCount * 0.3)
    expect(users[users.length - 1]!).toBeLessThan(dataset.companyCount * 0.05)
  })
})
