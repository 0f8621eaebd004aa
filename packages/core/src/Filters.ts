/**
 * The query parameters of every endpoint (interface-spec.md section 4), with their real types:
 * lists are arrays, flags are booleans, numbers are integers and the documented codes are literal
 * unions. Encoding joins lists with ',' or '~' as the spec says for each parameter; a value that
 * contains its own separator cannot be sent faithfully, so it is refused with the field's path
 * instead of silently becoming two values; so is any text value holding a NUL (U+0000).
 */
import * as Either from "effect/Either"
import * as ParseResult from "effect/ParseResult"
import * as Schema from "effect/Schema"
import { fromParseError, type ParseIssue } from "./ParseIssue.ts"

// ---------------------------------------------------------------------------------------------
// Code lists (interface-spec.md section 2)

export const jobLevels = ["brd", "chf", "vp", "dir", "mgr", "stf"] as const
/** One message for a whole code list, instead of one "Expected ..." per code. */
const oneOf = (codes: ReadonlyArray<string>) => ({
  message: (issue: ParseResult.ParseIssue) => ({
    message: `Expected one of ${codes.join(", ")}, actual ${JSON.stringify(issue.actual)}`,
    override: true,
  }),
})

export const JobLevel = Schema.Literal(...jobLevels).annotations(oneOf(jobLevels))
export type JobLevel = typeof JobLevel.Type

export const jobDepartments = [
  "fnad",
  "hr",
  "it_is",
  "lgl",
  "mrkt",
  "ops",
  "prc",
  "enrd",
  "sale",
  "other",
] as const
export const JobDepartment = Schema.Literal(...jobDepartments).annotations(oneOf(jobDepartments))
export type JobDepartment = typeof JobDepartment.Type

export const requiredFieldCodes = [
  "address",
  "phone",
  "direct_phone",
  "any_mobile",
  "personal_email",
  "linkedin_url",
  "job_title",
] as const
export const RequiredField = Schema.Literal(...requiredFieldCodes).annotations(oneOf(requiredFieldCodes))
export type RequiredField = typeof RequiredField.Type

export const SortDirection = Schema.Literal("asc", "desc").annotations(oneOf(["asc", "desc"]))
export const CompanySortBy = Schema.Literal("company_name", "company_location").annotations(
  oneOf(["company_name", "company_location"]),
)
export const ProductSortBy = Schema.Literal("product", "vendor").annotations(oneOf(["product", "vendor"]))

// ---------------------------------------------------------------------------------------------
// Text values

/**
 * A NUL (U+0000) in a value: never what a user meant (a copy from a binary file, a C string's
 * end), sent as %00 where servers commonly cut the value there, and text Postgres cannot store.
 * The value is quoted as JSON, so the NUL shows as \u0000 rather than reaching the terminal.
 */
const nulProblem = (value: string): string | undefined =>
  value.includes("\u0000")
    ? `a value without a NUL character (U+0000), actual ${JSON.stringify(value)}: remove it`
    : undefined

/** Free text sent as one parameter (a name, a URL): any text but one holding a NUL. */
export const FilterText = Schema.String.pipe(Schema.filter(nulProblem, { identifier: "FilterText" }))

// ---------------------------------------------------------------------------------------------
// List values

/** A list item sent inside a separated list: non-empty, free of its list's separator and of NUL. */
const listItem = (separator: "," | "~") =>
  Schema.String.pipe(
    Schema.filter(
      (value) =>
        value.trim().length === 0
          ? "a non-empty value"
          : (nulProblem(value) ??
            (value.includes(separator)
              ? `a value without '${separator}' (the provider splits this list on '${separator}', so "${value}" would be read as several values)`
              : undefined)),
      { identifier: separator === "," ? "CommaListItem" : "TildeListItem" },
    ),
  )

/** What a list expects when the value given is not a list at all (`"vp"` for `["vp"]`). */
const listOf = (what: string, example: string) => ({
  message: (issue: ParseResult.ParseIssue) =>
    `Expected a list of ${what}, such as ${example}, actual ${JSON.stringify(issue.actual)}`,
})

/** A list the spec joins with commas. */
export const CommaList = Schema.Array(listItem(",")).annotations(listOf("values", '["a", "b"]'))
/** A list the spec joins with tildes (the tech_* filters and the taxonomy terms). */
export const TildeList = Schema.Array(listItem("~")).annotations(listOf("values", '["a", "b"]'))
const CodeList = <S extends Schema.Schema.Any>(code: S, codes: ReadonlyArray<string>) =>
  Schema.Array(code).annotations(listOf(`codes (${codes.join(", ")})`, `["${codes[0]}"]`))

const NonNegativeInt = Schema.Int.pipe(Schema.nonNegative())

