// Query execution over the dataset's indexes. A people query narrows its candidates with the
// most selective index available (identity lookups, company/site ranges, level or department
// posting lists) and checks the remaining filters on typed columns; it never builds a record
// except for the page it returns. Result sets are cached per filter set, so paging through
// one query costs one evaluation.
import type { Company } from "./Companies.ts"
import { Flag, titles } from "./Contacts.ts"
import type { Dataset } from "./Dataset.ts"
import type { AppendQuery, Paging, PeopleQuery, ProductsQuery, TechFilter } from "./Filters.ts"
import type { Product } from "./Taxonomy.ts"
import { cities, firstNames, lastNames, type RequiredField } from "./Vocabulary.ts"

export interface PageOf<T> {
  /** Matches of the whole query, not of the page. */
  readonly total: number
  readonly items: readonly T[]
}

/** Which flag bits satisfy each required-field code (any one bit of the mask is enough). */
const requiredMasks: Readonly<Record<RequiredField, number>> = {
  address: Flag.address,
  phone: Flag.sitePhone | Flag.directPhone | Flag.mobile,
  direct_phone: Flag.directPhone | Flag.mobile,
  any_mobile: Flag.mobile,
  personal_email: Flag.personalEmail,
  linkedin_url: Flag.linkedin,
  job_title: Flag.jobTitle,
}

const containsAny = (text: string, needles: readonly string[]) => {
  const haystack = text.toLowerCase()
  return needles.some((n) => haystack.includes(n))
}

/** Taxonomy products a tech filter selects (exact, case-insensitive taxonomy values). */
export const selectProducts = (products: readonly Product[], tech: TechFilter): Product[] =>
  products.filter(
    (p) =>
      (tech.categories === undefined || tech.categories.includes(p.category.toLowerCase())) &&
      (tech.subcategories === undefined || tech.subcategories.includes(p.subcategory.toLowerCase())) &&
      (tech.products === undefined || tech.products.includes(p.product.toLowerCase())) &&
      (tech.vendors === undefined || tech.vendors.includes(p.vendor.toLowerCase())),
  )

const milesBetween = (lat1: number, lon1: number, lat2: number, lon2: number): number => {
  const rad = Math.PI / 180
  const a =
    Math.sin(((lat2 - lat1) * rad) / 2) ** 2 +
    Math.cos(lat1 * rad) * Math.cos(lat2 * rad) * Math.sin(((lon2 - lon1) * rad) / 2) ** 2
  return 3958.8 * 2 * Math.asin(Math.sqrt(a))
}

interface ResultSet {
  readonly positions: Int32Array
  /** Lazily built: for each company, where its run of matches starts in positions (-1 if none). */
  runs?: { readonly start: Int32Array; readonly end: Int32Array }
}

const cacheSize = 24

/** A company as one append row: with duplicates on, a company may appear once per country. */
export interface CompanyRow {
  readonly company: Company
  readonly country: string
}

export class Search {
  private readonly cache = new Map<string, ResultSet>()

  /**
   * @param duplicates when true, append answers without is_international return a company
   *   once per country it has sites in (the provider's documented duplicates).
   */
  constructor(
    readonly dataset: Dataset,
    readonly duplicates = false,
  ) {}

  /** Contact indexes of one page of a people query, and the query's total. */
  people(q: PeopleQuery): PageOf<number> {
    let result = this.cache.get(q.cacheKey)
    if (result === undefined) {
      result = { positions: this.matchPositions(q) }
      this.cache.set(q.cacheKey, result)
      if (this.cache.size > cacheSize) this.cache.delete(this.cache.keys().next().value!)
    } else {
      // Refresh its place in the LRU order.
      this.cache.delete(q.cacheKey)
      this.cache.set(q.cacheKey, result)
    }
    const positions = this.pagePositions(result, q.paging)
    return {
      total: result.positions.length,
      items: Array.from(positions, (p) => this.dataset.posToIndex[p]!),
    }
  }

