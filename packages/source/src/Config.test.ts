import * as Either from "effect/Either"
import { describe, expect, it } from "vitest"
import * as Config from "./Config.ts"

/** The config of the issue, verbatim: it must be accepted as it stands. */
const issueConfig = {
  api_key: "sandbox-full",
  base_url: "http://127.0.0.1:8787",
  credit_budget: 5000,
  contacts: {
    searches: [{ name: "it-vps", filters: { job_departments: ["it_is"], job_levels: ["vp"] } }],
    refresh_after_days: 30,
  },
  companies: { domains: ["example.com"] },
  taxonomy: { products: ["cloud"], vendors: ["micro"] },
}

const problemsOf = (input: unknown) =>
  Either.match(Config.decode(input), { onLeft: (error) => error.problems, onRight: () => [] })

describe("Config.decode", () => {
  it("accepts the documented example with defaults filled in", () => {
    const config = Either.getOrThrow(Config.decode(issueConfig))
    expect(config.page_size).toBe(50)
    expect(config.concurrency).toBe(64)
    expect(config.requests_per_minute).toBe(1800)
    expect(config.contacts?.searches[0]?.filters.job_levels).toEqual(["vp"])
    expect(config.contacts?.match_on_job_history).toBe(true)
    expect(config.companies?.names).toEqual([])
    expect(config.taxonomy?.full_crawl).toBe(false)
    expect(String(config.api_key)).not.toContain("sandbox-full")
  })

  it("accepts a config that leaves streams out", () => {
    expect(problemsOf({ api_key: "k", credit_budget: 0 })).toEqual([])
  })

  it("names the path of every bad field and what was expected", () => {
    const problems = problemsOf({
      ...issueConfig,
      credit_budget: -5,
      page_size: 80,
      contacts: { searches: [{ name: "x", filters: { job_levels: ["ceo"], company_name: ["A, B"] } }] },
    })
    expect(problems.map((p) => p.path)).toEqual([
      "credit_budget",
      "page_size",
      "contacts.searches[0].filters.company_name[0]",
      "contacts.searches[0].filters.job_levels[0]",
    ])
    expect(problems.find((p) => p.path.endsWith("job_levels[0]"))?.message).toBe(
      'Expected one of brd, chf, vp, dir, mgr, stf, actual "ceo"',
    )
    expect(problems.find((p) => p.path === "page_size")?.message).toContain("a whole number from 1 to 50")
  })

  it("refuses a NUL in every filter value, naming the field, before anything is sent", () => {
    const nul = "\u0000"
    const problems = problemsOf({
      ...issueConfig,
      contacts: {
        searches: [
          {
            name: "a",
            filters: {
              company_name: ["Acme", `Acme${nul} Inc`],
              first_name: `Dana${nul}`,
              linkedin_url: `https://www.linkedin.com/in/dana${nul}`,
              tech_product: [`${nul}`],
            },
          },
        ],
        emails: [`jane${nul}@example.com`],
      },
      companies: { domains: ["example.com"], names: [`Acme${nul}`] },
      taxonomy: { vendors: [`micro${nul}soft`] },
    })
    expect(problems).toEqual([
      ...[
        ["contacts.searches[0].filters.company_name[1]", '"Acme\\u0000 Inc"'],
        ["contacts.searches[0].filters.tech_product[0]", '"\\u0000"'],
        ["contacts.searches[0].filters.first_name", '"Dana\\u0000"'],
        ["contacts.searches[0].filters.linkedin_url", '"https://www.linkedin.com/in/dana\\u0000"'],
        ["contacts.emails[0]", '"jane\\u0000@example.com"'],
        ["companies.names[0]", '"Acme\\u0000"'],
        ["taxonomy.vendors[0]", '"micro\\u0000soft"'],
      ].map(([path, shown]) => ({
        path,
        message: `a value without a NUL character (U+0000), actual ${shown}: remove it`,
      })),
    ])
    // The message never carries the NUL itself to the terminal.
    expect(problems.some((problem) => problem.message.includes(nul))).toBe(false)
  })

  it("says what a list or a number field expects, in the user's words, not the Schema's types", () => {
    const problems = problemsOf({
      api_key: "k",
      credit_budget: "100",
      contacts: {
        searches: [{ name: "a", filters: { job_levels: "vp" } }],
        emails: "jane@example.com",
      },
      taxonomy: { products: "cloud" },
    })
    const messageAt = (path: string) => problems.find((p) => p.path === path)?.message
    expect(messageAt("credit_budget")).toBe(
      'Expected a whole number of credits, 0 or more, such as 5000, actual "100"',
    )
    expect(messageAt("contacts.searches[0].filters.job_levels")).toBe(
      'Expected a list of codes (brd, chf, vp, dir, mgr, stf), such as ["brd"], actual "vp"',
    )
    expect(messageAt("contacts.emails")).toBe(
      'Expected a list of email addresses, such as ["jane@example.com"], actual "jane@example.com"',
    )
    expect(messageAt("taxonomy.products")).toBe(
      'Expected a list of values, such as ["a", "b"], actual "cloud"',
    )
    for (const problem of problems) expect(problem.message).not.toMatch(/ReadonlyArray|CommaListItem|Int &/)
  })

  it("refuses, before any request, filters the provider would refuse: named by their path", () => {
    const problems = problemsOf({
      ...issueConfig,
      contacts: {
        searches: [
          { name: "near", filters: { company_location_zipcodes_distance: 50 } },
          { name: "one", filters: { linkedin_url: "dana-reyes-1234567" } },
        ],
      },
    })
    expect(problems.map((p) => p.path)).toEqual([
      "contacts.searches[0].filters.company_location_zipcodes_distance",
      "contacts.searches[1].filters.linkedin_url",
    ])
    expect(problems[0]?.message).toContain("give company_location_zipcodes too")
    expect(problems[1]?.message).toContain(
      'full profile URL such as https://www.linkedin.com/in/dana-reyes, not the identifier part; got "dana-reyes-1234567"',
    )
  })

  it("requires the key and the budget", () => {
    expect(problemsOf({}).map((p) => p.path)).toEqual(["api_key", "credit_budget"])
  })

  it("refuses unknown keys (a typo must not silently drop a setting)", () => {
    expect(problemsOf({ ...issueConfig, credit_budjet: 10 }).map((p) => p.path)).toEqual(["credit_budjet"])
  })

  it("suggests the nearest field for a misspelt one, at every level", () => {
    const problems = problemsOf({
      ...issueConfig,
      credit_budjet: 10,
      retry: { max_attempt: 2 },
      contacts: { refresh_after_day: 3, searches: [{ name: "a", filters: { job_level: ["vp"] } }] },
      companies: { Domains: ["example.com"] },
    })
    expect(problems.map((p) => [p.path, p.message])).toEqual([
      ["credit_budjet", 'is not a field here; did you mean "credit_budget"?'],
      ["retry.max_attempt", 'is not a field here; did you mean "max_attempts"?'],
      ["contacts.refresh_after_day", 'is not a field here; did you mean "refresh_after_days"?'],
      ["contacts.searches[0].filters.job_level", 'is not a field here; did you mean "job_levels"?'],
      ["companies.Domains", 'is not a field here; did you mean "domains"?'],
    ])
    // Nothing near: the fields it could be, as before.
    const [far] = problemsOf({ ...issueConfig, taxonomy: { something_else: true } })
    expect(far?.message).toBe('is unexpected, expected: "products" | "vendors" | "full_crawl"')
  })

  it("takes refresh_after_days 0 (bought again on every run), and says plainly what it takes", () => {
    for (const stream of ["contacts", "companies"] as const) {
      const config = { ...issueConfig, [stream]: { ...issueConfig[stream], refresh_after_days: 0 } }
      expect(Either.getOrThrow(Config.decode(config))[stream]?.refresh_after_days).toBe(0)
      for (const wrong of [-1, 1.5, "30"]) {
        const problems = problemsOf({
          ...issueConfig,
          [stream]: { ...issueConfig[stream], refresh_after_days: wrong },
        })
        expect(problems).toEqual([
          {
            path: `${stream}.refresh_after_days`,
            message: `Expected a whole number of days, 0 or more (0: bought again on every run), such as 30, actual ${JSON.stringify(wrong)}`,
          },
        ])
      }
    }
  })

  it("refuses duplicate search names", () => {
    const search = { name: "same", filters: {} }
    const problems = problemsOf({ ...issueConfig, contacts: { searches: [search, search] } })
    expect(problems[0]?.message).toContain('"same" is used twice')
  })

  it("accepts exclude_fields naming record fields, nested ones dotted", () => {
    const config = Either.getOrThrow(
      Config.decode({
        ...issueConfig,
        contacts: {
          exclude_fields: ["personal_email", "phone_numbers", "company.revenue", "addresses.street_1"],
        },
        companies: { domains: ["example.com"], exclude_fields: ["technologies.in_use"] },
      }),
    )
    expect(config.contacts?.exclude_fields).toHaveLength(4)
    expect(config.companies?.exclude_fields).toEqual(["technologies.in_use"])
    expect(Either.getOrThrow(Config.decode(issueConfig)).contacts?.exclude_fields).toEqual([])
  })

  it("refuses an excluded field no record has, naming it, its place and the stream", () => {
    const problems = problemsOf({
      ...issueConfig,
      contacts: { exclude_fields: ["personal_email", "personal_emial", "company.nonsense"] },
      companies: { exclude_fields: ["phone_numbers"] },
    })
    expect(problems.map((p) => p.path)).toEqual([
      "contacts.exclude_fields[1]",
      "contacts.exclude_fields[2]",
      "companies.exclude_fields[0]",
    ])
    expect(problems[0]?.message).toContain('"personal_emial" is not a field of contacts records')
    expect(problems[2]?.message).toContain('"phone_numbers" is not a field of companies records')
  })

  it("refuses excluding a stream's key or cursor", () => {
    const problems = problemsOf({
      ...issueConfig,
      contacts: { exclude_fields: ["match_id", "_salesintel_fetched_at"] },
      companies: { exclude_fields: ["company_id"] },
    })
    expect(problems.map((p) => p.path)).toEqual([
      "contacts.exclude_fields[0]",
      "contacts.exclude_fields[1]",
      "companies.exclude_fields[0]",
    ])
    expect(problems[0]?.message).toContain("cannot be excluded")
  })

  it("refuses a max_retry_after_ms above ten minutes, naming the field; takes ten minutes itself", () => {
    const longest = { api_key: "k", credit_budget: 1, retry: { max_retry_after_ms: 600_000 } }
    expect(Either.getOrThrow(Config.decode(longest)).retry.max_retry_after_ms).toBe(600_000)
    const tooLong = { ...longest, retry: { max_retry_after_ms: 600_001 } }
    const problems = problemsOf(tooLong)
    expect(problems.map((p) => [p.path, p.message])).toEqual([
      [
        "retry.max_retry_after_ms",
        "Expected the longest Retry-After waited: a whole number of milliseconds from 1 to 600000 (10 minutes), actual 600001",
      ],
    ])
    const message = Either.match(Config.decode(tooLong), { onLeft: (e) => e.message, onRight: () => "" })
    expect(message).toContain("retry.max_retry_after_ms")
  })

  it("refuses any silent wait above ten minutes (a backoff step, a timeout), naming each field", () => {
    const tooLong = {
      api_key: "k",
      credit_budget: 1,
      timeout_ms: 600_001,
      credited_timeout_ms: 3_600_000,
      retry: { max_delay_ms: 600_001 },
    }
    expect(problemsOf(tooLong).map((p) => [p.path, p.message])).toEqual([
      [
        "timeout_ms",
        "Expected a request's timeout: a whole number of milliseconds from 1 to 600000 (10 minutes), actual 600001",
      ],
      [
        "credited_timeout_ms",
        "Expected a credited request's timeout: a whole number of milliseconds from 1 to 600000 (10 minutes), actual 3600000",
      ],
      [
        "retry.max_delay_ms",
        "Expected the longest backoff step: a whole number of milliseconds from 1 to 600000 (10 minutes), actual 600001",
      ],
    ])
    const longest = { api_key: "k", credit_budget: 1, timeout_ms: 600_000, retry: { max_delay_ms: 600_000 } }
    expect(Either.isRight(Config.decode(longest))).toBe(true)
  })

  it("refuses a search whose filters are too long for one request, before anything is sent, saying how to split it", () => {
    const domains = Array.from({ length: 10_000 }, (_, i) => `company-${i}.example.com`)
    const search = (values: ReadonlyArray<string>) => ({
      api_key: "k",
      credit_budget: 1,
      contacts: { searches: [{ name: "accounts", filters: { job_levels: ["vp"], company_domain: values } }] },
    })
    const problems = problemsOf(search(domains))
    expect(problems.map((p) => p.path)).toEqual(["contacts.searches[0].filters"])
    expect(problems[0]?.message).toContain("these filters make a request of 268,916 bytes")
    expect(problems[0]?.message).toContain(
      "past the 7,000 one request can carry (servers answer longer ones with HTTP 414 or 431): company_domain holds 10,000 values; split them across several searches of about 259 each",
    )
    // What it says fits, fits.
    const fit = Number(/of about ([\d,]+) each/.exec(problems[0]?.message ?? "")?.[1]?.replace(",", ""))
    expect(problemsOf(search(domains.slice(0, fit)))).toEqual([])
    expect(problemsOf(search(domains.slice(0, fit + 20)))).toHaveLength(1)
  })

  it("never echoes the key in an error", () => {
    const error = Either.getLeft(Config.decode({ api_key: 12345678, credit_budget: 1 }))
    expect(error._tag).toBe("Some")
    const secret = "sk-very-secret-value"
    const withBadKey = Config.decode({ api_key: secret, credit_budget: "lots", base_url: "ftp://x" })
    const message = Either.match(withBadKey, { onLeft: (e) => e.message, onRight: () => "" })
    expect(message).toContain("credit_budget")
    expect(message).not.toContain(secret)
  })
})