const CountryCode = Schema.String.pipe(
  Schema.pattern(/^[A-Za-z]{2}$/, { message: () => "an ISO 3166-1 alpha-2 country code such as US or DE" }),
)
const Digits = Schema.String.pipe(
  Schema.pattern(/^[0-9]+$/, { message: () => "digits only, without spaces or punctuation" }),
)

// ---------------------------------------------------------------------------------------------
// Filters per endpoint

const techFilterFields = {
  tech_category: Schema.optional(TildeList),
  tech_subcategory: Schema.optional(TildeList),
  tech_product: Schema.optional(TildeList),
  tech_vendor: Schema.optional(TildeList),
}

const orderFields = {
  sort_by: Schema.optional(CompanySortBy),
  sort_direction: Schema.optional(SortDirection),
}

/** Min and max of a range filter must not cross: the provider would silently return nothing. */
const rangeCheck =
  (minKey: string, maxKey: string) =>
  (filters: Readonly<Record<string, unknown>>): ParseResult.ParseIssue | undefined => {
    const min = filters[minKey]
    const max = filters[maxKey]
    return typeof min === "number" && typeof max === "number" && min > max
      ? new ParseResult.Pointer(
          minKey,
          filters,
          new ParseResult.Type(
            NonNegativeInt.ast,
            min,
            `${minKey} (${min}) must not exceed ${maxKey} (${max})`,
          ),
        )
      : undefined
  }

/** A refusal pointing at `key`, so the config's error names the filter. */
const pointer = (key: string, filters: Readonly<Record<string, unknown>>, message: string) =>
  new ParseResult.Pointer(key, filters, new ParseResult.Type(Schema.Unknown.ast, filters[key], message))

/** The spec's radius is "around the given ZIP codes": without any, the provider refuses it. */
const zipRadiusCheck = (filters: Readonly<Record<string, unknown>>): ParseResult.ParseIssue | undefined => {
  const zipcodes = filters.company_location_zipcodes
  return filters.company_location_zipcodes_distance !== undefined &&
    !(Array.isArray(zipcodes) && zipcodes.length > 0)
    ? pointer(
        "company_location_zipcodes_distance",
        filters,
        'company_location_zipcodes_distance is a radius around ZIP codes: give company_location_zipcodes too (e.g. ["02110"]), or leave the radius out',
      )
    : undefined
}

/**
 * The spec wants the "full profile URL, not the token or identifier part of it": a bare token
 * such as "dana-reyes" matches nothing or is refused, so it is refused here, before any request.
 */
const linkedinCheck = (filters: Readonly<Record<string, unknown>>): ParseResult.ParseIssue | undefined => {
  const url = filters.linkedin_url
  return typeof url === "string" && !/^(https?:\/\/)?([a-z0-9-]+\.)?linkedin\.com\/\S+/i.test(url.trim())
    ? pointer(
        "linkedin_url",
        filters,
        `linkedin_url must be a full profile URL such as https://www.linkedin.com/in/dana-reyes, not the identifier part; got "${url}"`,
      )
    : undefined
}

/** Filters of 4.1 (search, credited) and 4.2 (preview, free); both take the same parameters. */
export const PeopleFilters = Schema.Struct({
  // Company filters
  company_domain: Schema.optional(CommaList),
  /** Obsolete in the spec; still sent if given, and the provider ignores it. */
  company_industries: Schema.optional(CommaList),
  company_location_states: Schema.optional(CommaList),
  company_location_zipcodes: Schema.optional(CommaList),
  company_location_zipcodes_distance: Schema.optional(NonNegativeInt),
  company_max_revenue: Schema.optional(NonNegativeInt),
  company_min_revenue: Schema.optional(NonNegativeInt),
  company_max_size: Schema.optional(NonNegativeInt),
  company_min_size: Schema.optional(NonNegativeInt),
  company_naics_codes: Schema.optional(CommaList),
  company_sic_codes: Schema.optional(CommaList),
  company_name: Schema.optional(CommaList),
  is_international: Schema.optional(Schema.Boolean),
  location_country_codes: Schema.optional(Schema.Array(CountryCode)),
  specialties: Schema.optional(CommaList),
  verified: Schema.optional(Schema.Boolean),
  // Technology filters (need the add-on permission)
  ...techFilterFields,
  // Contact filters
  email: Schema.optional(CommaList),
  matchOnJobHistory: Schema.optional(Schema.Boolean),
  first_name: Schema.optional(FilterText),
  last_name: Schema.optional(FilterText),
  job_title: Schema.optional(CommaList),
  job_levels: Schema.optional(CodeList(JobLevel, jobLevels)),
  job_departments: Schema.optional(CodeList(JobDepartment, jobDepartments)),
  match_ids: Schema.optional(CommaList),
  required_fields: Schema.optional(CodeList(RequiredField, requiredFieldCodes)),
  is_ev_contact: Schema.optional(Schema.Boolean),
  linkedin_url: Schema.optional(FilterText),
  mobile_phone: Schema.optional(Digits),
  ...orderFields,
}).pipe(
  Schema.filter((filters) => [
    rangeCheck("company_min_size", "company_max_size")(filters),
    rangeCheck("company_min_revenue", "company_max_revenue")(filters),
    zipRadiusCheck(filters),
    linkedinCheck(filters),
  ]),
)
export type PeopleFilters = typeof PeopleFilters.Type