  private pagePositions(result: ResultSet, paging: Paging): number[] {
    const offset = (paging.page - 1) * paging.pageSize
    const all = result.positions
    if (paging.sortBy === undefined) {
      // The default order is the canonical one (company by company); desc reverses it.
      if (!paging.descending) return Array.from(all.subarray(offset, offset + paging.pageSize))
      const end = all.length - offset
      return Array.from(all.subarray(Math.max(0, end - paging.pageSize), Math.max(0, end))).reverse()
    }
    const d = this.dataset
    if (result.runs === undefined) {
      // Positions are company-major, so each company's matches are one contiguous run.
      const start = new Int32Array(d.companyCount).fill(-1)
      const end = new Int32Array(d.companyCount)
      for (let i = 0; i < all.length; i++) {
        const company = d.siteCompany[d.posSite[all[i]!]!]!
        if (start[company] === -1) start[company] = i
        end[company] = i + 1
      }
      result.runs = { start, end }
    }
    const { start, end } = result.runs
    const order = paging.sortBy === "company_location" ? d.companiesByLocation : d.companiesByName
    const page: number[] = []
    let skip = offset
    for (let k = 0; k < order.length && page.length < paging.pageSize; k++) {
      const company = order[paging.descending ? order.length - 1 - k : k]!
      const s = start[company]!
      if (s < 0) continue
      const n = end[company]! - s
      if (skip >= n) {
        skip -= n
        continue
      }
      for (let i = s + skip; i < s + n && page.length < paging.pageSize; i++) page.push(all[i]!)
      skip = 0
    }
    return page
  }

  /** Ascending positions of every contact matching q. */
  private matchPositions(q: PeopleQuery): Int32Array {
    const d = this.dataset
    const siteMask = this.siteMask(q)
    const identity = this.identityCandidates(q)

    // The candidate source: the smallest of the available indexes. Whatever condition the
    // source already guarantees is left out of the per-contact checks below.
    let source:
      | { kind: "list"; list: Int32Array }
      | { kind: "ranges"; ranges: Array<readonly [number, number]> } = {
      kind: "ranges",
      ranges: [[0, d.contactCount]],
    }
    let implied: "site" | "level" | "department" | undefined
    if (identity !== undefined) {
      source = { kind: "list", list: identity }
    } else {
      const options: Array<{ size: number; make: () => void }> = [{ size: d.contactCount, make: () => {} }]
      if (siteMask !== undefined) {
        options.push({
          size: siteMask.contacts,
          make: () => {
            const ranges: Array<readonly [number, number]> = []
            for (let s = 0; s < siteMask.mask.length; s++) {
              if (siteMask.mask[s] === 0) continue
              const from = d.siteStart[s]!
              const to = d.siteStart[s + 1]!
              const last = ranges[ranges.length - 1]
              if (last !== undefined && last[1] === from) ranges[ranges.length - 1] = [last[0], to]
              else ranges.push([from, to])
            }
            source = { kind: "ranges", ranges }
            implied = "site"
          },
        })
      }
      for (const [codes, lists, name] of [
        [q.levels, d.levelLists, "level"],
        [q.departments, d.departmentLists, "department"],
      ] as const) {
        if (codes === undefined) continue
        const chosen = codes.map((c) => lists[c]!)
        options.push({
          size: chosen.reduce((n, l) => n + l.length, 0),
          make: () => {
            source = { kind: "list", list: mergeSorted(chosen) }
            implied = name
          },
        })
      }
      options.sort((a, b) => a.size - b.size)
      options[0]!.make()
    }

    // Materialize the candidates, then narrow them with one tight pass per remaining filter
    // (monomorphic loops over typed columns are much faster than one closure per contact).
    let list: Int32Array
    if (source.kind === "list") {
      list = source.list.slice()
    } else {
      list = new Int32Array(source.ranges.reduce((sum, [from, to]) => sum + to - from, 0))
      let n = 0
      for (const [from, to] of source.ranges) for (let p = from; p < to; p++) list[n++] = p
    }
    let n = list.length
    const f = d.factory
    if (siteMask !== undefined && implied !== "site") n = passTable(list, n, d.posSite, siteMask.mask)
    if (q.levels !== undefined && implied !== "level") n = passTable(list, n, d.posLevel, codeTable(q.levels))
    if (q.departments !== undefined && implied !== "department") {
      n = passTable(list, n, d.posDepartment, codeTable(q.departments))
    }
    const flagMask =
      (q.verified !== undefined ? Flag.verified : 0) | (q.isEvContact !== undefined ? Flag.emailVerified : 0)
    const flagWant = (q.verified ? Flag.verified : 0) | (q.isEvContact ? Flag.emailVerified : 0)
    if (flagMask !== 0) n = passFlags(list, n, d.posFlags, flagMask, flagWant)
    for (const r of q.required ?? []) n = passFlagsAny(list, n, d.posFlags, requiredMasks[r])
    if (q.jobTitles !== undefined) {
      const ok = Uint8Array.from(titles, (t, i) => (i > 0 && containsAny(t, q.jobTitles!) ? 1 : 0))
      n = passTable(list, n, d.posTitle, ok)
    }
    if (q.firstName !== undefined) {
      const ok = firstNames.map((name) => name.toLowerCase() === q.firstName)
      n = passTest(list, n, (p) => ok[f.firstNameId(d.posToIndex[p]!)]!)
    }
    if (q.lastName !== undefined) {
      const ok = lastNames.map((name) => name.toLowerCase() === q.lastName)
      n = passTest(list, n, (p) => ok[f.lastNameId(d.posToIndex[p]!)]!)
    }
    return n === list.length ? list : list.slice(0, n)
  }

