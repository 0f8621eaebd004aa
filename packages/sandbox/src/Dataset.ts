// The synthetic dataset for a seed. Companies and the taxonomy are objects; contacts are
// typed columns of the traits filters need, stored in a canonical order (company by company,
// site by site, then by contact index) so that company and location filters select ranges,
// plus posting lists per job level and department. Full records are rebuilt per page.
import * as Changes from "./Changes.ts"
import { buildCompanies, type Company, type Site } from "./Companies.ts"
import { ContactFactory, Flag } from "./Contacts.ts"
import {
  type CompanyTechnologies,
  type ContactRecord,
  companyTechnologies,
  contactRecord,
} from "./Records.ts"
import { buildTaxonomy, type Taxonomy } from "./Taxonomy.ts"
import { jobDepartments, jobLevels } from "./Vocabulary.ts"

export interface DatasetOptions {
  /** Seed of every random draw; the same seed gives the same data. Default 42. */
  readonly seed?: number
  /** Number of contacts. Default 100,000. */
  readonly contacts?: number
  /** Number of companies. Default 10,000. */
  readonly companies?: number
  /**
   * Modification generation: each step moves ~5% of contacts' last_modified_date forward, moves
   * ~2% of contacts to another company, title or level, and changes ~10% of companies'
   * technologies (Changes.ts). Default 0.
   */
  readonly generation?: number
}

export const defaultDatasetOptions = {
  seed: 42,
  contacts: 100_000,
  companies: 10_000,
  generation: 0,
} as const

const lower = (text: string) => text.toLowerCase()

/**
 * Contacts with a past job, grouped by the company of that job (a counting sort: index order
 * within a company). `pastCount[c + 1]` is how many have company c; `currentCompany(i)` is contact
 * i's company when it has a past job, undefined otherwise.
 */
const pastJobLists = (
  factory: ContactFactory,
  contacts: number,
  pastCount: Int32Array,
  currentCompany: (index: number) => number | undefined,
) => {
  const companies = pastCount.length - 1
  const start = new Int32Array(companies + 1)
  for (let c = 0; c < companies; c++) start[c + 1] = start[c]! + pastCount[c + 1]!
  const indexes = new Int32Array(start[companies]!)
  const cursor = start.slice(0, companies)
  for (let i = 0; i < contacts; i++) {
    const company = currentCompany(i)
    if (company !== undefined) indexes[cursor[factory.pastCompany(i, company)]!++] = i
  }
  return { start, indexes }
}

export class Dataset {
  readonly seed: number
  readonly contactCount: number
  readonly companyCount: number
  readonly generation: number
  readonly taxonomy: Taxonomy
  readonly companies: readonly Company[]
  /** Each company's products (taxonomy ids, ascending) at this generation. */
  readonly companyProducts: ReadonlyArray<ReadonlyArray<number>>
  readonly sites: readonly Site[]
  readonly factory: ContactFactory
  /** Company of each site. */
  readonly siteCompany: Int32Array
  /** First position of each site's contacts (sites.length + 1 entries). */
  readonly siteStart: Int32Array
  readonly posToIndex: Int32Array
  readonly indexToPos: Int32Array
  readonly posSite: Int32Array
  readonly posLevel: Uint8Array
  readonly posDepartment: Uint8Array
  readonly posFlags: Uint16Array
  readonly posTitle: Uint16Array
  /** Positions (ascending) per job level and per department. */
  readonly levelLists: readonly Int32Array[]
  readonly departmentLists: readonly Int32Array[]
  readonly domainToCompany: ReadonlyMap<string, number>
  /** Contact indexes whose previous job was at each company (CSR over companies). */
  readonly pastJobStart: Int32Array
  readonly pastJobIndexes: Int32Array
  /** Company columns the range filters scan. */
  readonly companySize: Int32Array
  readonly companyRevenue: Int32Array
  /** Companies (ascending) using each product: the tech_* filters' index. */
  readonly productCompanies: readonly Int32Array[]
  /** Sites (ascending) per state/region code and per country code. */
  readonly sitesByState: ReadonlyMap<string, Int32Array>
  readonly sitesByCountry: ReadonlyMap<string, Int32Array>
  /** Company indexes in ascending company_name and company_location order. */
  readonly companiesByName: Int32Array
  readonly companiesByLocation: Int32Array

