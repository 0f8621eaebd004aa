// Query-string parsing and validation for every endpoint of interface-spec.md section 4.
// Strict on purpose: a misspelt, repeated or malformed parameter is a 400 naming it, so a
// connector bug shows up here instead of silently widening a query (and its bill).
import { jobDepartments, jobLevels, type RequiredField, requiredFieldCodes } from "./Vocabulary.ts"

/** A request the sandbox refuses with 400; the message names the parameter. */
export class BadRequest extends Error {}

export type SortBy = "company_name" | "company_location" | "product" | "vendor"

export interface Paging {
  readonly page: number
  readonly pageSize: number
  readonly sortBy: SortBy | undefined
  readonly descending: boolean
}

/** Lower-cased tilde lists; a product must satisfy every list given (each list is an OR). */
export interface TechFilter {
  readonly categories?: readonly string[]
  readonly subcategories?: readonly string[]
  readonly products?: readonly string[]
  readonly vendors?: readonly string[]
}

export interface CompanyFilter {
  readonly domains?: readonly string[]
  readonly names?: readonly string[]
  readonly isInternational?: boolean
  readonly verified?: boolean
}

export interface PeopleQuery extends CompanyFilter {
  readonly states?: readonly string[]
  readonly zipcodes?: readonly string[]
  readonly zipDistance?: number
  readonly minRevenue?: number
  readonly maxRevenue?: number
  readonly minSize?: number
  readonly maxSize?: number
  readonly naics?: readonly string[]
  readonly sic?: readonly string[]
  readonly countries?: readonly string[]
  readonly specialties?: readonly string[]
  readonly tech?: TechFilter
  readonly emails?: readonly string[]
  readonly matchOnJobHistory: boolean
  readonly firstName?: string
  readonly lastName?: string
  readonly jobTitles?: readonly string[]
  readonly levels?: readonly number[]
  readonly departments?: readonly number[]
  readonly matchIds?: readonly string[]
  readonly required?: readonly RequiredField[]
  readonly isEvContact?: boolean
  readonly linkedinUrl?: string
  readonly mobilePhone?: string
  readonly paging: Paging
  /** The filters in canonical form, without paging: equal keys select equal result sets. */
  readonly cacheKey: string
}

export interface AppendQuery extends CompanyFilter {
  readonly tech?: TechFilter
  readonly paging: Paging
}

export interface ProductsQuery {
  readonly products?: readonly string[]
  readonly vendors?: readonly string[]
  readonly paging: Paging
}

/** Results beyond this many records deep cannot be paged to (interface-spec 4.1 rule 3). */
export const maxDepth = 10_000
export const maxPageSize = 50
export const defaultPageSize = 50

const techParams = ["tech_category", "tech_subcategory", "tech_product", "tech_vendor"] as const
const pagingParams = ["page", "page_size", "sort_by", "sort_direction"] as const

export const peopleParams = [
  "company_domain",
  "company_industries",
  "company_location_states",
  "company_location_zipcodes",
  "company_location_zipcodes_distance",
  "company_max_revenue",
  "company_min_revenue",
  "company_max_size",
  "company_min_size",
  "company_naics_codes",
  "company_sic_codes",
  "company_name",
  "is_international",
  "location_country_codes",
  "specialties",
  "verified",
  ...techParams,
  "email",
  "matchOnJobHistory",
  "first_name",
  "last_name",
  "job_title",
  "job_levels",
  "job_departments",
  "match_ids",
  "required_fields",
  "is_ev_contact",
  "linkedin_url",
  "mobile_phone",
  ...pagingParams,
] as const

export const appendParams = [
  "company_domain",
  "company_name",
  "is_international",
  ...techParams,
  "verified",
  ...pagingParams,
] as const

export const productsParams = ["product", "vendor", ...pagingParams] as const

/** True when the request uses any tech_* filter (which needs the tech add-on). */
export const usesTechFilter = (params: URLSearchParams): boolean =>
  techParams.some((p) => (params.get(p) ?? "") !== "")

/** Reads a query string against the endpoint's parameter list. */
class Reader {
  constructor(
    private readonly params: URLSearchParams,
    allowed: readonly string[],
  ) {
    const seen = new Set<string>()
    for (const name of params.keys()) {
      if (!allowed.includes(name)) throw new BadRequest(`unknown query parameter '${name}'`)
      if (seen.has(name)) throw new BadRequest(`query parameter '${name}' is given more than once`)
      seen.add(name)
    }
  }

