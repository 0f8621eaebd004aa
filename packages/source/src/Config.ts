/**
 * The source's JSON config: how to reach the provider, the run's credit ceiling, and what each
 * stream reads. One Schema is the single source of truth: it decodes (and rejects, with the path
 * of the bad field) the user's file, and it renders the spec's connectionSpecification.
 */
import { FieldPaths, Streams } from "@salesintel/airbyte"
import { AdaptiveConcurrency, Connection, Filters, ParseIssue } from "@salesintel/core"
import * as Either from "effect/Either"
import * as ParseResult from "effect/ParseResult"
import * as Schema from "effect/Schema"
import { AllowanceConfig } from "./Allowance.ts"
import * as ConfigTypos from "./ConfigTypos.ts"
import { MarketConfig } from "./Market.ts"
import * as Identity from "./streams/contacts/Identity.ts"

/** One message for a number field, whatever is wrong with the value (a string, a fraction, -1). */
const wholeNumber = (what: string) => ({
  message: (issue: ParseResult.ParseIssue) => ({
    message: `Expected ${what}, actual ${JSON.stringify(issue.actual)}`,
    override: true,
  }),
})
const PositiveInt = Schema.Int.pipe(Schema.positive())
const NonNegativeInt = Schema.Int.pipe(Schema.nonNegative())

/** What a list field expects when the value given is not a list at all (`"a@b.com"` for `["a@b.com"]`). */
const listOf = <S extends Schema.Schema.Any>(item: S, what: string, example: string) =>
  Schema.Array(item).annotations({
    message: (issue: ParseResult.ParseIssue) =>
      `Expected a list of ${what}, such as ${example}, actual ${JSON.stringify(issue.actual)}`,
  })

// A NUL is refused in its own words first (Filters.FilterText): the pattern's would not say why.
const Email = Filters.FilterText.pipe(
  Schema.pattern(/^[^\s@,]+@[^\s@,]+\.[^\s@,]+$/, {
    message: () => "an email address such as jane@example.com",
  }),
)

const SearchName = Schema.String.pipe(
  Schema.pattern(/^[A-Za-z0-9_.-]{1,64}$/, {
    message: () => "a name of 1 to 64 letters, digits, '_', '.' or '-' (it keys the search's state)",
  }),
)

const RefreshAfterDays = NonNegativeInt.annotations({
  description:
    "Re-buy a record once it is this many days old or older (0: on every run); left out, a record is bought once.",
  ...wholeNumber("a whole number of days, 0 or more (0: bought again on every run), such as 30"),
})

/** The streams whose config section takes `exclude_fields`. */
export type ExcludingStream = "contacts" | "companies"

const keyFields = (stream: ExcludingStream): ReadonlySet<string> => {
  const entry = Streams.streams[stream]
  return new Set([...entry.primaryKey.map((path) => path.join(".")), ...(entry.cursorField ?? [])])
}

/**
 * The fields a stream's `exclude_fields` may name: every field its record Schema declares (dotted
 * for nested ones), but its primary key and cursor. The spec offers the same list.
 */
export const excludableFields = (stream: ExcludingStream): ReadonlyArray<string> => {
  const keys = keyFields(stream)
  return [...FieldPaths.declaredPaths(Streams.streams[stream].jsonSchema)].filter((path) => !keys.has(path))
}

/**
 * Fields a stream's records leave out (personal data, say), named as the provider sends them and
 * dotted for nested fields. Checked against the fields the stream's record Schema declares, so a
 * typo is an error instead of a field silently kept; the key and the cursor cannot be left out.
 */
const ExcludeFields = (stream: ExcludingStream) => {
  const allowed = new Set(excludableFields(stream))
  const keys = keyFields(stream)
  const problemOf = (name: string): string | undefined =>
    keys.has(name)
      ? `"${name}" keys the ${stream} stream (primary key or cursor) and cannot be excluded`
      : allowed.has(name)
        ? undefined
        : `"${name}" is not a field of ${stream} records (names as the provider sends them, dotted for nested fields, e.g. company.revenue or addresses.street_1)`
  return Schema.Array(Schema.String).pipe(
    Schema.filter((names) =>
      names.flatMap((name, index) => {
        const problem = problemOf(name)
        return problem === undefined
          ? []
          : [new ParseResult.Pointer(index, names, new ParseResult.Type(Schema.String.ast, name, problem))]
      }),
    ),
  )
}

/** A known contact as the config gives it: its fields, which must make exactly one identity. */
const KnownEntry = Schema.Struct({
  email: Schema.optional(Schema.String),
  first_name: Schema.optional(Schema.String),
  last_name: Schema.optional(Schema.String),
  company_domain: Schema.optional(Schema.String),
  linkedin_url: Schema.optional(Schema.String),
  match_id: Schema.optional(Schema.String),
}).pipe(
  Schema.filter((entry) =>
    Either.match(Identity.fromFields(entry), { onLeft: (problem) => problem, onRight: () => true }),
  ),
)