  private constructor(
    options: Required<DatasetOptions>,
    shared?: { taxonomy: Taxonomy; companies: readonly Company[]; factory: ContactFactory },
  ) {
    this.seed = options.seed
    this.contactCount = options.contacts
    this.companyCount = options.companies
    this.generation = options.generation
    this.taxonomy = shared?.taxonomy ?? buildTaxonomy(options.seed)
    this.companies = shared?.companies ?? buildCompanies(options.seed, options.companies, this.taxonomy)
    this.factory = shared?.factory ?? new ContactFactory(options.seed, this.companies)
    this.sites = this.companies.flatMap((c) => c.sites)
    this.siteCompany = Int32Array.from(this.sites, (s) => s.company)
    this.domainToCompany = new Map(this.companies.map((c) => [c.domain, c.index]))
    this.companySize = Int32Array.from(this.companies, (c) => c.size)
    this.companyRevenue = Int32Array.from(this.companies, (c) => c.revenue)
    const subcategories = Changes.subcategoryKeys(this.taxonomy)
    this.companyProducts = this.companies.map((c) =>
      Changes.productsAt(this.seed, c, subcategories, this.generation),
    )
    const users: number[][] = this.taxonomy.products.map(() => [])
    for (const c of this.companies) for (const p of this.companyProducts[c.index]!) users[p]!.push(c.index)
    this.productCompanies = users.map((list) => Int32Array.from(list))
    this.sitesByState = groupSites(this.sites, (s) => s.city.state)
    this.sitesByCountry = groupSites(this.sites, (s) => s.city.country)

    const m = options.contacts
    const siteOfIndex = new Int32Array(m)
    const level = new Uint8Array(m)
    const department = new Uint8Array(m)
    const flags = new Uint16Array(m)
    const title = new Uint16Array(m)
    const siteCount = new Int32Array(this.sites.length + 1)
    const pastCount = new Int32Array(this.companies.length + 1)
    for (let i = 0; i < m; i++) {
      const t = this.factory.traits(i, this.generation)
      siteOfIndex[i] = t.site
      level[i] = t.level
      department[i] = t.department
      flags[i] = t.flags
      title[i] = t.title
      siteCount[t.site + 1]!++
      if (t.flags & Flag.pastJob) pastCount[this.factory.pastCompany(i, t.company) + 1]!++
    }
    // Counting sort by site: stable, so contacts of a site stay in index order.
    this.siteStart = new Int32Array(this.sites.length + 1)
    for (let s = 0; s < this.sites.length; s++) this.siteStart[s + 1] = this.siteStart[s]! + siteCount[s + 1]!
    const cursor = this.siteStart.slice(0, this.sites.length)
    this.posToIndex = new Int32Array(m)
    this.indexToPos = new Int32Array(m)
    for (let i = 0; i < m; i++) {
      const p = cursor[siteOfIndex[i]!]!++
      this.posToIndex[p] = i
      this.indexToPos[i] = p
    }
    this.posSite = new Int32Array(m)
    this.posLevel = new Uint8Array(m)
    this.posDepartment = new Uint8Array(m)
    this.posFlags = new Uint16Array(m)
    this.posTitle = new Uint16Array(m)
    for (let p = 0; p < m; p++) {
      const i = this.posToIndex[p]!
      this.posSite[p] = siteOfIndex[i]!
      this.posLevel[p] = level[i]!
      this.posDepartment[p] = department[i]!
      this.posFlags[p] = flags[i]!
      this.posTitle[p] = title[i]!
    }
    this.levelLists = postingLists(this.posLevel, jobLevels.length)
    this.departmentLists = postingLists(this.posDepartment, jobDepartments.length)

    const pastJobs = pastJobLists(this.factory, m, pastCount, (i) =>
      flags[i]! & Flag.pastJob ? this.siteCompany[siteOfIndex[i]!]! : undefined,
    )
    this.pastJobStart = pastJobs.start
    this.pastJobIndexes = pastJobs.indexes

    const order = (key: (c: Company) => string) => {
      const keys = this.companies.map((c) => lower(key(c)))
      return Int32Array.from(
        this.companies
          .map((c) => c.index)
          .sort((a, b) => (keys[a]! < keys[b]! ? -1 : keys[a]! > keys[b]! ? 1 : a - b)),
      )
    }
    this.companiesByName = order((c) => c.name)
    this.companiesByLocation = order((c) => companyLocationKey(c))
  }

  static build(options: DatasetOptions = {}): Dataset {
    const pick = (given: number | undefined, fallback: number, name: string) => {
      const value = given ?? fallback
      if (!Number.isSafeInteger(value) || value < 0)
        throw new RangeError(`${name} must be a non-negative integer`)
      return value
    }
    const companies = pick(options.companies, defaultDatasetOptions.companies, "companies")
    if (companies < 1) throw new RangeError("a dataset needs at least one company")
    return new Dataset({
      seed: pick(options.seed, defaultDatasetOptions.seed, "seed") >>> 0,
      contacts: pick(options.contacts, defaultDatasetOptions.contacts, "contacts"),
      companies,
      generation: pick(options.generation, defaultDatasetOptions.generation, "generation"),
    })
  }