  /** A mask over sites for the company and location filters, with how many contacts it admits. */
  private siteMask(q: PeopleQuery): { mask: Uint8Array; contacts: number } | undefined {
    const d = this.dataset
    const companyOk = this.companyMask(q)
    const siteFilters =
      q.states !== undefined ||
      q.countries !== undefined ||
      q.isInternational !== undefined ||
      q.zipcodes !== undefined
    if (companyOk === undefined && !siteFilters) return undefined
    const zipCenters =
      q.zipcodes !== undefined && q.zipDistance !== undefined
        ? cities.filter((c) => q.zipcodes!.includes(c.zip.toUpperCase()))
        : undefined
    // Start from the inverted index of the narrowest location filter, else every site.
    const candidates: ArrayLike<number> =
      q.states !== undefined
        ? concat(q.states.map((s) => d.sitesByState.get(s)))
        : q.countries !== undefined
          ? concat(q.countries.map((c) => d.sitesByCountry.get(c)))
          : { length: d.sites.length }
    const all = q.states === undefined && q.countries === undefined
    const mask = new Uint8Array(d.sites.length)
    let contacts = 0
    for (let k = 0; k < candidates.length; k++) {
      const s = all ? k : candidates[k]!
      if (companyOk !== undefined && companyOk[d.siteCompany[s]!] === 0) continue
      if (siteFilters) {
        const site = d.sites[s]!
        const city = site.city
        if (q.countries !== undefined && !q.countries.includes(city.country)) continue
        if (q.isInternational !== undefined && q.isInternational !== (city.country !== "US")) continue
        if (q.zipcodes !== undefined) {
          if (zipCenters === undefined) {
            if (!q.zipcodes.includes(site.zip.toUpperCase())) continue
          } else if (
            city.country !== "US" ||
            !zipCenters.some((z) => milesBetween(z.lat, z.lon, city.lat, city.lon) <= q.zipDistance!)
          ) {
            continue
          }
        }
      }
      mask[s] = 1
      contacts += d.siteStart[s + 1]! - d.siteStart[s]!
    }
    return { mask, contacts }
  }

  /** A mask over companies for the company-level filters, or undefined when there are none. */
  private companyMask(q: PeopleQuery): Uint8Array | undefined {
    const d = this.dataset
    const n = d.companyCount
    const tests: Array<(c: Company) => boolean> = []
    if (q.names !== undefined) tests.push((c) => containsAny(c.name, q.names!))
    if (q.naics !== undefined) tests.push((c) => c.naicsCodes.some((code) => q.naics!.includes(code)))
    if (q.sic !== undefined) tests.push((c) => c.sicCodes.some((code) => q.sic!.includes(code)))
    if (q.specialties !== undefined)
      tests.push((c) => c.specialties.some((s) => containsAny(s, q.specialties!)))
    const ranged =
      q.minSize !== undefined ||
      q.maxSize !== undefined ||
      q.minRevenue !== undefined ||
      q.maxRevenue !== undefined
    if (q.domains === undefined && q.tech === undefined && !ranged && tests.length === 0) return undefined

    let mask: Uint8Array
    if (q.domains !== undefined) {
      mask = new Uint8Array(n)
      for (const domain of q.domains) {
        const c = d.domainToCompany.get(domain)
        if (c !== undefined) mask[c] = 1
      }
    } else {
      mask = new Uint8Array(n).fill(1)
    }
    if (q.tech !== undefined) {
      // Companies using any selected product, from the product -> companies index.
      const users = new Uint8Array(n)
      for (const p of selectProducts(d.taxonomy.products, q.tech)) {
        for (const c of d.productCompanies[p.id]!) users[c] = 1
      }
      for (let c = 0; c < n; c++) mask[c]! &= users[c]!
    }
    if (ranged) {
      const minSize = q.minSize ?? 0
      const maxSize = q.maxSize ?? Number.POSITIVE_INFINITY
      const minRevenue = q.minRevenue ?? 0
      const maxRevenue = q.maxRevenue ?? Number.POSITIVE_INFINITY
      const { companySize, companyRevenue } = d
      for (let c = 0; c < n; c++) {
        const size = companySize[c]!
        const revenue = companyRevenue[c]!
        if (size < minSize || size > maxSize || revenue < minRevenue || revenue > maxRevenue) mask[c] = 0
      }
    }
    if (tests.length > 0) {
      for (let c = 0; c < n; c++) if (mask[c] === 1 && !tests.every((t) => t(d.companies[c]!))) mask[c] = 0
    }
    return mask
  }

