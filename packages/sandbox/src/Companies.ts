// Synthetic companies and their sites. Companies are few (thousands to a hundred thousand),
// so they are generated once as objects; contacts, which are many, are derived on demand.
import { below, hash, unit } from "./Random.ts"
import type { Taxonomy } from "./Taxonomy.ts"
import {
  type City,
  cities,
  companyNouns,
  companySuffixes,
  companyWords,
  industries,
  internationalCities,
  revenueRanges,
  sizeRanges,
  streets,
} from "./Vocabulary.ts"

export interface Site {
  /** Global site number: sites are numbered company by company, HQ first. */
  readonly site: number
  readonly company: number
  /** The provider's join key between addresses[].location_id and position_location_id. */
  readonly locationId: number
  readonly isHq: boolean
  readonly city: City
  readonly zip: string
  readonly street1: string
  readonly street2: string | null
  /** The site's switchboard line, digits only. */
  readonly phone: string
}

export interface Company {
  readonly index: number
  readonly id: number
  readonly name: string
  readonly domain: string
  readonly linkedinUrl: string
  readonly naicsCodes: readonly string[]
  readonly sicCodes: readonly string[]
  readonly specialties: readonly string[]
  readonly size: number
  readonly sizeRange: string
  /** Millions of dollars, like the revenue filters. */
  readonly revenue: number
  readonly predictedRevenue: number
  readonly revenueRange: string
  /** Human verified (true) or machine verified (false). */
  readonly verified: boolean
  /** Some companies have no street address on file, so required_fields=address filters. */
  readonly hasAddresses: boolean
  readonly sites: readonly Site[]
  /** Product ids (into the taxonomy) in use, ascending. */
  readonly products: readonly number[]
}

const companyIdBase = 4_400_000
const maxSize = 250_000

const pickWeighted = <T extends { readonly weight: number }>(items: readonly T[], u: number): T => {
  const total = items.reduce((sum, item) => sum + item.weight, 0)
  let target = u * total
  for (const item of items) {
    target -= item.weight
    if (target < 0) return item
  }
  return items[items.length - 1]!
}

const label = (
  ranges: ReadonlyArray<{ readonly max: number; readonly label: string }>,
  value: number,
): string => (ranges.find((r) => value <= r.max) ?? ranges[ranges.length - 1]!).label

/** The first slot whose cumulative weight exceeds target (binary search). */
export const searchCumulative = (cumulative: Float64Array, target: number): number => {
  let lo = 0
  let hi = cumulative.length - 1
  while (lo < hi) {
    const mid = (lo + hi) >>> 1
    if (cumulative[mid]! > target) hi = mid
    else lo = mid + 1
  }
  return lo
}

const slug = (text: string): string => text.toLowerCase().replace(/[^a-z0-9]+/g, "")

/** A company's name and domain (kept unique: a domain already used gets the index in it). */
const naming = (seed: number, index: number, usedDomains: Set<string>) => {
  const h = (salt: number) => hash(seed, index, salt)
  const word1 = companyWords[h(1) % companyWords.length]!
  const word2 = companyWords[h(2) % companyWords.length]!
  const noun = companyNouns[h(3) % companyNouns.length]!
  const suffix = companySuffixes[h(4) % companySuffixes.length]!
  const stem = word1 === word2 ? `${word1} ${noun}` : `${word1}${word2.toLowerCase()} ${noun}`
  let domain = `${slug(stem)}.com`
  if (usedDomains.has(domain)) domain = `${slug(stem)}${index}.com`
  usedDomains.add(domain)
  return { stem, domain, name: `${stem} ${suffix}` }
}

/** Size, revenue and industry codes. Sizes are log-distributed and skewed small: many small firms, few giants. */
const figures = (seed: number, index: number) => {
  const h = (salt: number) => hash(seed, index, salt)
  const u = (salt: number) => unit(seed, index, salt)
  const size = Math.max(1, Math.floor(Math.exp(u(5) ** 1.6 * Math.log(maxSize))))
  const perEmployee = 0.05 + u(6) * 0.35
  const revenue = Math.max(1, Math.round(size * perEmployee))
  const predictedRevenue = Math.max(1, Math.round(revenue * (0.85 + u(7) * 0.3)))
  const industry = industries[h(8) % industries.length]!
  const secondIndustry = u(9) < 0.2 ? industries[h(10) % industries.length]! : undefined
  const naicsCodes = [industry.naics]
  const sicCodes = [industry.sic]
  if (secondIndustry && secondIndustry.naics !== industry.naics) {
    naicsCodes.push(secondIndustry.naics)
    sicCodes.push(secondIndustry.sic)
  }
  const specialties = [...new Set([...industry.specialties, ...(secondIndustry?.specialties ?? [])])]
  return { size, revenue, predictedRevenue, naicsCodes, sicCodes, specialties }
}