  /** The same dataset with another contact count or modification generation. Existing
   * contacts keep their match ids and data (a contact is a function of its index), so
   * growing the count simulates new contacts appearing at the provider. */
  resized(changes: { contacts?: number; generation?: number }): Dataset {
    return new Dataset(
      {
        seed: this.seed,
        companies: this.companyCount,
        contacts: changes.contacts ?? this.contactCount,
        generation: changes.generation ?? this.generation,
      },
      { taxonomy: this.taxonomy, companies: this.companies, factory: this.factory },
    )
  }

  /** The full (unmasked) record of contact `index` (0 <= index < contactCount). */
  contact(index: number): ContactRecord {
    if (!Number.isInteger(index) || index < 0 || index >= this.contactCount) {
      throw new RangeError(`no contact ${index} in a dataset of ${this.contactCount}`)
    }
    return contactRecord(this, index)
  }

  /** The contact index a match id stands for, if it is one of this dataset's. */
  indexOfMatchId(matchId: string): number | undefined {
    const token = matchId.startsWith("m-") ? matchId.slice(2) : undefined
    if (token === undefined) return undefined
    const index = this.factory.matchIds.decode(token)
    return index !== undefined && index < this.contactCount ? index : undefined
  }

  matchId(index: number): string {
    return `m-${this.factory.matchIds.encode(index)}`
  }

  contactByMatchId(matchId: string): ContactRecord | undefined {
    const index = this.indexOfMatchId(matchId)
    return index === undefined ? undefined : this.contact(index)
  }

  companyOf(index: number): Company {
    return this.companies[this.siteCompany[this.posSite[this.indexToPos[index]!]!]!]!
  }

  /** A company with every product it uses, as the append endpoint returns it unfiltered. */
  company(companyIndex: number): CompanyTechnologies {
    const company = this.companies[companyIndex]
    if (company === undefined) throw new RangeError(`no company ${companyIndex}`)
    return companyTechnologies(company, this.companyProducts[companyIndex]!, this.taxonomy, undefined)
  }

  /** Products adopted and dropped between generation `from` and this one (or `to`), per company. */
  technologyChanges(from: number, to: number = this.generation): ReadonlyArray<Changes.TechnologyChange> {
    return Changes.technologyChanges(this, from, to)
  }

  /**
   * The displacements (a product dropped, another of its subcategory adopted, at one company) that
   * observing every company at each of `generations` in turn shows.
   */
  displacements(generations: ReadonlyArray<number>): ReadonlyArray<Changes.Displacement> {
    return Changes.displacements(this, generations)
  }

  /** Contacts whose company, title, level or department differ between `from` and this generation (or `to`). */
  jobChanges(from: number, to: number = this.generation): ReadonlyArray<Changes.JobChange> {
    return Changes.jobChanges(this, from, to)
  }

  /** The company with this provider id (company_id in records), if any. */
  companyById(id: number): Company | undefined {
    const company = this.companies[id - (this.companies[0]?.id ?? 0)]
    return company?.id === id ? company : undefined
  }

  /** The append record (all products in use) of the company with this id. */
  companyTechnologiesById(id: number): CompanyTechnologies | undefined {
    const company = this.companyById(id)
    return company === undefined ? undefined : this.company(company.index)
  }

  /** The work email of the contact's previous job, which `email` matches with job history; null if none. */
  pastJobEmail(index: number): string | null {
    const position = this.indexToPos[index]!
    if ((this.posFlags[position]! & Flag.pastJob) === 0) return null
    return this.factory.pastEmail(index, this.siteCompany[this.posSite[position]!]!)
  }

  /** First position of a company's contacts and one past its last. */
  companyPositions(companyIndex: number): readonly [number, number] {
    const sites = this.companies[companyIndex]!.sites
    return [this.siteStart[sites[0]!.site]!, this.siteStart[sites[sites.length - 1]!.site + 1]!]
  }
}

/** The company_location sort key: HQ country, then state, then city. */
export const companyLocationKey = (c: Company): string => {
  const hq = c.sites[0]!.city
  return `${hq.country}, ${hq.state}, ${hq.city}`
}

const groupSites = (sites: readonly Site[], key: (s: Site) => string): Map<string, Int32Array> => {
  const groups = new Map<string, number[]>()
  for (const s of sites) {
    const list = groups.get(key(s)) ?? []
    list.push(s.site)
    groups.set(key(s), list)
  }
  return new Map([...groups].map(([k, list]) => [k, Int32Array.from(list)]))
}

const postingLists = (column: Uint8Array, codes: number): Int32Array[] => {
  const counts = new Int32Array(codes)
  for (let p = 0; p < column.length; p++) counts[column[p]!]!++
  const lists = Array.from(counts, (n) => new Int32Array(n))
  const fill = new Int32Array(codes)
  for (let p = 0; p < column.length; p++) {
    const code = column[p]!
    lists[code]![fill[code]!++] = p
  }
  return lists
}
