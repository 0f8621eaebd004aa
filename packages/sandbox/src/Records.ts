// The JSON shapes the provider returns (upstream-api-notes.md section 11), built from the
// dataset, and the masking applied by the free preview.
import { type Company, type Site, siteLocation } from "./Companies.ts"
import { Flag, titles } from "./Contacts.ts"
import type { Dataset } from "./Dataset.ts"
import type { Product, Taxonomy } from "./Taxonomy.ts"
import { jobDepartments, jobLevels } from "./Vocabulary.ts"

export interface Address {
  readonly location_id: number
  readonly is_hq: boolean
  readonly type: "hq" | "branch"
  readonly street_1: string
  readonly street_2: string | null
  readonly city: string
  readonly state: string
  readonly zip: string
  readonly country: string
}

export interface CompanyBlock {
  readonly id: number
  readonly name: string
  readonly domains: readonly string[]
  readonly linkedin_url: string
  readonly naics_codes: readonly string[]
  readonly sic_codes: readonly string[]
  readonly revenue: number
  readonly actual_revenue: number
  readonly predicted_revenue: number
  readonly revenue_range: string
  readonly size: number
  readonly size_range: string
}

export type PhoneType = "work_hq" | "work_branch" | "work" | "mobile"
export type SocialType = "linkedin" | "facebook" | "twitter"

export interface ContactRecord {
  readonly _score: null
  readonly match_id: string
  readonly doc_id: string
  readonly display_name: string
  readonly first_name: string
  readonly last_name: string
  readonly email: string
  readonly personal_email: string | null
  readonly job_title: string | null
  readonly job_level: string
  readonly job_department: string
  readonly phone_numbers: ReadonlyArray<{ readonly type: PhoneType; readonly value: string }>
  readonly social_profiles: ReadonlyArray<{ readonly type: SocialType; readonly url: string }>
  readonly location: string
  readonly location_type: "hq" | "branch" | "remote"
  readonly position_location_id: number | null
  readonly addresses: readonly Address[]
  readonly company: CompanyBlock
  readonly company_id: number
  readonly company_name: string
  readonly company_domains: readonly string[]
  readonly company_revenue: number
  readonly company_actual_revenue: number
  readonly company_predicted_revenue: number
  readonly company_revenue_range: string
  readonly company_size: number
  readonly company_size_range: string
  readonly company_score: null
  readonly company_status: null
  readonly cds_batch_id: null
  readonly dates: { readonly created_date: string; readonly last_modified_date: string }
}

export interface Technology {
  readonly category: string
  readonly subcategory: string
  readonly product: string
  readonly vendor: string
  readonly in_use: boolean
}

export interface CompanyTechnologies {
  readonly company_id: number
  readonly company_name: string
  readonly company_domains: readonly string[]
  readonly is_international: boolean
  readonly verified: boolean
  readonly company: CompanyBlock
  readonly technologies: readonly Technology[]
}

export const addressOf = (site: Site): Address => ({
  location_id: site.locationId,
  is_hq: site.isHq,
  type: site.isHq ? "hq" : "branch",
  street_1: site.street1,
  street_2: site.street2,
  city: site.city.city,
  state: site.city.state,
  zip: site.zip,
  country: site.city.country,
})

export const companyBlock = (c: Company): CompanyBlock => ({
  id: c.id,
  name: c.name,
  domains: [c.domain],
  linkedin_url: c.linkedinUrl,
  naics_codes: c.naicsCodes,
  sic_codes: c.sicCodes,
  revenue: c.revenue,
  actual_revenue: c.revenue,
  predicted_revenue: c.predictedRevenue,
  revenue_range: c.revenueRange,
  size: c.size,
  size_range: c.sizeRange,
})

