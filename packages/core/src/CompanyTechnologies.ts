/**
 * A company record of /service/technologies/append: the company and the technologies appended
 * to it. The provider documents no body for this endpoint; these keys follow the composed
 * example in upstream-api-notes.md section 11b and are decoded loosely, the raw JSON kept.
 */
import * as Schema from "effect/Schema"
import { CompanySummary } from "./Contact.ts"
import { LooseInt, optionalNullable } from "./Values.ts"

export const Technology = Schema.Struct({
  category: optionalNullable(Schema.String),
  subcategory: optionalNullable(Schema.String),
  product: optionalNullable(Schema.String),
  vendor: optionalNullable(Schema.String),
  /** Whether the company uses it; append charges per company whether or not it does. */
  in_use: optionalNullable(Schema.Boolean),
})
export type Technology = typeof Technology.Type

export const CompanyTechnologies = Schema.Struct({
  company_id: LooseInt,
  company_name: optionalNullable(Schema.String),
  company_domains: optionalNullable(Schema.Array(Schema.String)),
  /** Outside the US (true) or in it (false); echoes the request filter of the same name. */
  is_international: optionalNullable(Schema.Boolean),
  /** Human-verified (true) or machine-verified (false) company details. */
  verified: optionalNullable(Schema.Boolean),
  company: optionalNullable(CompanySummary),
  technologies: optionalNullable(Schema.Array(Technology)),
})
export type CompanyTechnologies = typeof CompanyTechnologies.Type