  /** The trimmed value, or undefined when absent or empty (an empty value filters nothing). */
  string(name: string): string | undefined {
    const value = this.params.get(name)?.trim()
    return value === undefined || value === "" ? undefined : value
  }

  list(name: string, separator: "," | "~"): string[] | undefined {
    const value = this.string(name)
    if (value === undefined) return undefined
    const items = value
      .split(separator)
      .map((s) => s.trim())
      .filter((s) => s !== "")
    return items.length === 0 ? undefined : items
  }

  lowerList(name: string, separator: "," | "~"): string[] | undefined {
    return this.list(name, separator)?.map((s) => s.toLowerCase())
  }

  integer(name: string, min = Number.MIN_SAFE_INTEGER): number | undefined {
    const value = this.string(name)
    if (value === undefined) return undefined
    if (!/^[+-]?\d+$/.test(value)) throw new BadRequest(`'${name}' must be an integer, got '${value}'`)
    const n = Number(value)
    if (!Number.isSafeInteger(n)) throw new BadRequest(`'${name}' is out of range`)
    if (n < min) throw new BadRequest(`'${name}' must be at least ${min}, got ${n}`)
    return n
  }

  boolean(name: string): boolean | undefined {
    const value = this.string(name)?.toLowerCase()
    if (value === undefined) return undefined
    if (value === "true") return true
    if (value === "false") return false
    throw new BadRequest(`'${name}' must be true or false, got '${this.string(name)}'`)
  }

  codes(name: string, known: readonly string[]): number[] | undefined {
    const items = this.lowerList(name, ",")
    if (items === undefined) return undefined
    return [
      ...new Set(
        items.map((item) => {
          const index = known.indexOf(item)
          if (index < 0)
            throw new BadRequest(`'${name}' has an unknown code '${item}' (known: ${known.join(", ")})`)
          return index
        }),
      ),
    ]
  }

  paging(sortValues: readonly SortBy[]): Paging {
    const page = this.integer("page") ?? 1
    if (page < 1) throw new BadRequest(`'page' starts at 1, got ${page}`)
    const pageSize = this.integer("page_size") ?? defaultPageSize
    if (pageSize < 1 || pageSize > maxPageSize) {
      throw new BadRequest(`'page_size' must be between 1 and ${maxPageSize}, got ${pageSize}`)
    }
    if ((page - 1) * pageSize + pageSize > maxDepth) {
      throw new BadRequest(
        `page ${page} at page_size ${pageSize} reaches past ${maxDepth} records deep; results cannot be paged that far (narrow the query)`,
      )
    }
    const sortBy = this.string("sort_by")
    if (sortBy !== undefined && !(sortValues as readonly string[]).includes(sortBy)) {
      throw new BadRequest(`'sort_by' must be one of ${sortValues.join(", ")}, got '${sortBy}'`)
    }
    const direction = this.string("sort_direction")?.toLowerCase()
    if (direction !== undefined && direction !== "asc" && direction !== "desc") {
      throw new BadRequest(`'sort_direction' must be asc or desc, got '${this.string("sort_direction")}'`)
    }
    return { page, pageSize, sortBy: sortBy as SortBy | undefined, descending: direction === "desc" }
  }

  tech(): TechFilter | undefined {
    const tech: TechFilter = {
      categories: this.lowerList("tech_category", "~"),
      subcategories: this.lowerList("tech_subcategory", "~"),
      products: this.lowerList("tech_product", "~"),
      vendors: this.lowerList("tech_vendor", "~"),
    }
    return Object.values(tech).some((v) => v !== undefined) ? tech : undefined
  }
}

const range = (min: number | undefined, max: number | undefined, what: string) => {
  if (min !== undefined && max !== undefined && min > max) {
    throw new BadRequest(`'company_min_${what}' (${min}) exceeds 'company_max_${what}' (${max})`)
  }
}