/** Filters of 4.3, technology append (credited per company returned). */
export const TechnologyFilters = Schema.Struct({
  company_domain: Schema.optional(CommaList),
  company_name: Schema.optional(CommaList),
  is_international: Schema.optional(Schema.Boolean),
  ...techFilterFields,
  verified: Schema.optional(Schema.Boolean),
  ...orderFields,
})
export type TechnologyFilters = typeof TechnologyFilters.Type

/** Filters of 4.5, taxonomy products and vendors: at least one of product or vendor. */
export const ProductFilters = Schema.Struct({
  product: Schema.optional(TildeList),
  vendor: Schema.optional(TildeList),
  sort_by: Schema.optional(ProductSortBy),
  sort_direction: Schema.optional(SortDirection),
}).pipe(
  Schema.filter(
    (filters) =>
      (filters.product?.length ?? 0) + (filters.vendor?.length ?? 0) > 0 ||
      "at least one product or vendor term (the provider refuses a lookup with neither)",
  ),
)
export type ProductFilters = typeof ProductFilters.Type

// ---------------------------------------------------------------------------------------------
// Encoding

/** Which parameters are joined with '~' rather than ','. */
const tildeParameters = new Set([
  "tech_category",
  "tech_subcategory",
  "tech_product",
  "tech_vendor",
  "product",
  "vendor",
])

/** The tech_* filters present in a filter set: they need the add-on, and a 403 names them. */
export const techFiltersUsed = (filters: Readonly<Record<string, unknown>>): ReadonlyArray<string> =>
  Object.keys(techFilterFields).filter((key) => {
    const value = filters[key]
    return Array.isArray(value) && value.length > 0
  })

/**
 * Decoded filters as query parameters, in the spec's order. Lists are joined with their
 * separator, booleans become "true"/"false", empty lists are left out (no filter).
 */
export const parametersOf = (
  decoded: Readonly<Record<string, unknown>>,
): ReadonlyArray<readonly [string, string]> => {
  const parameters: Array<readonly [string, string]> = []
  for (const [key, value] of Object.entries(decoded)) {
    if (value === undefined) continue
    if (Array.isArray(value)) {
      if (value.length > 0) parameters.push([key, value.join(tildeParameters.has(key) ? "~" : ",")])
    } else {
      parameters.push([key, String(value)])
    }
  }
  return parameters
}

/** Validates filters and turns them into query parameters (parametersOf). */
export const encode = <A, I>(
  schema: Schema.Schema<A, I>,
  filters: unknown,
): Either.Either<ReadonlyArray<readonly [string, string]>, ParseIssue> =>
  Schema.decodeUnknownEither(schema, { onExcessProperty: "error" })(filters).pipe(
    Either.mapLeft((error) => fromParseError(error)),
    Either.map((decoded) => parametersOf(decoded as Record<string, unknown>)),
  )

/**
 * The longest query string of filters one request may carry, in bytes as sent (URL-encoded). The
 * provider documents no limit; the front ends APIs sit behind commonly refuse a request line past
 * 8 KB (Apache's LimitRequestLine of 8,190 bytes, nginx's 8 KB header buffers; Node, the
 * sandbox, 16 KB of headers) with HTTP 414 or 431, and only once a run has begun. About 1 KB is
 * left for the path, the paging and a partition's own filters.
 */
export const maxFilterQueryBytes = 7_000

/**
 * Why filters are too long for one request, or undefined: the size they take, and the longest
 * list, with about how many of its values fit (the rest of the filters as they are).
 */
export const tooLong = (decoded: Readonly<Record<string, unknown>>): string | undefined => {
  const parameters = parametersOf(decoded)
  const bytes = new URLSearchParams(parameters.map(([key, value]) => [key, value])).toString().length
  if (bytes <= maxFilterQueryBytes) return undefined
  const [name, joined] = [...parameters].sort((a, b) => b[1].length - a[1].length)[0] ?? ["", ""]
  const values = decoded[name]
  const count = Array.isArray(values) ? values.length : 1
  const listBytes = new URLSearchParams([[name, joined]]).toString().length
  const fit = Math.floor(((maxFilterQueryBytes - (bytes - listBytes)) * count) / listBytes)
  return `these filters make a request of ${bytes.toLocaleString("en-US")} bytes, past the ${maxFilterQueryBytes.toLocaleString("en-US")} one request can carry (servers answer longer ones with HTTP 414 or 431): ${name} holds ${count.toLocaleString("en-US")} values; split them across several searches${fit > 0 ? ` of about ${fit.toLocaleString("en-US")} each` : ""}`
}