  /** Sorted positions from the exact identifiers (email, match ids, LinkedIn URL, mobile), AND-ed. */
  private identityCandidates(q: PeopleQuery): Int32Array | undefined {
    const d = this.dataset
    const f = d.factory
    const sets: Array<Set<number>> = []
    if (q.matchIds !== undefined) {
      sets.push(new Set(q.matchIds.flatMap((id) => [d.indexOfMatchId(id)].filter((i) => i !== undefined))))
    }
    if (q.emails !== undefined) {
      const found = new Set<number>()
      for (const email of q.emails)
        for (const i of this.emailMatches(email, q.matchOnJobHistory)) found.add(i)
      sets.push(found)
    }
    if (q.linkedinUrl !== undefined) {
      const token = /-([0-9a-z]{7})\/?$/.exec(q.linkedinUrl.toLowerCase())?.[1]
      const index = token === undefined ? undefined : f.linkedinIds.decode(token)
      const wanted = q.linkedinUrl
        .toLowerCase()
        .replace(/^https?:\/\//, "")
        .replace(/^www\./, "")
        .replace(/\/$/, "")
      const ok =
        index !== undefined &&
        index < d.contactCount &&
        (d.posFlags[d.indexToPos[index]!]! & Flag.linkedin) !== 0 &&
        f.linkedinUrl(index) === wanted
      sets.push(new Set(ok ? [index] : []))
    }
    if (q.mobilePhone !== undefined) {
      const index = f.mobileDigits.decode(q.mobilePhone.slice(-7))
      let ok = index < d.contactCount && (d.posFlags[d.indexToPos[index]!]! & Flag.mobile) !== 0
      if (ok) {
        const country = d.sites[d.posSite[d.indexToPos[index]!]!]!.city.country
        const value = f.mobilePhone(index, country)
        // No country code is needed in North America; a leading 1 is tolerated there.
        ok = value === q.mobilePhone || value.endsWith(q.mobilePhone) || `1${value}` === q.mobilePhone
        ok = ok && q.mobilePhone.length >= 10
      }
      sets.push(new Set(ok ? [index] : []))
    }
    if (sets.length === 0) return undefined
    const [first, ...rest] = sets
    const indexes = [...first!].filter((i) => rest.every((s) => s.has(i)))
    return Int32Array.from(indexes.map((i) => d.indexToPos[i]!)).sort()
  }

  /** Contacts with this work or personal email, or (with job history) a past work email. */
  private emailMatches(email: string, jobHistory: boolean): number[] {
    const d = this.dataset
    const f = d.factory
    const domain = email.slice(email.indexOf("@") + 1)
    const found: number[] = []
    const company = d.domainToCompany.get(domain)
    if (company !== undefined) {
      const c = d.companies[company]!
      const [from, to] = d.companyPositions(company)
      for (let p = from; p < to; p++)
        if (f.workEmail(d.posToIndex[p]!, c) === email) found.push(d.posToIndex[p]!)
      if (jobHistory) {
        for (let k = d.pastJobStart[company]!; k < d.pastJobStart[company + 1]!; k++) {
          const i = d.pastJobIndexes[k]!
          if (f.workEmail(i, c) === email) found.push(i)
        }
      }
    }
    const digits = /(\d{7})@/.exec(email)?.[1]
    if (digits !== undefined) {
      const i = f.personalDigits.decode(digits)
      if (
        i < d.contactCount &&
        d.posFlags[d.indexToPos[i]!]! & Flag.personalEmail &&
        f.personalEmail(i) === email
      ) {
        found.push(i)
      }
    }
    return found
  }

  /** Company indexes of one page of an append query, and the total. */
  append(q: AppendQuery): PageOf<CompanyRow> {
    const d = this.dataset
    const domains = q.domains && new Set(q.domains)
    const test = (c: Company) =>
      (domains === undefined || domains.has(c.domain)) &&
      (q.names === undefined || containsAny(c.name, q.names)) &&
      (q.verified === undefined || q.verified === c.verified)
    const candidates: readonly Company[] =
      domains !== undefined
        ? [...domains].flatMap((dom) => {
            const c = d.domainToCompany.get(dom)
            return c === undefined ? [] : [d.companies[c]!]
          })
        : d.companies
    let matches = candidates.filter(test)
    if (q.paging.sortBy !== undefined) {
      const order = q.paging.sortBy === "company_location" ? d.companiesByLocation : d.companiesByName
      const rank = new Int32Array(d.companyCount)
      order.forEach((c, r) => {
        rank[c] = r
      })
      matches = [...matches].sort((a, b) => rank[a.index]! - rank[b.index]!)
    } else {
      matches = [...matches].sort((a, b) => a.index - b.index)
    }
    // One row per company (its HQ country), or with duplicates on and is_international
    // omitted, one row per country the company has sites in, as the provider warns.
    const rows: CompanyRow[] = matches.flatMap((company) => {
      const countries = this.duplicates
        ? [...new Set(company.sites.map((s) => s.city.country))]
        : [company.sites[0]!.city.country]
      return countries
        .filter((country) => q.isInternational === undefined || q.isInternational === (country !== "US"))
        .slice(0, this.duplicates && q.isInternational === undefined ? undefined : 1)
        .map((country) => ({ company, country }))
    })
    if (q.paging.descending) rows.reverse()
    const offset = (q.paging.page - 1) * q.paging.pageSize
    return { total: rows.length, items: rows.slice(offset, offset + q.paging.pageSize) }
  }

  /** One page of taxonomy products matching a product/vendor lookup. */
  products(q: ProductsQuery): PageOf<Product> {
    let matches = this.dataset.taxonomy.products.filter(
      (p) =>
        (q.products === undefined || containsAny(p.product, q.products)) &&
        (q.vendors === undefined || containsAny(p.vendor, q.vendors)),
    )
    const key =
      q.paging.sortBy === "vendor" ? "vendor" : q.paging.sortBy === "product" ? "product" : undefined
    if (key !== undefined) {
      matches = [...matches].sort(
        (a, b) => a[key].toLowerCase().localeCompare(b[key].toLowerCase()) || a.id - b.id,
      )
    }
    if (q.paging.descending) matches = [...matches].reverse()
    const offset = (q.paging.page - 1) * q.paging.pageSize
    return { total: matches.length, items: matches.slice(offset, offset + q.paging.pageSize) }
  }
}

const codeTable = (codes: readonly number[]): Uint8Array => {
  const table = new Uint8Array(16)
  for (const c of codes) table[c] = 1
  return table
}

/** Keeps, in place, the positions whose column value is marked in table; returns the new length. */
const passTable = (
  list: Int32Array,
  n: number,
  column: Int32Array | Uint8Array | Uint16Array,
  table: Uint8Array,
) => {
  let kept = 0
  for (let i = 0; i < n; i++) {
    const p = list[i]!
    if (table[column[p]!] === 1) list[kept++] = p
  }
  return kept
}

const passFlags = (list: Int32Array, n: number, flags: Uint16Array, mask: number, want: number) => {
  let kept = 0
  for (let i = 0; i < n; i++) {
    const p = list[i]!
    if ((flags[p]! & mask) === want) list[kept++] = p
  }
  return kept
}

const passFlagsAny = (list: Int32Array, n: number, flags: Uint16Array, mask: number) => {
  let kept = 0
  for (let i = 0; i < n; i++) {
    const p = list[i]!
    if ((flags[p]! & mask) !== 0) list[kept++] = p
  }
  return kept
}

const passTest = (list: Int32Array, n: number, test: (position: number) => boolean) => {
  let kept = 0
  for (let i = 0; i < n; i++) {
    const p = list[i]!
    if (test(p)) list[kept++] = p
  }
  return kept
}

/** The concatenation of the lists present (site lists from inverted indexes). */
const concat = (lists: ReadonlyArray<Int32Array | undefined>): Int32Array => {
  const present = lists.filter((l) => l !== undefined)
  const out = new Int32Array(present.reduce((n, l) => n + l.length, 0))
  let offset = 0
  for (const l of present) {
    out.set(l, offset)
    offset += l.length
  }
  return out
}

/** Merges ascending position lists (pairwise two-way merges). */
const mergeSorted = (lists: readonly Int32Array[]): Int32Array => {
  if (lists.length === 0) return new Int32Array(0)
  let merged = lists[0]!
  for (let l = 1; l < lists.length; l++) merged = mergeTwo(merged, lists[l]!)
  return merged
}

const mergeTwo = (a: Int32Array, b: Int32Array): Int32Array => {
  const out = new Int32Array(a.length + b.length)
  let i = 0
  let j = 0
  let o = 0
  while (i < a.length && j < b.length) out[o++] = a[i]! < b[j]! ? a[i++]! : b[j++]!
  while (i < a.length) out[o++] = a[i++]!
  while (j < b.length) out[o++] = b[j++]!
  return out
}