export const contactRecord = (dataset: Dataset, index: number): ContactRecord => {
  const f = dataset.factory
  const position = dataset.indexToPos[index]!
  const flags = dataset.posFlags[position]!
  const site = dataset.sites[dataset.posSite[position]!]!
  const company = dataset.companies[site.company]!
  const remote = (flags & Flag.remote) !== 0
  const first = f.firstName(index)
  const last = f.lastName(index)
  const phones: Array<{ type: PhoneType; value: string }> = []
  if (flags & Flag.directPhone) phones.push({ type: "work", value: f.directPhone(index, site.city.area) })
  if (flags & Flag.mobile) phones.push({ type: "mobile", value: f.mobilePhone(index, site.city.country) })
  if (flags & Flag.sitePhone) phones.push({ type: site.isHq ? "work_hq" : "work_branch", value: site.phone })
  const socials: Array<{ type: SocialType; url: string }> = []
  if (flags & Flag.linkedin) socials.push({ type: "linkedin", url: f.linkedinUrl(index) })
  if (flags & Flag.facebook)
    socials.push({ type: "facebook", url: `facebook.com/${first.toLowerCase()}.${index}` })
  if (flags & Flag.twitter)
    socials.push({ type: "twitter", url: `twitter.com/${first.toLowerCase()}${index}` })
  const dates = f.dates(index, dataset.generation)
  const block = companyBlock(company)
  const home = remote ? f.remoteCity(index, site.city.country) : undefined
  const hasAddresses = (flags & Flag.address) !== 0
  const level = dataset.posLevel[position]!
  const department = dataset.posDepartment[position]!
  return {
    _score: null,
    match_id: dataset.matchId(index),
    doc_id: `d-${dataset.seed}-${index}`,
    display_name: `${first} ${last}`,
    first_name: first,
    last_name: last,
    email: f.workEmail(index, company),
    personal_email: flags & Flag.personalEmail ? f.personalEmail(index) : null,
    job_title: flags & Flag.jobTitle ? titles[dataset.posTitle[position]!]! : null,
    job_level: jobLevels[level]!.code,
    job_department: jobDepartments[department]!.code,
    phone_numbers: phones,
    social_profiles: socials,
    location: home ? `${home.city}, ${home.state}, ${home.country}` : siteLocation(site),
    // HQ is the provider's fallback when it knows nothing better (no address on file).
    location_type: remote ? "remote" : site.isHq || !hasAddresses ? "hq" : "branch",
    position_location_id: remote || !hasAddresses ? null : site.locationId,
    addresses: hasAddresses ? company.sites.map(addressOf) : [],
    company: block,
    company_id: block.id,
    company_name: block.name,
    company_domains: block.domains,
    company_revenue: block.revenue,
    company_actual_revenue: block.actual_revenue,
    company_predicted_revenue: block.predicted_revenue,
    company_revenue_range: block.revenue_range,
    company_size: block.size,
    company_size_range: block.size_range,
    company_score: null,
    company_status: null,
    cds_batch_id: null,
    dates: { created_date: String(dates.created), last_modified_date: String(dates.modified) },
  }
}

const maskEmail = (email: string | null): string | null => {
  if (email === null) return null
  const [local = "", domain = ""] = email.split("@")
  const dot = domain.lastIndexOf(".")
  return `${local.slice(0, 1)}***@${domain.slice(0, 1)}***${dot >= 0 ? domain.slice(dot) : ""}`
}

/** The preview form: same identity, name, title, company and location; contact details masked. */
export const maskContact = (record: ContactRecord): ContactRecord => ({
  ...record,
  email: maskEmail(record.email) ?? "",
  personal_email: maskEmail(record.personal_email),
  phone_numbers: record.phone_numbers.map((p) => ({ type: p.type, value: `***-***-${p.value.slice(-4)}` })),
})

const technology = (p: Product, inUse: boolean): Technology => ({
  category: p.category,
  subcategory: p.subcategory,
  product: p.product,
  vendor: p.vendor,
  in_use: inUse,
})

/**
 * A company's technographics (`products`: what it uses at the dataset's generation). Without a
 * selection, the products it uses; with one (the
 * products a tech_* filter named), each selected product and whether the company uses it.
 */
export const companyTechnologies = (
  c: Company,
  products: ReadonlyArray<number>,
  taxonomy: Taxonomy,
  selection: readonly Product[] | undefined,
  country: string = c.sites[0]!.city.country,
): CompanyTechnologies => {
  const used = new Set(products)
  const technologies =
    selection === undefined
      ? products.map((id) => technology(taxonomy.products[id]!, true))
      : selection.map((p) => technology(p, used.has(p.id)))
  const block = companyBlock(c)
  return {
    company_id: c.id,
    company_name: c.name,
    company_domains: block.domains,
    is_international: country !== "US",
    verified: c.verified,
    company: block,
    technologies,
  }
}
