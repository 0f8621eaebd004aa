/**
 * Hand-written decoders for records already in the expected shape: plain `typeof` checks that
 * mirror the core's lenient schemas (Contact, CompanyTechnologies, Taxonomy) and build the same
 * decoded value. They only ever accept a subset of what the schema accepts, and decode it the same
 * way; anything they are unsure of (a value of the wrong type, a numeric string in an unusual
 * spelling, an ISO date where epoch milliseconds are expected, ...) returns `miss`, and the caller
 * falls back to the schema, which decodes it or produces the precise error with its path.
 * Keys the schemas do not know are dropped, as Schema.Struct does.
 */
import * as Either from "effect/Either"
import * as Schema from "effect/Schema"
import * as CompanyTechnologies from "./CompanyTechnologies.ts"
import * as Contact from "./Contact.ts"
import { fromParseError, type ParseIssue } from "./ParseIssue.ts"
import * as Taxonomy from "./Taxonomy.ts"

/** "Not sure: use the schema." */
export const miss: unique symbol = Symbol("miss")
export type Miss = typeof miss

export type Fast<A> = (input: unknown) => A | Miss

const plainNumber = /^-?\d+(\.\d+)?$/

export const string: Fast<string> = (input) => (typeof input === "string" ? input : miss)

export const nonEmptyString: Fast<string> = (input) =>
  typeof input === "string" && input.length > 0 ? input : miss

/** Opaque: any JSON value, as it is. */
export const opaque: Fast<unknown> = (input) => input

export const boolean: Fast<boolean> = (input) => (typeof input === "boolean" ? input : miss)

/** LooseNumber: a finite number, or a plain decimal string (the same value Number() gives). */
export const looseNumber: Fast<number> = (input) => {
  if (typeof input === "number") return Number.isFinite(input) ? input : miss
  if (typeof input === "string" && plainNumber.test(input)) return Number(input)
  return miss
}

/** LooseInt: a LooseNumber that is an integer. */
export const looseInt: Fast<number> = (input) => {
  const value = looseNumber(input)
  return value !== miss && Number.isInteger(value) ? value : miss
}

/** EpochMillis: a finite number or a numeric string (ISO dates are left to the schema). */
export const epochMillis: Fast<number> = (input) => {
  if (typeof input === "number") return Number.isFinite(input) ? input : miss
  if (typeof input === "string") {
    const trimmed = input.trim()
    if (plainNumber.test(trimmed)) return Number(trimmed)
  }
  return miss
}

export const array =
  <A>(item: Fast<A>): Fast<ReadonlyArray<A>> =>
  (input) => {
    if (!Array.isArray(input)) return miss
    const result: Array<A> = new Array(input.length)
    for (let index = 0; index < input.length; index++) {
      const value = item(input[index])
      if (value === miss) return miss
      result[index] = value
    }
    return result
  }

/**
 * A field that may be absent, undefined or null (optionalNullable), or, with `fallback`, one
 * that decodes to it then (`optionalWith({ nullable: true, default })`).
 */
export interface Optional<A> {
  readonly optional: true
  readonly decode: Fast<A>
  readonly fallback?: A | undefined
}
export const optionalNullable = <A>(decode: Fast<A>, fallback?: A): Optional<A> => ({
  optional: true,
  decode,
  fallback,
})

type Field = Fast<unknown> | Optional<unknown>

const isObject = (value: unknown): value is Readonly<Record<string, unknown>> =>
  typeof value === "object" && value !== null && !Array.isArray(value)

/** Schema.Struct: required and optional fields; unknown keys dropped. */
export const struct = <A>(fields: Readonly<Record<string, Field>>): Fast<A> => {
  const entries = Object.entries(fields).map(([key, field]) =>
    typeof field === "function"
      ? { key, optional: false, decode: field, fallback: undefined }
      : { key, optional: true, decode: field.decode, fallback: field.fallback },
  )
  return (input) => {
    if (!isObject(input)) return miss
    const result: Record<string, unknown> = {}
    for (const { key, optional, decode, fallback } of entries) {
      const value = input[key]
      if (optional && (value === undefined || value === null)) {
        if (fallback !== undefined) result[key] = fallback
        else if (value === null) result[key] = null
        else if (key in input) result[key] = undefined
        continue
      }
      const decoded = decode(value)
      if (decoded === miss) return miss
      result[key] = decoded
    }
    // The caller's type is the schema's own Type; this builds exactly its fields.
    return result as A
  }
}

