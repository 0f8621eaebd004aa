/**
 * The table descriptions: the tables each stream of the registry lands in. Adding a column is
 * adding a line here: the DDL adds it to existing tables (Ddl.ts) and the mapper fills it.
 * `mappings` is keyed by stream name, so a stream of the registry without tables here (or tables
 * for a stream the registry does not have) does not build.
 */
import { Streams } from "@salesintel/airbyte"
import type { CompanyTechnologies, Contact, Taxonomy } from "@salesintel/core"
import { child, defineStream, type Source, type StreamMapping } from "./Mapping.ts"
import { stripNul } from "./Nul.ts"
import { column, type Table, type TableShape } from "./Table.ts"

/** Epoch milliseconds as an ISO timestamp, or null when out of range. */
const isoFromMillis = (millis: number | null | undefined): string | null => {
  if (millis === null || millis === undefined) return null
  const date = new Date(millis)
  return Number.isNaN(date.getTime()) ? null : date.toISOString()
}

/** A raw ISO-8601 string (the source's `_salesintel_fetched_at`) as a timestamp, or null. */
const isoFromRaw = (value: unknown): string | null =>
  typeof value === "string" ? isoFromMillis(Date.parse(value)) : null

const rawString = (value: unknown): string | null => (typeof value === "string" ? value : null)
const rawBoolean = (value: unknown): boolean | null => (typeof value === "boolean" ? value : null)

// The record's text on the input line when there was one (RecordLine.ts), else the parsed record.
const raw = <R>() => column<Source<R>>("_raw", "jsonb", "the whole record as received", (s) => s.rawJson)
const fetchedAt = <R>() =>
  column<Source<R>>("fetched_at", "timestamptz", "when the source fetched the record", (s) =>
    isoFromRaw(s.raw[Streams.addedFields.fetchedAt]),
  )

/** Records that name their company directly or in its nested summary: contacts and companies. */
interface NamesCompany {
  readonly company_name?: string | null | undefined
  readonly company_domains?: ReadonlyArray<string> | null | undefined
  readonly company?: { readonly name?: string | null; readonly domains?: ReadonlyArray<string> | null } | null
}
const companyNaming = <R extends NamesCompany>() => [
  column<Source<R>>("company_name", "text", "", (s) => s.record.company_name ?? s.record.company?.name),
  column<Source<R>>(
    "company_domains",
    "text[]",
    "",
    (s) => s.record.company_domains ?? s.record.company?.domains,
  ),
]

type ContactSource = Source<Contact.Contact>

const contactsTable: Table<ContactSource> = {
  name: "contacts",
  doc: "one row per contact (person), keyed by the provider's match_id",
  primaryKey: ["match_id"],
  columns: [
    column("match_id", "text", "the provider's contact id", (s) => s.record.match_id, { notNull: true }),
    column("doc_id", "text", "the provider's document id", (s) => s.record.doc_id),
    column("display_name", "text", "full name", (s) => s.record.display_name),
    column("first_name", "text", "", (s) => s.record.first_name),
    column("last_name", "text", "", (s) => s.record.last_name),
    column("email", "text", "work email", (s) => s.record.email),
    column("personal_email", "text", "", (s) => s.record.personal_email),
    column("job_title", "text", "", (s) => s.record.job_title),
    column("job_level", "text", "level code (c_level, vp, dir, mgr, staff, ...)", (s) => s.record.job_level),
    column("job_department", "text", "department code (it_is, sales, ...)", (s) => s.record.job_department),
    column("location", "text", "the contact's location as text", (s) => s.record.location),
    column("location_type", "text", "hq or branch", (s) => s.record.location_type),
    column("position_location_id", "bigint", "", (s) => s.record.position_location_id),
    column(
      "linkedin_url",
      "text",
      "the contact's LinkedIn profile",
      (s) => s.record.social_profiles?.find((profile) => profile.type === "linkedin")?.url,
    ),
    column(
      "company_id",
      "bigint",
      "the provider's company id (companies.company_id)",
      (s) => s.record.company_id ?? s.record.company?.id,
    ),
    ...companyNaming(),
    column("created_at", "timestamptz", "the provider's created_date", (s) =>
      isoFromMillis(s.record.dates?.created_date),
    ),
    column("last_modified_at", "timestamptz", "the provider's last_modified_date", (s) =>
      isoFromMillis(s.record.dates?.last_modified_date),
    ),
    column("search", "text", "the configured search that returned it", (s) =>
      rawString(s.raw[Streams.addedFields.search]),
    ),
    fetchedAt(),
    raw(),
  ],
}

const contacts = defineStream({
  stream: Streams.streams.contacts,
  table: contactsTable,
  key: (record) => stripNul(record.match_id),
  children: [
    child<Contact.Contact, Contact.PhoneNumber>({
      name: "contact_phones",
      doc: "one row per entry of a contact's phone_numbers, replaced whenever the contact is",
      list: "phone_numbers",
      items: (record) => record.phone_numbers,
      columns: [
        column("type", "text", "work_hq, work_branch, work or mobile", (s) => s.item.type),
        column("value", "text", "the number as sent", (s) => s.item.value),
      ],
    }),
  ],
})

type CompanySource = Source<CompanyTechnologies.CompanyTechnologies>