/** The HQ and its branches, numbered from `firstSite`. */
const sitesOf = (seed: number, index: number, id: number, size: number, firstSite: number): Site[] => {
  const international = unit(seed, index, 11) < 0.22
  const hqCity = pickWeighted(international ? internationalCities : cities, unit(seed, index, 12))
  const branchCount = size < 50 ? 0 : size < 1000 ? below(seed, index, 13, 3) : 1 + below(seed, index, 13, 4)
  const sites: Site[] = []
  for (let k = 0; k <= branchCount; k++) {
    const sh = (salt: number) => hash(seed, index * 8 + k, salt)
    // Branches mostly stay in the HQ's country; some US firms have an office abroad, so
    // one organization can appear under several countries, as the provider warns.
    const abroad = k > 0 && unit(seed, index * 8 + k, 20) < 0.15
    const pool = international !== abroad ? internationalCities : cities
    const city = k === 0 ? hqCity : pickWeighted(pool, unit(seed, index * 8 + k, 21))
    sites.push({
      site: firstSite + k,
      company: index,
      locationId: id * 10 + k,
      isHq: k === 0,
      city,
      zip: city.zip,
      street1: `${1 + (sh(22) % 9800)} ${streets[sh(23) % streets.length]}`,
      street2: sh(24) % 3 === 0 ? `Suite ${100 + (sh(25) % 900)}` : null,
      phone: `${city.area}${String(sh(26) % 10_000_000).padStart(7, "0")}`,
    })
  }
  return sites
}

/** The products' cumulative popularity, for drawing by popularity (searchCumulative). */
const popularity = (taxonomy: Taxonomy) => {
  const cumulative = new Float64Array(taxonomy.products.length)
  let total = 0
  taxonomy.products.forEach((p, i) => {
    total += p.popularity
    cumulative[i] = total
  })
  return { cumulative, total }
}

/** Technologies: a count growing with size, drawn by popularity without replacement. */
const productsOf = (
  seed: number,
  index: number,
  size: number,
  drawn: ReturnType<typeof popularity>,
): number[] => {
  const want = Math.min(40, 3 + Math.floor(Math.log2(size + 1) * 1.5 + unit(seed, index, 30) * 4))
  const chosen = new Set<number>()
  for (let attempt = 0; chosen.size < want && attempt < want * 6; attempt++) {
    chosen.add(searchCumulative(drawn.cumulative, unit(seed, index * 64 + attempt, 31) * drawn.total))
  }
  return [...chosen].sort((a, b) => a - b)
}

/** Every company for a seed. Generated in order, so names and domains can be kept unique. */
export const buildCompanies = (seed: number, count: number, taxonomy: Taxonomy): Company[] => {
  const companies: Company[] = []
  const usedDomains = new Set<string>()
  const drawn = popularity(taxonomy)
  let siteNumber = 0
  for (let index = 0; index < count; index++) {
    const { stem, domain, name } = naming(seed, index, usedDomains)
    const { size, revenue, predictedRevenue, naicsCodes, sicCodes, specialties } = figures(seed, index)
    const id = companyIdBase + index
    const sites = sitesOf(seed, index, id, size, siteNumber)
    siteNumber += sites.length
    companies.push({
      index,
      id,
      name,
      domain,
      linkedinUrl: `linkedin.com/company/${slug(stem)}`,
      naicsCodes,
      sicCodes,
      specialties,
      size,
      sizeRange: label(sizeRanges, size),
      revenue,
      predictedRevenue,
      revenueRange: label(revenueRanges, revenue),
      verified: unit(seed, index, 40) < 0.55,
      hasAddresses: unit(seed, index, 41) >= 0.06,
      sites,
      products: productsOf(seed, index, size, drawn),
    })
  }
  return companies
}

/** "City, ST, CC": the form of a contact's location and of the company_location sort key. */
export const siteLocation = (site: Site): string =>
  `${site.city.city}, ${site.city.state}, ${site.city.country}`