export const parsePeopleQuery = (params: URLSearchParams): PeopleQuery => {
  const r = new Reader(params, peopleParams)
  const emails = r.lowerList("email", ",")
  for (const email of emails ?? []) {
    if (!/^[^@\s]+@[^@\s]+$/.test(email)) throw new BadRequest(`'email' has an invalid address '${email}'`)
  }
  const linkedinUrl = r.string("linkedin_url")
  if (linkedinUrl !== undefined && !/linkedin\.com\/in\/[^/]+/i.test(linkedinUrl)) {
    throw new BadRequest(
      "'linkedin_url' must be a full profile URL (linkedin.com/in/...), not the identifier part",
    )
  }
  const mobilePhone = r.string("mobile_phone")
  if (mobilePhone !== undefined && !/^\d{7,15}$/.test(mobilePhone)) {
    throw new BadRequest(
      `'mobile_phone' must be 7 to 15 digits, without formatting or country code, got '${mobilePhone}'`,
    )
  }
  const countries = r.list("location_country_codes", ",")?.map((c) => c.toUpperCase())
  for (const c of countries ?? []) {
    if (!/^[A-Z]{2}$/.test(c))
      throw new BadRequest(`'location_country_codes' needs ISO alpha-2 codes, got '${c}'`)
  }
  const zipcodes = r.list("company_location_zipcodes", ",")?.map((z) => z.toUpperCase())
  const zipDistance = r.integer("company_location_zipcodes_distance", 0)
  if (zipDistance !== undefined && zipcodes === undefined) {
    throw new BadRequest("'company_location_zipcodes_distance' needs 'company_location_zipcodes'")
  }
  const minSize = r.integer("company_min_size", 0)
  const maxSize = r.integer("company_max_size", 0)
  const minRevenue = r.integer("company_min_revenue", 0)
  const maxRevenue = r.integer("company_max_revenue", 0)
  range(minSize, maxSize, "size")
  range(minRevenue, maxRevenue, "revenue")
  // company_industries is obsolete: accepted and ignored, as the provider documents it.
  r.string("company_industries")
  const required = r.codes("required_fields", requiredFieldCodes)?.map((i) => requiredFieldCodes[i]!)
  const query = {
    domains: r.lowerList("company_domain", ","),
    names: r.lowerList("company_name", ","),
    states: r.list("company_location_states", ",")?.map((s) => s.toUpperCase()),
    zipcodes,
    zipDistance,
    minRevenue,
    maxRevenue,
    minSize,
    maxSize,
    naics: r.list("company_naics_codes", ","),
    sic: r.list("company_sic_codes", ","),
    isInternational: r.boolean("is_international"),
    countries,
    specialties: r.lowerList("specialties", ","),
    verified: r.boolean("verified"),
    tech: r.tech(),
    emails,
    matchOnJobHistory: r.boolean("matchOnJobHistory") ?? true,
    firstName: r.string("first_name")?.toLowerCase(),
    lastName: r.string("last_name")?.toLowerCase(),
    jobTitles: r.lowerList("job_title", ","),
    levels: r.codes(
      "job_levels",
      jobLevels.map((l) => l.code),
    ),
    departments: r.codes(
      "job_departments",
      jobDepartments.map((d) => d.code),
    ),
    matchIds: r.list("match_ids", ","),
    required,
    isEvContact: r.boolean("is_ev_contact"),
    linkedinUrl,
    mobilePhone,
  }
  const paging = r.paging(["company_name", "company_location"])
  return { ...query, paging, cacheKey: JSON.stringify(query) }
}

export const parseAppendQuery = (params: URLSearchParams): AppendQuery => {
  const r = new Reader(params, appendParams)
  return {
    domains: r.lowerList("company_domain", ","),
    names: r.lowerList("company_name", ","),
    isInternational: r.boolean("is_international"),
    verified: r.boolean("verified"),
    tech: r.tech(),
    paging: r.paging(["company_name", "company_location"]),
  }
}

export const parseProductsQuery = (params: URLSearchParams): ProductsQuery => {
  const r = new Reader(params, productsParams)
  const products = r.lowerList("product", "~")
  const vendors = r.lowerList("vendor", "~")
  if (products === undefined && vendors === undefined) {
    throw new BadRequest("one of 'product' or 'vendor' is required")
  }
  return { products, vendors, paging: r.paging(["product", "vendor"]) }
}

/** The categories lookup takes no parameters. */
export const parseCategoriesQuery = (params: URLSearchParams): void => {
  new Reader(params, [])
}
