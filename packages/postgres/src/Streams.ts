/**
 * The four streams of the source and the tables each lands in. Adding a column is adding a line
 * here: the DDL adds it to existing tables (Ddl.ts) and the mapper fills it.
 */
import { CompanyTechnologies, Contact, Taxonomy } from "@salesintel/core"
import * as FastDecode from "./FastDecode.ts"
import { child, defineStream, type Source, type StreamMapping } from "./Mapping.ts"
import { stripNul } from "./Nul.ts"
import { textOf } from "./RawJson.ts"
import { column, type Table } from "./Table.ts"

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

// The record's text on the input line when there was one (RawJson.ts), else the parsed record.
const raw = <R>() =>
  column<Source<R>>("_raw", "jsonb", "the whole record as received", (s) => textOf(s.raw) ?? s.raw)
const fetchedAt = <R>() =>
  column<Source<R>>("fetched_at", "timestamptz", "when the source fetched the record", (s) =>
    isoFromRaw(s.raw._salesintel_fetched_at),
  )

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
    column("company_name", "text", "", (s) => s.record.company_name ?? s.record.company?.name),
    column("company_domains", "text[]", "", (s) => s.record.company_domains ?? s.record.company?.domains),
    column("created_at", "timestamptz", "the provider's created_date", (s) =>
      isoFromMillis(s.record.dates?.created_date),
    ),
    column("last_modified_at", "timestamptz", "the provider's last_modified_date", (s) =>
      isoFromMillis(s.record.dates?.last_modified_date),
    ),
    column("search", "text", "the configured search that returned it", (s) =>
      rawString(s.raw._salesintel_search),
    ),
    fetchedAt(),
    raw(),
  ],
}

export const contacts: StreamMapping = defineStream({
  stream: "contacts",
  schema: Contact.Contact,
  fast: FastDecode.contact,
  table: contactsTable,
  key: (record) => stripNul(record.match_id),
  children: [
    child<Contact.Contact, Contact.PhoneNumber>({
      table: {
        name: "contact_phones",
        doc: "one row per entry of a contact's phone_numbers, replaced whenever the contact is",
        primaryKey: ["match_id", "position"],
        parent: { table: "contacts", key: "match_id" },
        columns: [
          column("match_id", "text", "contacts.match_id", (s) => s.record.match_id, { notNull: true }),
          column("position", "integer", "0-based position in phone_numbers", (s) => s.position, {
            notNull: true,
          }),
          column("type", "text", "work_hq, work_branch, work or mobile", (s) => s.item.type),
          column("value", "text", "the number as sent", (s) => s.item.value),
        ],
      },
      items: (record) => record.phone_numbers,
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
    column("company_name", "text", "", (s) => s.record.company_name ?? s.record.company?.name),
    column("company_domains", "text[]", "", (s) => s.record.company_domains ?? s.record.company?.domains),
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

export const companies: StreamMapping = defineStream({
  stream: "companies",
  schema: CompanyTechnologies.CompanyTechnologies,
  fast: FastDecode.companyTechnologies,
  table: companiesTable,
  key: (record) => String(record.company_id),
  children: [
    child<CompanyTechnologies.CompanyTechnologies, CompanyTechnologies.Technology>({
      table: {
        name: "company_technologies",
        doc: "one row per technology of a company, replaced whenever the company is",
        primaryKey: ["company_id", "position"],
        parent: { table: "companies", key: "company_id" },
        columns: [
          column("company_id", "bigint", "companies.company_id", (s) => s.record.company_id, {
            notNull: true,
          }),
          column("position", "integer", "0-based position in technologies", (s) => s.position, {
            notNull: true,
          }),
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
      },
      items: (record) => record.technologies,
    }),
  ],
})

export const taxonomyCategories: StreamMapping = defineStream({
  stream: "taxonomy_categories",
  schema: Taxonomy.Category,
  fast: FastDecode.category,
  table: <Table<Source<Taxonomy.Category>>>{
    name: "taxonomy_categories",
    doc: "the technology categories and their subcategories",
    primaryKey: ["category"],
    columns: [
      column<Source<Taxonomy.Category>>("category", "text", "", (s) => s.record.category, { notNull: true }),
      column("subcategories", "text[]", "", (s) => s.record.subcategories),
      raw(),
    ],
  },
  key: (record) => stripNul(record.category),
  children: [],
})

export const taxonomyProducts: StreamMapping = defineStream({
  stream: "taxonomy_products",
  schema: Taxonomy.Product,
  fast: FastDecode.product,
  table: <Table<Source<Taxonomy.Product>>>{
    name: "taxonomy_products",
    doc: "the technology products, keyed by product and vendor",
    primaryKey: ["product", "vendor_key"],
    columns: [
      column<Source<Taxonomy.Product>>("product", "text", "", (s) => s.record.product, { notNull: true }),
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
  },
  key: (record) => `${stripNul(record.product)}\u0000${stripNul(record.vendor ?? "")}`,
  children: [],
})

/** Every stream the loader accepts, by name. */
export const mappings: ReadonlyMap<string, StreamMapping> = new Map(
  [contacts, companies, taxonomyCategories, taxonomyProducts].map((mapping) => [mapping.stream, mapping]),
)
