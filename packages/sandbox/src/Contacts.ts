// Contacts are never stored whole: each is a pure function of (seed, index). The dataset
// keeps only small typed columns of the traits filters look at (see Dataset.ts) and rebuilds
// the full record for the 50 contacts of a page.
import { type Company, searchCumulative } from "./Companies.ts"
import { below, DigitCodec, hash, IdCodec, unit } from "./Random.ts"
import {
  cities,
  firstNames,
  internationalCities,
  jobDepartments,
  jobLevels,
  lastNames,
} from "./Vocabulary.ts"

/** Bits of a contact's flags column. */
export const Flag = {
  sitePhone: 1,
  directPhone: 2,
  mobile: 4,
  personalEmail: 8,
  linkedin: 16,
  jobTitle: 32,
  /** Human verified: always email verified as well. */
  verified: 64,
  emailVerified: 128,
  pastJob: 256,
  address: 512,
  remote: 1024,
  facebook: 2048,
  twitter: 4096,
} as const

export interface ContactTraits {
  readonly company: number
  /** The company site the contact belongs to (the HQ for remote contacts). */
  readonly site: number
  readonly level: number
  readonly department: number
  readonly flags: number
  /** 0 = no job title; otherwise an index into titles. */
  readonly title: number
  readonly firstName: number
  readonly lastName: number
}

const levelWeights = new Float64Array(jobLevels.length)
const departmentWeights = new Float64Array(jobDepartments.length)
{
  let sum = 0
  jobLevels.forEach((l, i) => {
    sum += l.weight
    levelWeights[i] = sum
  })
  sum = 0
  jobDepartments.forEach((d, i) => {
    sum += d.weight
    departmentWeights[i] = sum
  })
}
const levelTotal = levelWeights[levelWeights.length - 1]!
const departmentTotal = departmentWeights[departmentWeights.length - 1]!

/** Title strings: index 0 is "no title"; then one per (level, department, variant). */
export const titles: readonly string[] = [
  "",
  ...jobLevels.flatMap((level) =>
    jobDepartments.flatMap((department) =>
      [0, 1, 2, 3].map((v) => level.titles[v % level.titles.length]!.replace("{D}", department.word)),
    ),
  ),
]
const titleId = (level: number, department: number, variant: number): number =>
  1 + (level * jobDepartments.length + department) * 4 + variant

/** Salts of generation `g`'s job-move draws (part 0..3), far from the field salts below. */
const moveSalt = (g: number, part: number): number => 1_000_000 + g * 4 + part

const localPart = (text: string): string => text.toLowerCase().replace(/[^a-z]/g, "")

// Field salts: one per independent draw, so adding a field never shifts the others.
const S = {
  company: 101,
  site: 102,
  remote: 103,
  level: 104,
  department: 105,
  title: 106,
  hasTitle: 107,
  first: 108,
  last: 109,
  sitePhone: 110,
  direct: 111,
  mobile: 112,
  personal: 113,
  linkedin: 114,
  verified: 115,
  emailVerified: 116,
  pastJob: 117,
  pastCompany: 118,
  facebook: 119,
  twitter: 120,
  created: 121,
  modified: 122,
  remoteCity: 123,
  personalDomain: 124,
} as const

const callingCodes: Readonly<Record<string, string>> = {
  GB: "44",
  DE: "49",
  FR: "33",
  NL: "31",
  IE: "353",
  AU: "61",
  IN: "91",
  SG: "65",
  BR: "55",
}

const createdFrom = Date.UTC(2019, 0, 1)
const modifiedUntil = Date.UTC(2026, 9, 1)

/** Derives contacts of a seed over a fixed list of companies. */
export class ContactFactory {
  readonly matchIds: IdCodec
  readonly linkedinIds: IdCodec
  readonly mobileDigits: DigitCodec
  readonly personalDigits: DigitCodec
  private readonly companyWeights: Float64Array
  private readonly companyWeightTotal: number