const FilePath = Schema.String.pipe(
  Schema.pattern(/\.(csv|ndjson|jsonl)$/i, {
    message: () => "a path to a .csv, .ndjson or .jsonl file (its format is told by its extension)",
  }),
)

const Query = Schema.String.pipe(
  Schema.filter((sql) => sql.trim().length > 0 || "a SQL query such as select email from crm.people"),
)

export const ContactSearch = Schema.Struct({
  name: SearchName,
  // Refused here, before anything is created or bought, rather than by the provider's server
  // (HTTP 414 or 431) once a run has begun.
  filters: Filters.PeopleFilters.pipe(Schema.filter((filters) => Filters.tooLong(filters) ?? true)),
})
export type ContactSearch = typeof ContactSearch.Type

export const ContactsConfig = Schema.Struct({
  /** Named searches, each a set of 4.1 filters; read whole through partitions past 10,000. */
  searches: Schema.optionalWith(
    listOf(
      ContactSearch,
      "searches, each a name and its filters",
      '[{"name": "it-vps", "filters": {"job_levels": ["vp"]}}]',
    ),
    { default: () => [] },
  ),
  /** Known contacts to enrich by email (work or personal). */
  emails: Schema.optionalWith(listOf(Email, "email addresses", '["jane@example.com"]'), {
    default: () => [],
  }),
  /**
   * Known contacts to enrich, each identified by exactly one of: email; first_name + last_name +
   * company_domain; linkedin_url; match_id (streams/contacts/Identity.ts).
   */
  known: Schema.optionalWith(
    listOf(
      KnownEntry,
      "known contacts, each identified by email, first_name + last_name + company_domain, linkedin_url or match_id",
      '[{"email": "jane@example.com"}, {"first_name": "Dana", "last_name": "Reyes", "company_domain": "acme.com"}]',
    ),
    { default: () => [] },
  ),
  /** A CSV (header row) or NDJSON file of known contacts, its columns named as `known`'s fields. */
  known_file: Schema.optional(FilePath),
  /** Under `salesintel sync`: a SQL query on the target's database whose columns are named as `known`'s fields. */
  known_query: Schema.optional(Query),
  /** Match emails against past jobs too; the provider's default is true. */
  match_on_job_history: Schema.optionalWith(Schema.Boolean, { default: () => true }),
  refresh_after_days: Schema.optional(RefreshAfterDays),
  exclude_fields: Schema.optionalWith(ExcludeFields("contacts"), { default: () => [] }),
}).pipe(
  Schema.filter((contacts) => {
    const names = contacts.searches.map((search) => search.name)
    const duplicate = names.find((name, index) => names.indexOf(name) !== index)
    return duplicate === undefined || `search names must be unique; "${duplicate}" is used twice`
  }),
)
export type ContactsConfig = typeof ContactsConfig.Type

export const CompaniesConfig = Schema.Struct({
  domains: Schema.optionalWith(Filters.CommaList, { default: () => [] }),
  names: Schema.optionalWith(Filters.CommaList, { default: () => [] }),
  /** A CSV (header row) or NDJSON file of companies: a `domain` column, a `name` column, or both. */
  domains_file: Schema.optional(FilePath),
  /** Under `salesintel sync`: a SQL query on the target's database with a `domain` column, a `name` column, or both. */
  domains_query: Schema.optional(Query),
  /** Also the companies of the contacts held (by their company domain, each once). */
  from_contacts: Schema.optionalWith(Schema.Boolean, { default: () => false }),
  tech_category: Schema.optional(Filters.TildeList),
  tech_subcategory: Schema.optional(Filters.TildeList),
  tech_product: Schema.optional(Filters.TildeList),
  tech_vendor: Schema.optional(Filters.TildeList),
  is_international: Schema.optional(Schema.Boolean),
  verified: Schema.optional(Schema.Boolean),
  refresh_after_days: Schema.optional(RefreshAfterDays),
  exclude_fields: Schema.optionalWith(ExcludeFields("companies"), { default: () => [] }),
})
export type CompaniesConfig = typeof CompaniesConfig.Type

export const TaxonomyConfig = Schema.Struct({
  products: Schema.optionalWith(Filters.TildeList, { default: () => [] }),
  vendors: Schema.optionalWith(Filters.TildeList, { default: () => [] }),
  /** Read the whole product taxonomy (every letter and digit as a term) instead of given terms. */
  full_crawl: Schema.optionalWith(Schema.Boolean, { default: () => false }),
})
export type TaxonomyConfig = typeof TaxonomyConfig.Type

