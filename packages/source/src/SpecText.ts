/**
 * The words of the spec's config form: a title and a description for every field of the config,
 * keyed by the field's dotted path (array items are not a level: `contacts.searches.name`). The
 * Schema (Config.ts) decides what is valid; this says what each field means to the person filling
 * in the form. The filter texts follow interface-spec.md section 4. A test walks the rendered spec
 * and fails on a field without its text here, so a new config field cannot go undescribed.
 */

export interface FieldText {
  readonly title: string
  readonly description: string
}

/** The people-search filters (4.1 and 4.2), by parameter name. */
const peopleFilters: Readonly<Record<string, FieldText>> = {
  company_domain: {
    title: "Company domains",
    description: "Companies by web domain, e.g. example.com (sent comma-separated).",
  },
  company_industries: {
    title: "Company industries (obsolete)",
    description: "Obsolete in the provider's interface: still sent if given, and ignored by the provider.",
  },
  company_location_states: {
    title: "Company states or regions",
    description: "The company's state or region, as ISO abbreviations such as CA or NY.",
  },
  company_location_zipcodes: {
    title: "Company ZIP or postal codes",
    description: "The company's ZIP or postal codes.",
  },
  company_location_zipcodes_distance: {
    title: "Distance around the ZIP codes (miles)",
    description: "Radius in miles around the given ZIP codes; US only.",
  },
  company_max_revenue: {
    title: "Company maximum revenue (millions)",
    description: "Largest annual company revenue, in millions.",
  },
  company_min_revenue: {
    title: "Company minimum revenue (millions)",
    description: "Smallest annual company revenue, in millions; not above the maximum.",
  },
  company_max_size: {
    title: "Company maximum size (employees)",
    description: "Largest company employee count.",
  },
  company_min_size: {
    title: "Company minimum size (employees)",
    description: "Smallest company employee count; not above the maximum.",
  },
  company_naics_codes: { title: "Company NAICS codes", description: "The company's NAICS industry codes." },
  company_sic_codes: { title: "Company SIC codes", description: "The company's SIC industry codes." },
  company_name: {
    title: "Company names",
    description: "Company names, matched case-insensitively by 'contains'.",
  },
  is_international: {
    title: "Located outside the US",
    description:
      "Off: people located in the US; on: outside the US. Left out, the same organization may be returned once per country.",
  },
  location_country_codes: {
    title: "Country codes",
    description: "ISO 3166-1 alpha-2 country codes, such as US or DE.",
  },
  specialties: { title: "Company specialties", description: "Keywords describing a company." },
  verified: {
    title: "Human-verified companies only",
    description:
      "On: company details verified by a person; off: machine verified. Left out, the same organization may be returned more than once.",
  },
  tech_category: {
    title: "Technology categories",
    description:
      "Companies using technologies of these categories (taxonomy values; needs the technology add-on).",
  },
  tech_subcategory: {
    title: "Technology subcategories",
    description:
      "Companies using technologies of these subcategories (taxonomy values; needs the technology add-on).",
  },
  tech_product: {
    title: "Technology products",
    description: "Companies using these products (taxonomy values; needs the technology add-on).",
  },
  tech_vendor: {
    title: "Technology vendors",
    description: "Companies using products of these vendors (taxonomy values; needs the technology add-on).",
  },
  email: {
    title: "Emails",
    description:
      "Work or personal email addresses to match; when used, leave the other filters empty (contacts.emails is the usual way to enrich).",
  },
  matchOnJobHistory: {
    title: "Match emails against past jobs",
    description: "Used with Emails: also match past job positions. The provider's default is on.",
  },
  first_name: { title: "First name", description: "The contact's first name." },
  last_name: { title: "Last name", description: "The contact's last name." },
  job_title: {
    title: "Job titles",
    description: "Job titles or keywords, matched case-insensitively by 'contains'.",
  },
  job_levels: {
    title: "Job levels",
    description:
      "brd board member, chf C-level, vp vice president, dir director, mgr manager, stf other (non-management).",
  },
  job_departments: {
    title: "Job departments",
    description:
      "fnad finance/administrative, hr human resources, it_is IT, lgl legal, mrkt marketing, ops operations, prc procurement, enrd engineering/R&D, sale sales/CS/support, other.",
  },
  match_ids: {
    title: "Match IDs",
    description: "Contact match IDs, typically from a preview, to fetch only those contacts.",
  },
  required_fields: {
    title: "Required fields",
    description:
      "Contacts must have all of these: address, phone, direct_phone (a direct work or mobile line), any_mobile, personal_email, linkedin_url, job_title.",
  },
  is_ev_contact: {
    title: "Email-verified contacts",
    description:
      "The contact's email is verified though the contact may otherwise be machine verified; use with the verified filter.",
  },
  linkedin_url: {
    title: "LinkedIn profile URL",
    description: "The full profile URL, not only its identifier part.",
  },
  mobile_phone: {
    title: "Mobile phone",
    description: "Digits only, no formatting; no country code needed in North America.",
  },
  sort_by: { title: "Sort by", description: "company_name or company_location." },
  sort_direction: { title: "Sort direction", description: "asc or desc." },
}