  constructor(
    readonly seed: number,
    readonly companies: readonly Company[],
  ) {
    this.matchIds = new IdCodec(seed, 201)
    this.linkedinIds = new IdCodec(seed, 202)
    this.mobileDigits = new DigitCodec(seed, 203)
    this.personalDigits = new DigitCodec(seed, 204)
    // Bigger companies have more contacts, sub-linearly, so no company dominates a filter.
    this.companyWeights = new Float64Array(companies.length)
    let sum = 0
    companies.forEach((c, i) => {
      sum += Math.sqrt(c.size)
      this.companyWeights[i] = sum
    })
    this.companyWeightTotal = sum
  }

  /**
   * The contact's traits at a modification generation: those it was generated with, then each
   * job move of generations 1..`generation` in turn (see `moves`).
   */
  traits(index: number, generation = 0): ContactTraits {
    let traits = this.initialTraits(index)
    for (let g = 1; g <= generation; g++) if (this.moves(index, g)) traits = this.move(index, g, traits)
    return traits
  }

  /** Whether the contact changes job in generation `g`: 40% of those modified then (~2% of all). */
  moves(index: number, g: number): boolean {
    return this.modifiedIn(index, g) && unit(this.seed, index, moveSalt(g, 0)) < 0.4
  }

  /** Whether generation `g` moves the contact's last_modified_date (~5% of contacts). */
  modifiedIn(index: number, g: number): boolean {
    return unit(this.seed, index, 1000 + g) < 0.05
  }

  /**
   * One job move, a third each: to another company (its HQ; level, department and title kept),
   * to another title at the same level (a contact without a title gets one), or to another level
   * (the title follows it). Each one changes what it names, so every move is a change.
   */
  private move(index: number, g: number, from: ContactTraits): ContactTraits {
    const seed = this.seed
    const kind = below(seed, index, moveSalt(g, 1), 3)
    if (kind === 0 && this.companies.length > 1) {
      const other = below(seed, index, moveSalt(g, 2), this.companies.length - 1)
      const company = other >= from.company ? other + 1 : other
      const target = this.companies[company]!
      let flags = from.flags & ~Flag.address
      if (target.hasAddresses) flags |= Flag.address
      return { ...from, company, site: target.sites[0]!.site, flags }
    }
    const levels = jobLevels.length
    const level =
      kind === 2 ? (from.level + 1 + below(seed, index, moveSalt(g, 2), levels - 1)) % levels : from.level
    const variants = jobLevels[level]!.titles.length
    const current = from.title === 0 ? -1 : (from.title - 1) % 4
    const variant =
      kind === 2
        ? below(seed, index, moveSalt(g, 3), variants)
        : current < 0
          ? below(seed, index, moveSalt(g, 3), variants)
          : (current + 1 + below(seed, index, moveSalt(g, 3), variants - 1)) % variants
    const hadTitle = from.title !== 0
    const title = kind === 2 && !hadTitle ? 0 : titleId(level, from.department, variant)
    return { ...from, level, title, flags: title === 0 ? from.flags : from.flags | Flag.jobTitle }
  }

  private initialTraits(index: number): ContactTraits {
    const seed = this.seed
    const company = searchCumulative(
      this.companyWeights,
      unit(seed, index, S.company) * this.companyWeightTotal,
    )
    const sites = this.companies[company]!.sites
    const remote = unit(seed, index, S.remote) < 0.12
    const siteOffset =
      remote || sites.length === 1 || unit(seed, index, S.site) < 0.55
        ? 0
        : 1 + below(seed, index, S.site + 50, sites.length - 1)
    const level = searchCumulative(levelWeights, unit(seed, index, S.level) * levelTotal)
    const department = searchCumulative(departmentWeights, unit(seed, index, S.department) * departmentTotal)
    const hasTitle = unit(seed, index, S.hasTitle) >= 0.07
    const verified = unit(seed, index, S.verified) < 0.4
    const hasAddress = this.companies[company]!.hasAddresses
    let flags = 0
    if (!remote && unit(seed, index, S.sitePhone) < 0.7) flags |= Flag.sitePhone
    if (unit(seed, index, S.direct) < 0.45) flags |= Flag.directPhone
    if (unit(seed, index, S.mobile) < 0.35) flags |= Flag.mobile
    if (unit(seed, index, S.personal) < 0.35) flags |= Flag.personalEmail
    if (unit(seed, index, S.linkedin) < 0.72) flags |= Flag.linkedin
    if (unit(seed, index, S.facebook) < 0.1) flags |= Flag.facebook
    if (unit(seed, index, S.twitter) < 0.15) flags |= Flag.twitter
    if (hasTitle) flags |= Flag.jobTitle
    if (verified) flags |= Flag.verified | Flag.emailVerified
    else if (unit(seed, index, S.emailVerified) < 0.5) flags |= Flag.emailVerified
    if (unit(seed, index, S.pastJob) < 0.15 && this.companies.length > 1) flags |= Flag.pastJob
    if (hasAddress) flags |= Flag.address
    if (remote) flags |= Flag.remote
    return {
      company,
      site: sites[siteOffset]!.site,
      level,
      department,
      flags,
      title: hasTitle
        ? titleId(level, department, below(seed, index, S.title, jobLevels[level]!.titles.length))
        : 0,
      firstName: below(seed, index, S.first, firstNames.length),
      lastName: below(seed, index, S.last, lastNames.length),
    }
  }