export const SourceConfig = Schema.Struct({
  ...Connection.ConnectionConfig.fields,
  /** Ceiling on credits for the whole run, all streams together. */
  credit_budget: NonNegativeInt.annotations(
    wholeNumber("a whole number of credits, 0 or more, such as 5000"),
  ),
  /**
   * Ceiling on credits per calendar period (UTC) across runs: a run spends at most
   * min(credit_budget, what the period has left) (Allowance.ts).
   */
  credit_allowance: Schema.optional(AllowanceConfig),
  /**
   * The team's market: its own products, its rivals' and its complements' (Market.ts), which
   * `salesintel sync` writes into the target's `market` table for the market views.
   */
  market: Schema.optional(MarketConfig),
  page_size: Schema.optionalWith(
    PositiveInt.pipe(Schema.lessThanOrEqualTo(50)).annotations(wholeNumber("a whole number from 1 to 50")),
    { default: () => 50 },
  ),
  /**
   * The most pages in flight at once. The client keeps as many in flight as the measured latency
   * needs to hold requests_per_minute (rate x latency, with headroom), never more than this; the
   * default covers 2 s of latency at 1,800 a minute.
   */
  concurrency: Schema.optionalWith(
    PositiveInt.pipe(Schema.lessThanOrEqualTo(256)).annotations(wholeNumber("a whole number from 1 to 256")),
    {
      default: () => AdaptiveConcurrency.defaultMaxInFlight,
    },
  ),
  contacts: Schema.optional(ContactsConfig),
  companies: Schema.optional(CompaniesConfig),
  taxonomy: Schema.optional(TaxonomyConfig),
  /**
   * A file `salesintel forget --export` wrote: the people and companies forgotten, as keyed hashes
   * with their key. No read buys one of them (bought/Suppression.ts).
   */
  suppress_file: Schema.optional(Schema.String.pipe(Schema.minLength(1))),
})
export type SourceConfig = typeof SourceConfig.Type

/** The connection part of a source config, as the core's client takes it. */
export const connectionOf = (config: SourceConfig): Connection.ConnectionConfig => ({
  api_key: config.api_key,
  base_url: config.base_url,
  timeout_ms: config.timeout_ms,
  credited_timeout_ms: config.credited_timeout_ms,
  retry: config.retry,
  requests_per_minute: config.requests_per_minute,
})

/** A config that does not decode: every problem with its path, and never the key's value. */
export class ConfigError extends Error {
  readonly _tag = "ConfigError"
  constructor(readonly problems: ReadonlyArray<{ readonly path: string; readonly message: string }>) {
    super(
      `invalid config: ${problems
        .slice(0, 10)
        .map((p) => `${p.path || "(root)"}: ${p.message}`)
        .join("; ")}${problems.length > 10 ? ` (and ${problems.length - 10} more)` : ""}`,
    )
  }
}

/** The Schema's messages quote the value they saw; for the key, that would print the secret. */
const redactValue = (path: string, message: string, input: unknown): string => {
  if (!path.startsWith("api_key")) return message
  const key =
    typeof input === "object" && input !== null ? (input as Record<string, unknown>).api_key : undefined
  return typeof key === "string" && key.length > 0 ? message.split(key).join("<redacted>") : message
}

export const decode = (input: unknown): Either.Either<SourceConfig, ConfigError> =>
  Schema.decodeUnknownEither(SourceConfig, { errors: "all", onExcessProperty: "error" })(input).pipe(
    Either.mapLeft((error) => {
      const near = new Map(
        ConfigTypos.suggestions(error.issue).map(({ path, field }) => [ParseIssue.formatPath(path), field]),
      )
      const issues = ParseResult.ArrayFormatter.formatErrorSync(error).map((issue) => {
        const path = ParseIssue.formatPath(issue.path)
        const field = issue._tag === "Unexpected" ? near.get(path) : undefined
        const message = field === undefined ? issue.message : `is not a field here; did you mean "${field}"?`
        return { path, message: redactValue(path, message, input) }
      })
      // An optional field is a union with undefined: its "Expected undefined" adds nothing when
      // the field's real problem is reported too. Repeated messages are folded into one.
      const meaningful = issues.filter(
        (issue) =>
          !issue.message.startsWith("Expected undefined") ||
          !issues.some(
            (other) =>
              other !== issue &&
              other.path.startsWith(issue.path) &&
              !other.message.startsWith("Expected undefined"),
          ),
      )
      const unique = meaningful.filter(
        (issue, index) =>
          meaningful.findIndex((o) => o.path === issue.path && o.message === issue.message) === index,
      )
      return new ConfigError(unique)
    }),
  )