const excludeFields = (stream: string, example: string): FieldText => ({
  title: "Excluded fields",
  description: `Fields left out of every ${stream} record before it leaves the source (no table, _raw or message has them): names as the provider sends them, dotted for nested fields, e.g. ${example}. A name no ${stream} record has is a config error.`,
})

const refreshAfterDays = (what: string): FieldText => ({
  title: "Refresh after (days)",
  description: `Re-buy a ${what} once it is this many days old or older (0: on every run, once a run); left out, a ${what} is bought once.`,
})

const filterTexts = (prefix: string, names: ReadonlyArray<string>) =>
  Object.fromEntries(names.map((name) => [`${prefix}.${name}`, peopleFilters[name] as FieldText]))

export const fieldTexts: Readonly<Record<string, FieldText>> = {
  api_key: {
    title: "API key",
    description: "Your SalesIntel API key (sent as the X-CB-ApiKey header; never logged).",
  },
  base_url: { title: "API base URL", description: "The API's address." },
  credit_budget: {
    title: "Credit budget",
    description:
      "The most credits one run may spend, all streams together. The run stops before passing it and saves its state.",
  },
  credit_allowance: {
    title: "Credit allowance",
    description:
      'Credits a calendar period (UTC) may spend across runs, beside the per-run credit_budget: a run spends at most min(credit_budget, what the period has left). A run that reaches it ends as a budget stop does (state saved, the rest due once the period renews). In a pipe the period\'s spending travels in the state (each credited stream\'s credit_allowance part); under salesintel sync it comes from the target\'s record of its runs. Example: {"credits": 30000, "per": "month"}.',
  },
  "credit_allowance.credits": {
    title: "Credits per period",
    description: "The most credits all runs of one period may spend together.",
  },
  "credit_allowance.per": {
    title: "Period",
    description: "day, week (from Monday) or month: calendar periods in UTC.",
  },
  market: {
    title: "Market",
    description:
      'Your market, for the views that answer "which accounts are on a rival", "who adopted a complement", "is our share growing": products or vendors as the technology taxonomy names them. salesintel sync checks each name against the taxonomy (the one the target holds, else free lookups) and writes them into the target\'s market table, replacing what it held; without a market section the table is left as it is, so a market changed in SQL holds. Buys nothing. Example: {"ours": ["Marketo Engage"], "rivals": ["HubSpot"], "complements": ["Salesforce Sales Cloud"]}.',
  },
  "market.ours": {
    title: "Our products",
    description: "The team's own products (or vendors), as the taxonomy names them.",
  },
  "market.rivals": {
    title: "Rivals",
    description:
      "Rivals' products (or vendors), as the taxonomy names them; a vendor's name covers every product of it.",
  },
  "market.complements": {
    title: "Complements",
    description: "Products (or vendors) that go with ours, as the taxonomy names them.",
  },
  page_size: { title: "Page size", description: "Records per page, 1 to 50." },
  concurrency: {
    title: "Concurrency",
    description:
      "The most pages in flight at once, 1 to 256. The connector keeps as many in flight as the measured latency of the provider needs to hold requests_per_minute (rate x latency, with headroom), fewer after a 429, never more than this (enough for 2 s of latency at 1,800 a minute by default). Pages in flight are paid for before they are checkpointed: a run killed without warning may buy them again.",
  },
  timeout_ms: {
    title: "Request timeout (ms)",
    description: "Per-request timeout in milliseconds, for free requests (previews, taxonomy).",
  },
  credited_timeout_ms: {
    title: "Credited request timeout (ms)",
    description:
      "Timeout in milliseconds of a credited request (search, append). A credited request that times out may have been charged: it counts as spent and is retried only with a new reservation.",
  },
  requests_per_minute: {
    title: "Requests per minute",
    description:
      "Client-side request rate ceiling, all streams together; the provider allows 1,800 a minute per user.",
  },
  retry: {
    title: "Retry",
    description: "How failed requests that may be retried (429, 5xx, network) are retried.",
  },
  "retry.max_attempts": {
    title: "Maximum attempts",
    description: "Attempts per request in all, the first included (1 to 20); 1 turns retrying off.",
  },
  "retry.initial_delay_ms": {
    title: "Initial delay (ms)",
    description: "The first backoff step; later steps double, each drawn at random below its cap.",
  },
  "retry.max_delay_ms": { title: "Maximum delay (ms)", description: "No backoff step is longer than this." },
  "retry.max_retry_after_ms": {
    title: "Longest Retry-After waited (ms)",
    description:
      "A Retry-After longer than this is not waited out: the request fails instead of stalling the sync. At most 600,000 (10 minutes): the connector declares maxSecondsBetweenMessages 900, so no single wait comes near the platform's heartbeat timeout (while it waits, the read still says so every 30 s).",
  },
  contacts: {
    title: "Contacts",
    description:
      "The contacts stream: named searches, known contacts to enrich, and when to re-buy stale contacts.",
  },
  "contacts.searches": {
    title: "Searches",
    description:
      "Named people searches; each is read whole, split into parts past the provider's 10,000-record depth.",
  },
  "contacts.searches.name": {
    title: "Search name",
    description: "1 to 64 letters, digits, '_', '.' or '-'; unique; it keys the search's state.",
  },
  "contacts.searches.filters": {
    title: "Filters",
    description: "The people-search filters; lists are arrays, and filters left out do not filter.",
  },
  ...filterTexts("contacts.searches.filters", Object.keys(peopleFilters)),
  "contacts.emails": {
    title: "Emails to enrich",
    description: "Known contacts to enrich, by work or personal email address.",
  },
  "contacts.known": {
    title: "Known contacts to enrich",
    description:
      "Known contacts, each identified by exactly one of: email; first_name + last_name + company_domain; linkedin_url; match_id. Each is looked up with the free preview and bought once.",
  },
  "contacts.known.email": { title: "Email", description: "A work or personal email address." },
  "contacts.known.first_name": { title: "First name", description: "With last_name and company_domain." },
  "contacts.known.last_name": { title: "Last name", description: "With first_name and company_domain." },
  "contacts.known.company_domain": {
    title: "Company domain",
    description: "The web domain of the contact's company, with first_name and last_name.",
  },
  "contacts.known.linkedin_url": {
    title: "Profile URL",
    description: "The full profile URL, such as https://www.linkedin.com/in/dana-reyes.",
  },
  "contacts.known.match_id": { title: "Match id", description: "The provider's match id of the contact." },
  "contacts.known_file": {
    title: "File of known contacts",
    description:
      "A .csv (header row) or .ndjson/.jsonl file of known contacts, its columns named as the known contacts' fields. Every row is checked before the first credit.",
  },
  "contacts.known_query": {
    title: "Query of known contacts (salesintel sync only)",
    description:
      "A SQL query run on the target's database, its columns named as the known contacts' fields, e.g. select email from crm.people. Only `salesintel sync` has a database: the source alone refuses it.",
  },
  "contacts.match_on_job_history": {
    title: "Match emails against past jobs",
    description: "Match the emails against past job positions too.",
  },
  "contacts.refresh_after_days": refreshAfterDays("contact"),
  "contacts.exclude_fields": excludeFields("contacts", "personal_email, phone_numbers or company.revenue"),
  companies: {
    title: "Companies",
    description: "The companies stream: technographics appended to companies by domain or name.",
  },
  "companies.domains": {
    title: "Company domains",
    description: "Companies to append technologies to, by web domain (recommended).",
  },
  "companies.names": {
    title: "Company names",
    description: "Companies to append technologies to, by name (matched case-insensitively by 'contains').",
  },
  "companies.domains_file": {
    title: "File of companies",
    description:
      "A .csv (header row) or .ndjson/.jsonl file of companies: a domain column, a name column, or both. Every row is checked before the first credit.",
  },
  "companies.domains_query": {
    title: "Query of companies (salesintel sync only)",
    description:
      "A SQL query run on the target's database with a domain column, a name column, or both, e.g. select domain from crm.accounts. Only `salesintel sync` has a database: the source alone refuses it.",
  },
  "companies.from_contacts": {
    title: "The companies of your contacts",
    description:
      "Also append technologies to the company of every contact the sync holds (bought by this run or before), by its company domain, each company once, after the contacts and within the credit budget. Kept fresh by refresh_after_days like any company.",
  },
  ...filterTexts("companies", [
    "tech_category",
    "tech_subcategory",
    "tech_product",
    "tech_vendor",
    "is_international",
    "verified",
  ]),
  "companies.refresh_after_days": refreshAfterDays("company"),
  "companies.exclude_fields": excludeFields("companies", "company.revenue or technologies.in_use"),
  taxonomy: {
    title: "Taxonomy",
    description: "The taxonomy streams: product and vendor terms, or a full crawl of the product taxonomy.",
  },
  "taxonomy.products": {
    title: "Product terms",
    description: "Product terms to look up, matched case-insensitively by 'contains'.",
  },
  "taxonomy.vendors": {
    title: "Vendor terms",
    description: "Vendor terms to look up, matched case-insensitively by 'contains'.",
  },
  "taxonomy.full_crawl": {
    title: "Full crawl",
    description:
      "Read the whole product taxonomy (every letter and digit as a term) instead of the given terms.",
  },
  suppress_file: {
    title: "Suppression file",
    description:
      "A file written by `salesintel forget --export`: the people and companies forgotten, as keyed hashes. No contact or company in it is bought.",
  },
}