  firstNameId(index: number): number {
    return below(this.seed, index, S.first, firstNames.length)
  }

  lastNameId(index: number): number {
    return below(this.seed, index, S.last, lastNames.length)
  }

  firstName(index: number): string {
    return firstNames[below(this.seed, index, S.first, firstNames.length)]!
  }

  lastName(index: number): string {
    return lastNames[below(this.seed, index, S.last, lastNames.length)]!
  }

  workEmail(index: number, company: Company): string {
    return `${localPart(this.firstName(index))}.${localPart(this.lastName(index))}@${company.domain}`
  }

  personalEmail(index: number): string {
    const domain = ["gmail.com", "yahoo.com", "outlook.com", "icloud.com", "proton.me"][
      below(this.seed, index, S.personalDomain, 5)
    ]!
    // The digits encode the index, so an email lookup needs no table.
    return `${localPart(this.firstName(index))}${localPart(this.lastName(index))}${this.personalDigits.encode(index)}@${domain}`
  }

  /** The company of the contact's previous job (only meaningful with Flag.pastJob). */
  pastCompany(index: number, company: number): number {
    const other = below(this.seed, index, S.pastCompany, this.companies.length - 1)
    return other >= company ? other + 1 : other
  }

  pastEmail(index: number, company: number): string {
    return this.workEmail(index, this.companies[this.pastCompany(index, company)]!)
  }

  linkedinUrl(index: number): string {
    const name = `${localPart(this.firstName(index))}-${localPart(this.lastName(index))}`
    return `linkedin.com/in/${name}-${this.linkedinIds.encode(index)}`
  }

  /** Ten digits; outside North America prefixed with the country calling code. */
  mobilePhone(index: number, country: string): string {
    const area = 201 + below(this.seed, index, S.mobile + 50, 780)
    return `${callingCodes[country] ?? ""}${area}${this.mobileDigits.encode(index)}`
  }

  directPhone(index: number, siteArea: string): string {
    return `${siteArea}${String(hash(this.seed, index, S.direct + 50) % 10_000_000).padStart(7, "0")}`
  }

  /** Where a remote contact lives: a city in the HQ's country. */
  remoteCity(index: number, country: string) {
    const pool = country === "US" ? cities : internationalCities.filter((c) => c.country === country)
    return pool[below(this.seed, index, S.remoteCity, pool.length)]!
  }

  /** Epoch milliseconds; a modification generation moves some contacts' last change forward. */
  dates(index: number, generation: number): { created: number; modified: number } {
    const created =
      createdFrom + Math.floor(unit(this.seed, index, S.created) * (Date.UTC(2025, 5, 1) - createdFrom))
    let modified = created + Math.floor(unit(this.seed, index, S.modified) * (modifiedUntil - created))
    for (let g = 1; g <= generation; g++) {
      if (this.modifiedIn(index, g)) modified = modifiedUntil + g * 86_400_000
    }
    return { created, modified }
  }
}
