/**
 * A contact (person) record of /service/people and /service/people/preview, with the fields
 * upstream-api-notes.md section 4 documents. Only `match_id` is required: it is the key the
 * connector syncs by. Every other field is optional and nullable, and the record's full JSON is
 * kept beside it (see Page.Item), so keys the provider adds or that are not typed here survive.
 */
import * as Schema from "effect/Schema"
import { EpochMillis, LooseInt, LooseNumber, Opaque, optionalNullable } from "./Values.ts"

export const PhoneNumber = Schema.Struct({
  /** work_hq, work_branch, work (a direct line) or mobile; kept as a string in case of new types. */
  type: optionalNullable(Schema.String),
  value: optionalNullable(Schema.String),
})
export type PhoneNumber = typeof PhoneNumber.Type

export const SocialProfile = Schema.Struct({
  /** linkedin, facebook or twitter. */
  type: optionalNullable(Schema.String),
  /** May come without a scheme (linkedin.com/in/...). */
  url: optionalNullable(Schema.String),
})
export type SocialProfile = typeof SocialProfile.Type

/** An address of the contact's company (HQ or branch), not of the person. */
export const Address = Schema.Struct({
  location_id: optionalNullable(LooseInt),
  is_hq: optionalNullable(Schema.Boolean),
  type: optionalNullable(Schema.String),
  street_1: optionalNullable(Schema.String),
  street_2: optionalNullable(Schema.String),
  city: optionalNullable(Schema.String),
  state: optionalNullable(Schema.String),
  zip: optionalNullable(Schema.String),
  country: optionalNullable(Schema.String),
})
export type Address = typeof Address.Type

/** The nested company block of a contact: the documented source of company columns. */
export const CompanySummary = Schema.Struct({
  id: optionalNullable(LooseInt),
  name: optionalNullable(Schema.String),
  domains: optionalNullable(Schema.Array(Schema.String)),
  linkedin_url: optionalNullable(Schema.String),
  naics_codes: optionalNullable(Schema.Array(Schema.String)),
  sic_codes: optionalNullable(Schema.Array(Schema.String)),
  revenue: optionalNullable(LooseNumber),
  actual_revenue: optionalNullable(LooseNumber),
  predicted_revenue: optionalNullable(LooseNumber),
  revenue_range: optionalNullable(Schema.String),
  size: optionalNullable(LooseInt),
  size_range: optionalNullable(Schema.String),
})
export type CompanySummary = typeof CompanySummary.Type

export const RecordDates = Schema.Struct({
  created_date: optionalNullable(EpochMillis),
  last_modified_date: optionalNullable(EpochMillis),
})

export const Contact = Schema.Struct({
  match_id: Schema.String.pipe(Schema.minLength(1)),
  /** Search relevance; opaque in the provider's model. */
  _score: Schema.optional(Opaque),
  doc_id: optionalNullable(Schema.String),
  display_name: optionalNullable(Schema.String),
  first_name: optionalNullable(Schema.String),
  last_name: optionalNullable(Schema.String),
  /** Masked on preview pages: never to be stored as real data when the page is a preview. */
  email: optionalNullable(Schema.String),
  personal_email: optionalNullable(Schema.String),
  job_title: optionalNullable(Schema.String),
  /** One of the job level codes in the provider's data; a string, in case it sends others. */
  job_level: optionalNullable(Schema.String),
  job_department: optionalNullable(Schema.String),
  phone_numbers: optionalNullable(Schema.Array(PhoneNumber)),
  social_profiles: optionalNullable(Schema.Array(SocialProfile)),
  location: optionalNullable(Schema.String),
  location_type: optionalNullable(Schema.String),
  position_location_id: optionalNullable(LooseInt),
  addresses: optionalNullable(Schema.Array(Address)),
  company: optionalNullable(CompanySummary),
  company_id: optionalNullable(LooseInt),
  company_name: optionalNullable(Schema.String),
  company_domains: optionalNullable(Schema.Array(Schema.String)),
  // Flat copies of the nested company block's fields (the block is preferred where both are sent).
  company_revenue: optionalNullable(LooseNumber),
  company_actual_revenue: optionalNullable(LooseNumber),
  company_predicted_revenue: optionalNullable(LooseNumber),
  company_revenue_range: optionalNullable(Schema.String),
  company_size: optionalNullable(LooseInt),
  company_size_range: optionalNullable(Schema.String),
  company_score: Schema.optional(Opaque),
  company_status: Schema.optional(Opaque),
  cds_batch_id: Schema.optional(Opaque),
  dates: optionalNullable(RecordDates),
})
export type Contact = typeof Contact.Type

/**
 * A contact as the free preview returns it: contact details are masked there, so only what the
 * preview is documented to show is decoded (the id, name, title, company and location). The raw
 * JSON is still kept, but masked values must never be stored as real data.
 */
export const PreviewContact = Schema.Struct({
  match_id: Schema.String.pipe(Schema.minLength(1)),
  first_name: optionalNullable(Schema.String),
  last_name: optionalNullable(Schema.String),
  job_title: optionalNullable(Schema.String),
  company_name: optionalNullable(Schema.String),
  location: optionalNullable(Schema.String),
})
export type PreviewContact = typeof PreviewContact.Type