const optString = optionalNullable(string)
const optInt = optionalNullable(looseInt)
const optNumber = optionalNullable(looseNumber)
const optStrings = optionalNullable(array(string))

const phoneNumber = struct({ type: optString, value: optString })
const socialProfile = struct({ type: optString, url: optString })
const address = struct({
  location_id: optInt,
  is_hq: optionalNullable(boolean),
  type: optString,
  street_1: optString,
  street_2: optString,
  city: optString,
  state: optString,
  zip: optString,
  country: optString,
})
const companySummary = struct({
  id: optInt,
  name: optString,
  domains: optStrings,
  linkedin_url: optString,
  naics_codes: optStrings,
  sic_codes: optStrings,
  revenue: optNumber,
  actual_revenue: optNumber,
  predicted_revenue: optNumber,
  revenue_range: optString,
  size: optInt,
  size_range: optString,
})
const recordDates = struct({
  created_date: optionalNullable(epochMillis),
  last_modified_date: optionalNullable(epochMillis),
})

/** Contact.Contact. */
export const contact: Fast<Contact.Contact> = struct({
  match_id: nonEmptyString,
  _score: optionalNullable(opaque),
  doc_id: optString,
  display_name: optString,
  first_name: optString,
  last_name: optString,
  email: optString,
  personal_email: optString,
  job_title: optString,
  job_level: optString,
  job_department: optString,
  phone_numbers: optionalNullable(array(phoneNumber)),
  social_profiles: optionalNullable(array(socialProfile)),
  location: optString,
  location_type: optString,
  position_location_id: optInt,
  addresses: optionalNullable(array(address)),
  company: optionalNullable(companySummary),
  company_id: optInt,
  company_name: optString,
  company_domains: optStrings,
  company_revenue: optNumber,
  company_actual_revenue: optNumber,
  company_predicted_revenue: optNumber,
  company_revenue_range: optString,
  company_size: optInt,
  company_size_range: optString,
  company_score: optionalNullable(opaque),
  company_status: optionalNullable(opaque),
  cds_batch_id: optionalNullable(opaque),
  dates: optionalNullable(recordDates),
})

/** Contact.PreviewContact. */
export const previewContact: Fast<Contact.PreviewContact> = struct({
  match_id: nonEmptyString,
  first_name: optString,
  last_name: optString,
  job_title: optString,
  company_name: optString,
  location: optString,
})

const technology = struct({
  category: optString,
  subcategory: optString,
  product: optString,
  vendor: optString,
  in_use: optionalNullable(boolean),
})

/** CompanyTechnologies.CompanyTechnologies. */
export const companyTechnologies: Fast<CompanyTechnologies.CompanyTechnologies> = struct({
  company_id: looseInt,
  company_name: optString,
  company_domains: optStrings,
  is_international: optionalNullable(boolean),
  verified: optionalNullable(boolean),
  company: optionalNullable(companySummary),
  technologies: optionalNullable(array(technology)),
})

/** Taxonomy.Category. */
export const category: Fast<Taxonomy.Category> = struct({
  category: nonEmptyString,
  subcategories: optStrings,
})

/** Taxonomy.Product. */
export const product: Fast<Taxonomy.Product> = struct({
  product: nonEmptyString,
  vendor: optionalNullable(string, ""),
  category: optString,
  subcategory: optString,
})

/** A record's Schema and the decoder that takes the fast path where it can. */
export interface Decoder<A, I> {
  readonly schema: Schema.Schema<A, I>
  readonly decode: (input: unknown) => Either.Either<A, ParseIssue>
}

/**
 * A decoder that takes the fast path where it is sure and the schema otherwise, so a record in
 * the usual shape costs a few `typeof` checks and an unusual one still gets the schema's precise
 * error (with the bad value's path).
 */
export const withSchema = <A, I>(schema: Schema.Schema<A, I>, fast: Fast<A>): Decoder<A, I> => {
  const decode = Schema.decodeUnknownEither(schema)
  return {
    schema,
    decode: (input) => {
      const value = fast(input)
      if (value !== miss) return Either.right(value)
      return Either.mapLeft(decode(input), (error) => fromParseError(error))
    },
  }
}

/** The decoder of each record the provider sends. */
export const decoders = {
  contact: withSchema(Contact.Contact, contact),
  previewContact: withSchema(Contact.PreviewContact, previewContact),
  companyTechnologies: withSchema(CompanyTechnologies.CompanyTechnologies, companyTechnologies),
  category: withSchema(Taxonomy.Category, category),
  product: withSchema(Taxonomy.Product, product),
}
