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

  it("keeps contacts when the count grows, and the generation moves last_modified_date forward", () => {
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

  it("lists the job changes between generations, and the records show exactly those", () => {
    const base = Dataset.build({ contacts: 3000, companies: 200 })
    const later = base.resized({ generation: 3 })
    const changes = later.jobChanges(0)
    // ~2% of contacts move per generation.
    expect(changes.length).toBeGreaterThan(3000 * 0.02)
    expect(changes.length).toBeLessThan(3000 * 0.1)
    const job = (d: Dataset, i: number) => {
      const r = d.contact(i)
      return {
        company_id: r.company_id,
        job_title: r.job_title,
        job_level: r.job_level,
        job_department: r.job_department,
      }
    }
    const listed = new Map(changes.map((change) => [change.match_id, change]))
    const kinds = { company: 0, title: 0, level: 0 }
    for (let i = 0; i < 3000; i++) {
      const before = job(base, i)
      const after = job(later, i)
      const change = listed.get(base.matchId(i))
      if (change === undefined) {
        expect(after).toEqual(before)
        continue
      }
      expect([change.from, change.to]).toEqual([before, after])
      expect(after).not.toEqual(before)
      if (after.company_id !== before.company_id) kinds.company++
      else if (after.job_level !== before.job_level) kinds.level++
      else kinds.title++
      // A job change is also a modification: its last_modified_date moves past the base one.
      expect(Number(later.contact(i).dates.last_modified_date)).toBeGreaterThan(
        Number(base.contact(i).dates.last_modified_date),
      )
    }
    expect(Math.min(kinds.company, kinds.title, kinds.level)).toBeGreaterThan(0)
    // A contact moved to another company carries the new company's email domain and sites.
    const moved = changes.find((change) => change.from.company_id !== change.to.company_id)!
    const record = later.contactByMatchId(moved.match_id)!
    expect(record.email.endsWith(`@${later.companyById(moved.to.company_id)!.domain}`)).toBe(true)
    expect(later.jobChanges(3)).toEqual([])
    expect(later.jobChanges(0, 0)).toEqual([])
  })

  it("lists the technology adoptions and drops between generations, and append records show exactly those", () => {
    const base = Dataset.build({ contacts: 100, companies: 500 })
    const later = base.resized({ generation: 2 })
    const changes = later.technologyChanges(0)
    const adopted = changes.filter((change) => change.change === "adopted")
    const dropped = changes.filter((change) => change.change === "dropped")
    expect(adopted.length).toBeGreaterThan(20)
    expect(dropped.length).toBeGreaterThan(20)
    const products = (d: Dataset, c: number) => new Set(d.company(c).technologies.map((t) => t.product))
    let changed = 0
    for (let c = 0; c < 500; c++) {
      const before = products(base, c)
      const after = products(later, c)
      const id = base.companies[c]!.id
      const mine = changes.filter((change) => change.company_id === id)
      expect(new Set(mine.filter((m) => m.change === "adopted").map((m) => m.product))).toEqual(
        new Set([...after].filter((p) => !before.has(p))),
      )
      expect(new Set(mine.filter((m) => m.change === "dropped").map((m) => m.product))).toEqual(
        new Set([...before].filter((p) => !after.has(p))),
      )
      if (mine.length > 0) changed++
    }
    // ~10% of companies per generation, two generations.
    expect(changed).toBeGreaterThan(500 * 0.1)
    expect(changed).toBeLessThan(500 * 0.3)
    // The tech_* index follows: a company that adopted a product is found by it.
    const first = adopted[0]!
    const product = later.taxonomy.products.find((p) => p.product === first.product)!
    const company = later.companyById(first.company_id)!
    expect(later.productCompanies[product.id]).toContain(company.index)
    expect(base.productCompanies[product.id]).not.toContain(company.index)
    expect(later.technologyChanges(2)).toEqual([])
  })

  it("makes displacements: a product replaced by another of its subcategory in one generation, listed as the truth", () => {
    const base = Dataset.build({ contacts: 100, companies: 2_000 })
    const generations = [0, 1, 2, 3]
    const truth = base.displacements(generations)
    // Each generation changes ~10% of companies, ~30% of those by a displacement: ~60 per generation.
    const designed = truth.filter((d) => d.dropped_step === d.adopted_step)
    expect(designed.length).toBeGreaterThan(100)
    expect(truth.length).toBeGreaterThanOrEqual(designed.length)
    const productsAt = (g: number, companyId: number) =>
      new Set(
        base
          .resized({ generation: g })
          .companyTechnologiesById(companyId)!
          .technologies.map((t) => t.product),
      )
    for (const d of truth.slice(0, 40)) {
      // The observations show it: dropped at its step, adopted at its step, same subcategory.
      expect(productsAt(generations[d.dropped_step - 1]!, d.company_id).has(d.dropped_product)).toBe(true)
      expect(productsAt(generations[d.dropped_step]!, d.company_id).has(d.dropped_product)).toBe(false)
      expect(productsAt(generations[d.adopted_step - 1]!, d.company_id).has(d.adopted_product)).toBe(false)
      expect(productsAt(generations[d.adopted_step]!, d.company_id).has(d.adopted_product)).toBe(true)
      const rival = base.taxonomy.products.find((p) => p.product === d.adopted_product)!
      expect([rival.category, rival.subcategory]).toEqual([d.category, d.subcategory])
      expect(d.adopted_product).not.toBe(d.dropped_product)
    }
    // Deterministic from the seed; another seed displaces elsewhere.
    expect(Dataset.build({ contacts: 100, companies: 2_000 }).displacements(generations)).toEqual(truth)
    const other = Dataset.build({ seed: 7, contacts: 100, companies: 2_000 }).displacements(generations)
    expect(other).not.toEqual(truth)
    // One observation shows nothing.
    expect(base.displacements([2])).toEqual([])
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