const companiesTable: Table<CompanySource> = {
  name: "companies",
  doc: "one row per company with technographics, keyed by the provider's company id",
  primaryKey: ["company_id"],
  columns: [
    column("company_id", "bigint", "the provider's company id", (s) => s.record.company_id, {
      notNull: true,
    }),
    ...companyNaming(),
    column("is_international", "boolean", "", (s) => rawBoolean(s.raw.is_international)),
    column("verified", "boolean", "", (s) => rawBoolean(s.raw.verified)),
    column("linkedin_url", "text", "", (s) => s.record.company?.linkedin_url),
    column("naics_codes", "text[]", "", (s) => s.record.company?.naics_codes),
    column("sic_codes", "text[]", "", (s) => s.record.company?.sic_codes),
    column("revenue", "numeric", "revenue in $M", (s) => s.record.company?.revenue),
    column("actual_revenue", "numeric", "reported revenue in $M", (s) => s.record.company?.actual_revenue),
    column(
      "predicted_revenue",
      "numeric",
      "modelled revenue in $M",
      (s) => s.record.company?.predicted_revenue,
    ),
    column("revenue_range", "text", "", (s) => s.record.company?.revenue_range),
    column("size", "bigint", "employees", (s) => s.record.company?.size),
    column("size_range", "text", "", (s) => s.record.company?.size_range),
    fetchedAt(),
    raw(),
  ],
}

const companies = defineStream({
  stream: Streams.streams.companies,
  table: companiesTable,
  key: (record) => String(record.company_id),
  children: [
    child<CompanyTechnologies.CompanyTechnologies, CompanyTechnologies.Technology>({
      name: "company_technologies",
      doc: "one row per technology of a company, replaced whenever the company is",
      list: "technologies",
      items: (record) => record.technologies,
      columns: [
        column("category", "text", "", (s) => s.item.category),
        column("subcategory", "text", "", (s) => s.item.subcategory),
        column("product", "text", "", (s) => s.item.product),
        column("vendor", "text", "", (s) => s.item.vendor),
        column(
          "in_use",
          "boolean",
          "false when the provider says the company no longer uses it",
          (s) => s.item.in_use,
        ),
      ],
    }),
  ],
})

const taxonomyCategoriesTable: Table<Source<Taxonomy.Category>> = {
  name: "taxonomy_categories",
  doc: "the technology categories and their subcategories",
  primaryKey: ["category"],
  columns: [
    column("category", "text", "", (s) => s.record.category, { notNull: true }),
    column("subcategories", "text[]", "", (s) => s.record.subcategories),
    raw(),
  ],
}

const taxonomyCategories = defineStream({
  stream: Streams.streams.taxonomy_categories,
  table: taxonomyCategoriesTable,
  key: (record) => stripNul(record.category),
})

const taxonomyProductsTable: Table<Source<Taxonomy.Product>> = {
  name: "taxonomy_products",
  doc: "the technology products, keyed by product and vendor",
  primaryKey: ["product", "vendor_key"],
  columns: [
    column("product", "text", "", (s) => s.record.product, { notNull: true }),
    column(
      "vendor_key",
      "text",
      "vendor, or '' when there is none (a key column cannot be null)",
      (s) => s.record.vendor ?? "",
      { notNull: true },
    ),
    column("vendor", "text", "", (s) => s.record.vendor),
    column("category", "text", "", (s) => s.record.category),
    column("subcategory", "text", "", (s) => s.record.subcategory),
    raw(),
  ],
}

const taxonomyProducts = defineStream({
  stream: Streams.streams.taxonomy_products,
  table: taxonomyProductsTable,
  key: (record) => `${stripNul(record.product)}\u0000${stripNul(record.vendor ?? "")}`,
})

/** Every stream's tables, by stream name: one entry per stream of the registry, no more. */
export const mappings: { readonly [Name in Streams.StreamName]: StreamMapping<Name> } = {
  taxonomy_categories: taxonomyCategories,
  taxonomy_products: taxonomyProducts,
  contacts,
  companies,
}

/** The tables of a stream named in the input, if the registry has it. */
export const mappingOf = (stream: string): StreamMapping | undefined =>
  Streams.isStreamName(stream) ? mappings[stream] : undefined

/** Every stream's tables, in the registry's order. */
export const allMappings: ReadonlyArray<StreamMapping> = Streams.names.map((name) => mappings[name])

/** Every table the streams land in (each stream's table, then its children), in that order. */
export const allTables: ReadonlyArray<TableShape> = allMappings.flatMap((mapping) => [
  mapping.table,
  ...mapping.children.map((childMapping) => childMapping.table),
])

/** A stream's one child table; checked as the module loads, so a change that breaks it fails every test. */
const onlyChild = (mapping: StreamMapping): TableShape => {
  const [first, ...others] = mapping.children
  if (first === undefined || others.length > 0)
    throw new Error(`stream ${mapping.stream} should have exactly one child table`)
  return first.table
}

/** The tables other code names (the views, the benchmarks), taken from the descriptions above. */
export const named = {
  contacts: contacts.table,
  contactPhones: onlyChild(contacts),
  companies: companies.table,
  companyTechnologies: onlyChild(companies),
}
