/**
 * The table descriptions: the tables each stream of the registry lands in. Adding a column is
 * adding a line here: the DDL adds it to existing tables (Ddl.ts) and the mapper fills it.
 * `mappings` is keyed by stream name, so a stream of the registry without tables here (or tables
 * for a stream the registry does not have) does not build.
 */
import { Streams } from "@salesintel/airbyte"
import type { CompanyTechnologies, Contact, Taxonomy } from "@salesintel/core"
import * as Location from "./Location.ts"
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
  column<Source<R>>(
    "company_name",
    "text",
    "the company's name",
    (s) => s.record.company_name ?? s.record.company?.name,
  ),
  column<Source<R>>(
    "company_domains",
    "text[]",
    "the company's web domains",
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
    column("first_name", "text", "first name", (s) => s.record.first_name),
    column("last_name", "text", "last name", (s) => s.record.last_name),
    column("email", "text", "work email", (s) => s.record.email),
    column("personal_email", "text", "personal email address", (s) => s.record.personal_email),
    column("job_title", "text", "job title as the provider writes it", (s) => s.record.job_title),
    column(
      "job_level",
      "text",
      "job level code (brd, chf, vp, dir, mgr, stf): labels in job_levels",
      (s) => s.record.job_level,
    ),
    column(
      "job_department",
      "text",
      "job department code (fnad, hr, it_is, lgl, mrkt, ops, prc, enrd, sale, other): labels in job_departments",
      (s) => s.record.job_department,
    ),
    column(
      "location",
      "text",
      "the contact's own location as the provider sends it (City, Region, Country)",
      (s) => s.record.location,
    ),
    column(
      "location_city",
      "text",
      "the city part of location, when the string has one",
      (s) => Location.parse(s.record.location).city,
    ),
    column(
      "location_region",
      "text",
      "the state or region part of location (e.g. CA), when the string has one",
      (s) => Location.parse(s.record.location).region,
    ),
    column(
      "location_country",
      "text",
      "the country part of location (e.g. US), when the string has one",
      (s) => Location.parse(s.record.location).country,
    ),
    column(
      "location_type",
      "text",
      "where the contact works: hq, branch or remote (hq also when the provider knows no better)",
      (s) => s.record.location_type,
    ),
    column(
      "position_location_id",
      "bigint",
      "the company site the contact works at (company_sites.location_id); null for remote contacts",
      (s) => s.record.position_location_id,
    ),
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
    // The nested company block first, its flat copies (company_size, ...) where it is missing.
    column(
      "company_size",
      "bigint",
      "the company's employee count",
      (s) => s.record.company?.size ?? s.record.company_size,
    ),
    column(
      "company_size_range",
      "text",
      "the company's employee count band as the provider labels it (e.g. 1000-4999)",
      (s) => s.record.company?.size_range ?? s.record.company_size_range,
    ),
    column(
      "company_revenue",
      "numeric",
      "the company's annual revenue, in $M (the unit of the revenue filters)",
      (s) => s.record.company?.revenue ?? s.record.company_revenue,
    ),
    column(
      "company_revenue_range",
      "text",
      "the company's revenue band as the provider labels it (e.g. $100M - $500M)",
      (s) => s.record.company?.revenue_range ?? s.record.company_revenue_range,
    ),
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
    child<Contact.Contact, Contact.SocialProfile>({
      name: "contact_social_profiles",
      doc: "one row per entry of a contact's social_profiles (LinkedIn, Facebook, Twitter), replaced whenever the contact is",
      list: "social_profiles",
      items: (record) => record.social_profiles,
      columns: [
        column("type", "text", "linkedin, facebook or twitter", (s) => s.item.type),
        column("url", "text", "the profile's URL as sent (often without a scheme)", (s) => s.item.url),
      ],
    }),
    child<Contact.Contact, Contact.Address>({
      name: "company_sites",
      doc: "one row per company site (HQ or branch) named in contacts' addresses, keyed by location_id; contacts join through position_location_id",
      list: "addresses",
      items: (record) => record.addresses,
      key: ["location_id"],
      columns: [
        column(
          "location_id",
          "bigint",
          "the provider's site id (contacts.position_location_id)",
          (s) => s.item.location_id,
        ),
        column(
          "company_id",
          "bigint",
          "the company the site belongs to (companies.company_id)",
          (s) => s.parent.record.company_id ?? s.parent.record.company?.id,
        ),
        column("is_hq", "boolean", "true for the company's headquarters", (s) => s.item.is_hq),
        column("type", "text", "the provider's site type (hq, branch)", (s) => s.item.type),
        column("street_1", "text", "street address, first line", (s) => s.item.street_1),
        column("street_2", "text", "street address, second line", (s) => s.item.street_2),
        column("city", "text", "city", (s) => s.item.city),
        column("state", "text", "state or region code", (s) => s.item.state),
        column("zip", "text", "ZIP or postal code", (s) => s.item.zip),
        column("country", "text", "country code", (s) => s.item.country),
        // What a site's newer-wins test reads: a contact fetched earlier never replaces it (Merge.ts).
        column(
          "fetched_at",
          "timestamptz",
          "when the source fetched the contact record that listed the site",
          (s) => isoFromRaw(s.parent.raw[Streams.addedFields.fetchedAt]),
        ),
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
    column(
      "is_international",
      "boolean",
      "true for a company outside the US (as the is_international filter means it)",
      (s) => s.record.is_international,
    ),
    column(
      "verified",
      "boolean",
      "true when the company's details are human verified, false when machine verified",
      (s) => s.record.verified,
    ),
    column("linkedin_url", "text", "the company's LinkedIn page", (s) => s.record.company?.linkedin_url),
    column(
      "naics_codes",
      "text[]",
      "the company's NAICS industry codes",
      (s) => s.record.company?.naics_codes,
    ),
    column("sic_codes", "text[]", "the company's SIC industry codes", (s) => s.record.company?.sic_codes),
    column("revenue", "numeric", "revenue in $M", (s) => s.record.company?.revenue),
    column("actual_revenue", "numeric", "reported revenue in $M", (s) => s.record.company?.actual_revenue),
    column(
      "predicted_revenue",
      "numeric",
      "modelled revenue in $M",
      (s) => s.record.company?.predicted_revenue,
    ),
    column(
      "revenue_range",
      "text",
      "revenue band as the provider labels it (e.g. $100M - $500M)",
      (s) => s.record.company?.revenue_range,
    ),
    column("size", "bigint", "employee count", (s) => s.record.company?.size),
    column(
      "size_range",
      "text",
      "employee count band as the provider labels it (e.g. 1000-4999)",
      (s) => s.record.company?.size_range,
    ),
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
        column(
          "category",
          "text",
          "technology category (taxonomy_categories.category)",
          (s) => s.item.category,
        ),
        column("subcategory", "text", "technology subcategory", (s) => s.item.subcategory),
        column("product", "text", "product (taxonomy_products.product)", (s) => s.item.product),
        column("vendor", "text", "the product's vendor", (s) => s.item.vendor),
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
    column(
      "category",
      "text",
      "technology category, as the tech_category filter takes it",
      (s) => s.record.category,
      {
        notNull: true,
      },
    ),
    column(
      "subcategories",
      "text[]",
      "its subcategories, as tech_subcategory takes them",
      (s) => s.record.subcategories,
    ),
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
    column("product", "text", "product, as the tech_product filter takes it", (s) => s.record.product, {
      notNull: true,
    }),
    column(
      "vendor_key",
      "text",
      "vendor, or '' when there is none (a key column cannot be null)",
      (s) => s.record.vendor,
      { notNull: true },
    ),
    column("vendor", "text", "vendor, as the tech_vendor filter takes it (NULL when there is none)", (s) =>
      s.record.vendor === "" ? null : s.record.vendor,
    ),
    column("category", "text", "the product's technology category", (s) => s.record.category),
    column("subcategory", "text", "the product's technology subcategory", (s) => s.record.subcategory),
    raw(),
  ],
}

const taxonomyProducts = defineStream({
  stream: Streams.streams.taxonomy_products,
  table: taxonomyProductsTable,
  key: (record) => `${stripNul(record.product)}\u0000${stripNul(record.vendor)}`,
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

/** A stream's child table by name; checked as the module loads, so a change that breaks it fails every test. */
const childNamed = (mapping: StreamMapping, name: string): TableShape => {
  const found = mapping.children.find((candidate) => candidate.table.name === name)
  if (found === undefined) throw new Error(`stream ${mapping.stream} has no child table ${name}`)
  return found.table
}

/** The tables other code names (the views, the benchmarks), taken from the descriptions above. */
export const named = {
  contacts: contacts.table,
  contactPhones: childNamed(contacts, "contact_phones"),
  contactSocialProfiles: childNamed(contacts, "contact_social_profiles"),
  companySites: childNamed(contacts, "company_sites"),
  companies: companies.table,
  companyTechnologies: childNamed(companies, "company_technologies"),
}
