// Contract tests over real HTTP on 127.0.0.1: every status code, every filter, masking,
// paging limits and credit accounting. Every JSON body is validated against
// spec/openapi.yaml, so the sandbox and the spec cannot drift apart. Filter results are
// checked against an oracle that reads the full records (not the indexes the server uses).
import { readFileSync } from "node:fs"
import { Ajv2020, type ValidateFunction } from "ajv/dist/2020.js"
import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest"
import { parse } from "yaml"
import { Flag } from "./Contacts.ts"
import { appendParams, peopleParams, productsParams } from "./Filters.ts"
import type { CompanyTechnologies, ContactRecord } from "./Records.ts"
import { type Sandbox, startSandbox } from "./Server.ts"

// ---------- OpenAPI validation ----------

interface OpenApiDoc {
  paths: Record<
    string,
    { get: { responses: Record<string, { $ref?: string; content?: Record<string, { schema: unknown }> }> } }
  >
  components: { responses: Record<string, { content: Record<string, { schema: unknown }> }> }
}
const spec = parse(readFileSync(new URL("../../../spec/openapi.yaml", import.meta.url), "utf8")) as OpenApiDoc
const specId = "https://sandbox.local/openapi.json"
const ajv = new Ajv2020({ strict: false, allErrors: true, validateSchema: false, validateFormats: false })
ajv.addSchema({ ...spec, $id: specId })
const validators = new Map<string, ValidateFunction>()

/** The schema the spec declares for (path, status), compiled once. */
const validatorFor = (path: string, status: number): ValidateFunction => {
  const cacheKey = `${path} ${status}`
  const cached = validators.get(cacheKey)
  if (cached) return cached
  const operation = spec.paths[path]?.get
  if (!operation) throw new Error(`spec has no GET ${path}`)
  let response = operation.responses[String(status)]
  if (!response) throw new Error(`spec declares no ${status} for GET ${path}`)
  if (response.$ref) response = spec.components.responses[response.$ref.split("/").pop()!]!
  const schema = response.content?.["application/json"]?.schema as { $ref?: string } | undefined
  if (!schema) throw new Error(`spec has no JSON body for ${status} of GET ${path}`)
  const validate = ajv.compile(schema.$ref ? { $ref: `${specId}${schema.$ref}` } : schema)
  validators.set(cacheKey, validate)
  return validate
}

// ---------- HTTP helpers ----------

let sandbox: Sandbox
const contacts = 20_000
const companies = 2_000

interface Answer<T = unknown> {
  status: number
  body: T
  headers: Headers
}

const call = async <T = Record<string, unknown>>(
  path: string,
  params: Record<string, string | number | boolean> = {},
  key: string | null = "sandbox-full",
  accept: string | null = "application/json",
): Promise<Answer<T>> => {
  const query = new URLSearchParams(Object.entries(params).map(([k, v]) => [k, String(v)])).toString()
  const headers: Record<string, string> = {}
  if (key !== null) headers["X-CB-ApiKey"] = key
  if (accept !== null) headers.Accept = accept
  const res = await fetch(`${sandbox.url}${path}${query ? `?${query}` : ""}`, { headers })
  expect(res.headers.get("content-type")).toBe("application/json")
  const body = (await res.json()) as T
  const validate = validatorFor(path, res.status)
  if (!validate(body))
    throw new Error(`${res.status} body of ${path} breaks the spec: ${ajv.errorsText(validate.errors)}`)
  return { status: res.status, body, headers: res.headers }
}

interface Envelope<T> {
  is_preview: boolean
  page: number
  page_size: number
  result_count: number
  search_results: T[]
}
type People = Envelope<ContactRecord>

const people = (params: Record<string, string | number | boolean>, key = "sandbox-full") =>
  call<People>("/service/people", params, key)
const preview = (params: Record<string, string | number | boolean>, key = "sandbox-full") =>
  call<People>("/service/people/preview", params, key)
const admin = async (path: string, body?: unknown) => {
  const res = await fetch(`${sandbox.url}${path}`, {
    method: body === undefined ? "GET" : "POST",
    body: body === undefined ? undefined : JSON.stringify(body),
  })
  return (await res.json()) as Record<string, unknown>
}
const accountOf = async (key: string) =>
  (
    (await admin("/_sandbox/accounts")).accounts as Record<
      string,
      { credits_charged: number; credits_left: number; requests: Record<string, Record<string, number>> }
    >
  )[key]!

const endpointPaths = [
  "/service/people",
  "/service/people/preview",
  "/service/technologies/append",
  "/service/technologies/taxonomy/categories",
  "/service/technologies/taxonomy/products",
] as const
const minimalParams = (path: string): Record<string, string> =>
  path.endsWith("/products") ? { vendor: "google" } : {}

beforeAll(async () => {
  sandbox = await startSandbox({ seed: 7, contacts, companies })
})
afterAll(async () => {
  await sandbox.close()
})
beforeEach(() => {
  sandbox.reset()
})

// ---------- Oracle: the filters' meaning, read off full records ----------

let allRecords: ContactRecord[] | undefined
const records = (): ContactRecord[] => {
  allRecords ??= Array.from({ length: contacts }, (_, i) => sandbox.dataset.contact(i))
  return allRecords
}
const flagsOf = (r: ContactRecord) => {
  const d = sandbox.dataset
  return d.posFlags[d.indexToPos[d.indexOfMatchId(r.match_id)!]!]!
}
/** The company site a contact is counted under: its position site, else the HQ. */
const siteOf = (r: ContactRecord) => {
  const d = sandbox.dataset
  return d.sites[d.posSite[d.indexToPos[d.indexOfMatchId(r.match_id)!]!]!]!
}
const companyOf = (r: ContactRecord) => sandbox.dataset.companyById(r.company_id)!

const oracle: Record<
  string,
  { params: Record<string, string | number | boolean>; match: (r: ContactRecord) => boolean }
> = {
  company_domain: { params: { company_domain: "" }, match: () => true }, // filled in below
  company_location_states: {
    params: { company_location_states: "ny,TX" },
    match: (r) => ["NY", "TX"].includes(siteOf(r).city.state),
  },
  company_location_zipcodes: {
    params: { company_location_zipcodes: "78701,02110" },
    match: (r) => ["78701", "02110"].includes(siteOf(r).zip),
  },
  company_max_revenue: { params: { company_max_revenue: 20 }, match: (r) => r.company.revenue <= 20 },
  company_min_revenue: { params: { company_min_revenue: 500 }, match: (r) => r.company.revenue >= 500 },
  company_max_size: { params: { company_max_size: 49 }, match: (r) => r.company.size <= 49 },
  company_min_size: {
    params: { company_min_size: 1000, company_max_size: 4999 },
    match: (r) => r.company.size >= 1000 && r.company.size <= 4999,
  },
  company_naics_codes: {
    params: { company_naics_codes: "511210,522110" },
    match: (r) => r.company.naics_codes.some((c) => ["511210", "522110"].includes(c)),
  },
  company_sic_codes: {
    params: { company_sic_codes: "7372" },
    match: (r) => r.company.sic_codes.includes("7372"),
  },
  company_name: {
    params: { company_name: "APEX,willow" },
    match: (r) => /apex|willow/i.test(r.company_name),
  },
  is_international_true: {
    params: { is_international: true },
    match: (r) => siteOf(r).city.country !== "US",
  },
  is_international_false: {
    params: { is_international: false },
    match: (r) => siteOf(r).city.country === "US",
  },
  location_country_codes: {
    params: { location_country_codes: "gb,DE" },
    match: (r) => ["GB", "DE"].includes(siteOf(r).city.country),
  },
  specialties: {
    params: { specialties: "CLOUD,payments" },
    match: (r) => companyOf(r).specialties.some((s) => /cloud|payments/.test(s)),
  },
  verified_true: { params: { verified: true }, match: (r) => (flagsOf(r) & Flag.verified) !== 0 },
  verified_false: { params: { verified: false }, match: (r) => (flagsOf(r) & Flag.verified) === 0 },
  is_ev_contact: {
    params: { is_ev_contact: true, verified: false },
    match: (r) => (flagsOf(r) & Flag.emailVerified) !== 0 && (flagsOf(r) & Flag.verified) === 0,
  },
  tech_category: {
    params: { tech_category: "Finance~Security" },
    match: (r) =>
      sandbox.dataset
        .company(companyOf(r).index)
        .technologies.some((t) => ["Finance", "Security"].includes(t.category)),
  },
  tech_subcategory: {
    params: { tech_subcategory: "crm" },
    match: (r) =>
      sandbox.dataset.company(companyOf(r).index).technologies.some((t) => t.subcategory === "CRM"),
  },
  tech_product: {
    params: { tech_product: "Zendesk~Okta" },
    match: (r) =>
      sandbox.dataset
        .company(companyOf(r).index)
        .technologies.some((t) => ["Zendesk", "Okta"].includes(t.product)),
  },
  tech_vendor: {
    params: { tech_vendor: "Adobe", tech_category: "Marketing" },
    match: (r) =>
      sandbox.dataset
        .company(companyOf(r).index)
        .technologies.some((t) => t.vendor === "Adobe" && t.category === "Marketing"),
  },
  first_name: { params: { first_name: "dana" }, match: (r) => r.first_name === "Dana" },
  last_name: {
    params: { last_name: "REYES", first_name: "Priya" },
    match: (r) => r.last_name === "Reyes" && r.first_name === "Priya",
  },
  job_title: { params: { job_title: "director,VP" }, match: (r) => /director|vp/i.test(r.job_title ?? "") },
  job_levels: { params: { job_levels: "vp,chf" }, match: (r) => ["vp", "chf"].includes(r.job_level) },
  job_departments: {
    params: { job_departments: "it_is,LGL" },
    match: (r) => ["it_is", "lgl"].includes(r.job_department),
  },
  levels_and_departments: {
    params: { job_levels: "mgr", job_departments: "sale", company_location_states: "CA" },
    match: (r) => r.job_level === "mgr" && r.job_department === "sale" && siteOf(r).city.state === "CA",
  },
  required_address: { params: { required_fields: "address" }, match: (r) => r.addresses.length > 0 },
  required_phone: { params: { required_fields: "phone" }, match: (r) => r.phone_numbers.length > 0 },
  required_direct_phone: {
    params: { required_fields: "direct_phone" },
    match: (r) => r.phone_numbers.some((p) => p.type === "work" || p.type === "mobile"),
  },
  required_any_mobile: {
    params: { required_fields: "any_mobile" },
    match: (r) => r.phone_numbers.some((p) => p.type === "mobile"),
  },
  required_personal_email: {
    params: { required_fields: "personal_email" },
    match: (r) => r.personal_email !== null,
  },
  required_linkedin_url: {
    params: { required_fields: "linkedin_url" },
    match: (r) => r.social_profiles.some((s) => s.type === "linkedin"),
  },
  required_job_title: { params: { required_fields: "job_title" }, match: (r) => r.job_title !== null },
  required_and: {
    params: { required_fields: "any_mobile,personal_email,linkedin_url" },
    match: (r) =>
      r.phone_numbers.some((p) => p.type === "mobile") &&
      r.personal_email !== null &&
      r.social_profiles.some((s) => s.type === "linkedin"),
  },
  company_industries_ignored: {
    params: { company_industries: "anything at all", job_levels: "brd" },
    match: (r) => r.job_level === "brd",
  },
}

describe("filters (4.1/4.2): result_count and records agree with an oracle over full records", () => {
  for (const [name, { params }] of Object.entries(oracle)) {
    it(name, async () => {
      const p = { ...params }
      if (name === "company_domain") {
        const first = records()[0]!
        const second = records()[5000]!
        p.company_domain = `${first.company_domains[0]!.toUpperCase()}, ${second.company_domains[0]}`
        oracle.company_domain!.match = (r) => [first.company_id, second.company_id].includes(r.company_id)
      }
      const expected = records().filter((r) => oracle[name]!.match(r))
      const { status, body } = await preview({ ...p, page_size: 50 })
      expect(status).toBe(200)
      expect(body.result_count).toBe(expected.length)
      expect(expected.length).toBeGreaterThan(0)
      const wanted = new Set(expected.map((r) => r.match_id))
      for (const r of body.search_results) expect(wanted.has(r.match_id)).toBe(true)
      // The last reachable page holds the tail of the result set.
      const lastPage = Math.min(Math.ceil(expected.length / 50), 200)
      const tail = await preview({ ...p, page: lastPage })
      for (const r of tail.body.search_results) expect(wanted.has(r.match_id)).toBe(true)
    })
  }

  it("zip radius: contacts at US sites within the distance of a given ZIP", async () => {
    // 02110 (Boston) and 02139 (Cambridge) are ~3 miles apart; New York is ~190 miles away.
    const near = await preview({ company_location_zipcodes: "02110", company_location_zipcodes_distance: 10 })
    const exact = await preview({ company_location_zipcodes: "02110,02139" })
    expect(near.body.result_count).toBe(exact.body.result_count)
    const wide = await preview({
      company_location_zipcodes: "02110",
      company_location_zipcodes_distance: 250,
    })
    expect(wide.body.result_count).toBeGreaterThan(near.body.result_count)
  })

  it("partitions by size range, level, department and state are disjoint and cover the whole", async () => {
    const whole = (await preview({ job_departments: "sale" })).body.result_count
    let sum = 0
    for (const [min, max] of [
      [0, 199],
      [200, 999],
      [1000, 9999],
      [10000, 10_000_000],
    ]) {
      sum += (await preview({ job_departments: "sale", company_min_size: min!, company_max_size: max! })).body
        .result_count
    }
    expect(sum).toBe(whole)
    let byLevel = 0
    for (const level of ["brd", "chf", "vp", "dir", "mgr", "stf"]) {
      byLevel += (await preview({ job_departments: "sale", job_levels: level })).body.result_count
    }
    expect(byLevel).toBe(whole)
  })

  it("email: work, personal and (unless matchOnJobHistory=false) past-job emails", async () => {
    const d = sandbox.dataset
    const withPersonal = records().find((r) => r.personal_email !== null)!
    const work = await people({ email: withPersonal.email.toUpperCase() })
    expect(work.body.search_results.map((r) => r.match_id)).toContain(withPersonal.match_id)
    for (const r of work.body.search_results) {
      const index = d.indexOfMatchId(r.match_id)!
      const past = d.pastJobEmail(index) ?? ""
      expect([r.email, past]).toContain(withPersonal.email)
    }
    const personal = await people({ email: withPersonal.personal_email! })
    expect(personal.body.search_results.map((r) => r.match_id)).toEqual([withPersonal.match_id])

    const mover = records().find((r) => (flagsOf(r) & Flag.pastJob) !== 0)!
    const pastEmail = d.pastJobEmail(d.indexOfMatchId(mover.match_id)!)!
    const withHistory = await people({ email: pastEmail })
    expect(withHistory.body.search_results.map((r) => r.match_id)).toContain(mover.match_id)
    const explicit = await people({ email: pastEmail, matchOnJobHistory: true })
    expect(explicit.body.result_count).toBe(withHistory.body.result_count)
    const withoutHistory = await people({ email: pastEmail, matchOnJobHistory: false })
    expect(withoutHistory.body.search_results.map((r) => r.match_id)).not.toContain(mover.match_id)
    const none = await people({ email: "nobody@nowhere.example" })
    expect(none.body.result_count).toBe(0)
    expect(none.body.search_results).toEqual([])
  })

  it("linkedin_url and mobile_phone find exactly their contact", async () => {
    const r = records().find(
      (c) =>
        c.social_profiles.some((s) => s.type === "linkedin") &&
        c.phone_numbers.some((p) => p.type === "mobile"),
    )!
    const url = `https://www.${r.social_profiles.find((s) => s.type === "linkedin")!.url}/`
    const byUrl = await people({ linkedin_url: url })
    expect(byUrl.body.search_results.map((c) => c.match_id)).toEqual([r.match_id])
    const mobile = r.phone_numbers.find((p) => p.type === "mobile")!.value
    const byMobile = await people({ mobile_phone: mobile })
    expect(byMobile.body.search_results.map((c) => c.match_id)).toEqual([r.match_id])
  })
})

describe("preview, masking and match_ids", () => {
  it("the preview finds a known contact by each identity the spec names: email, first_name + last_name + company_domain, linkedin_url, match_ids", async () => {
    const known = records()
      .filter((c) => c.social_profiles.some((s) => s.type === "linkedin"))
      .slice(0, 5)
    for (const r of known) {
      const ids = async (params: Record<string, string>) =>
        (await preview({ ...params, page_size: 50 })).body.search_results.map((c) => c.match_id)
      expect(await ids({ email: r.email.toUpperCase() })).toContain(r.match_id)
      const byName = await ids({
        first_name: r.first_name.toUpperCase(),
        last_name: r.last_name,
        company_domain: r.company_domains[0]!,
      })
      expect(byName).toContain(r.match_id)
      // Every one it finds has that name at that company: the three filters are AND-ed.
      for (const id of byName) {
        const found = sandbox.dataset.contactByMatchId(id)!
        expect([found.first_name, found.last_name, found.company_domains]).toEqual([
          r.first_name,
          r.last_name,
          expect.arrayContaining([r.company_domains[0]]),
        ])
      }
      const url = r.social_profiles.find((s) => s.type === "linkedin")!.url
      expect(await ids({ linkedin_url: `https://www.${url}` })).toEqual([r.match_id])
    }
    const batch = known.map((r) => r.match_id)
    const byIds = await preview({ match_ids: [...batch, "no-such-id"].join(","), page_size: 50 })
    expect(byIds.body.search_results.map((c) => c.match_id).sort()).toEqual([...batch].sort())
    expect(
      (await preview({ first_name: "Zyxw", last_name: "Vutsr", company_domain: "nowhere.example" })).body
        .result_count,
    ).toBe(0)
  })

  it("preview masks emails and phones, keeps identity, name, title, company and location, and is free", async () => {
    const params = { job_departments: "sale", required_fields: "personal_email,phone", page_size: 20 }
    const masked = await preview(params)
    const full = await people(params)
    expect(masked.body.is_preview).toBe(true)
    expect(full.body.is_preview).toBe(false)
    expect(masked.body.result_count).toBe(full.body.result_count)
    masked.body.search_results.forEach((m, i) => {
      const f = full.body.search_results[i]!
      expect(m.match_id).toBe(f.match_id)
      expect([m.first_name, m.last_name, m.job_title, m.company_name, m.location]).toEqual([
        f.first_name,
        f.last_name,
        f.job_title,
        f.company_name,
        f.location,
      ])
      expect(m.email).not.toBe(f.email)
      expect(m.email).toContain("***")
      expect(m.personal_email).not.toBe(f.personal_email)
      expect(m.phone_numbers.length).toBe(f.phone_numbers.length)
      for (const p of m.phone_numbers) expect(p.value).toMatch(/^\*\*\*-\*\*\*-\d{4}$/)
    })
    const account = await accountOf("sandbox-full")
    expect(account.credits_charged).toBe(20)
  })

  it("search by match_ids from a preview returns exactly those contacts and charges for them only", async () => {
    const picked = (await preview({ job_levels: "chf", page: 3 })).body.search_results
      .slice(0, 7)
      .map((r) => r.match_id)
    const found = await people({ match_ids: picked.join(",") })
    expect(found.body.result_count).toBe(7)
    expect(new Set(found.body.search_results.map((r) => r.match_id))).toEqual(new Set(picked))
    expect((await accountOf("sandbox-full")).credits_charged).toBe(7)
    const withUnknown = await people({ match_ids: `${picked[0]},m-zzzzzzz,garbage` })
    expect(withUnknown.body.search_results.map((r) => r.match_id)).toEqual([picked[0]])
    for (const r of found.body.search_results) expect(r).toEqual(sandbox.dataset.contactByMatchId(r.match_id))
  })
})

describe("paging and sorting", () => {
  it("pages are numbered from 1, default to 50 records, and tile the result set", async () => {
    const first = await preview({ job_departments: "hr" })
    expect(first.body.page).toBe(1)
    expect(first.body.page_size).toBe(50)
    expect(first.body.search_results.length).toBe(50)
    const a = await preview({ job_departments: "hr", page_size: 25, page: 1 })
    const b = await preview({ job_departments: "hr", page_size: 25, page: 2 })
    expect([...a.body.search_results, ...b.body.search_results].map((r) => r.match_id)).toEqual(
      first.body.search_results.map((r) => r.match_id),
    )
  })

  it("the deepest page is 10,000 records deep; one record more is a 400", async () => {
    expect((await preview({ page: 200, page_size: 50 })).status).toBe(200)
    expect((await preview({ page: 201, page_size: 50 })).status).toBe(400)
    expect((await preview({ page: 1000, page_size: 10 })).status).toBe(200)
    expect((await preview({ page: 1001, page_size: 10 })).status).toBe(400)
    expect((await preview({ page: 334, page_size: 30 })).status).toBe(400)
    expect((await call("/service/technologies/append", { page: 201 })).status).toBe(400)
    expect((await call("/service/technologies/taxonomy/products", { vendor: "a", page: 201 })).status).toBe(
      400,
    )
    // result_count stays the total also past 10,000.
    expect((await preview({})).body.result_count).toBe(contacts)
  })

  for (const [sortBy, key] of [
    ["company_name", (r: ContactRecord) => r.company_name.toLowerCase()],
    [
      "company_location",
      (r: ContactRecord) => {
        const hq = companyOf(r).sites[0]!.city
        return `${hq.country}, ${hq.state}, ${hq.city}`.toLowerCase()
      },
    ],
  ] as const) {
    it(`sort_by=${sortBy} asc and desc`, async () => {
      const asc = await preview({ sort_by: sortBy, page: 2, job_levels: "dir" })
      const keys = asc.body.search_results.map(key)
      expect(keys).toEqual([...keys].sort())
      const desc = await preview({ sort_by: sortBy, sort_direction: "desc", job_levels: "dir" })
      const dkeys = desc.body.search_results.map(key)
      expect(dkeys).toEqual([...dkeys].sort().reverse())
      const all = records()
        .filter((r) => r.job_level === "dir")
        .map(key)
        .sort()
      expect(dkeys[0]).toBe(all[all.length - 1])
    })
  }
})

describe("authentication, permissions and errors", () => {
  for (const path of endpointPaths) {
    it(`401 without a key, with an unknown key, or without Accept on ${path}`, async () => {
      expect((await call(path, minimalParams(path), null)).status).toBe(401)
      expect((await call(path, minimalParams(path), "not-a-key")).status).toBe(401)
      expect((await call(path, minimalParams(path), "sandbox-full", null)).status).toBe(401)
      expect((await call(path, minimalParams(path), "sandbox-full", "text/html")).status).toBe(401)
    })
    it(`403 for sandbox-no-access on ${path}`, async () => {
      const answer = await call<{ error: string }>(path, minimalParams(path), "sandbox-no-access")
      expect(answer.status).toBe(403)
      expect(answer.body.error).toMatch(/permission/)
    })
  }

  it("403 for a tech_* filter without the add-on; taxonomy and plain filters still work", async () => {
    for (const param of ["tech_category", "tech_subcategory", "tech_product", "tech_vendor"]) {
      expect((await people({ [param]: "Sales" }, "sandbox-no-tech")).status).toBe(403)
      expect((await preview({ [param]: "Sales" }, "sandbox-no-tech")).status).toBe(403)
      expect(
        (await call("/service/technologies/append", { [param]: "Sales" }, "sandbox-no-tech")).status,
      ).toBe(403)
    }
    expect((await people({ job_levels: "vp" }, "sandbox-no-tech")).status).toBe(200)
    expect((await call("/service/technologies/append", {}, "sandbox-no-tech")).status).toBe(200)
    expect((await call("/service/technologies/taxonomy/categories", {}, "sandbox-no-tech")).status).toBe(200)
    expect((await accountOf("sandbox-no-tech")).credits_charged).toBe(100)
  })

  const badRequests: Array<[string, string, Record<string, string | number>]> = [
    ["page 0", "/service/people", { page: 0 }],
    ["page not an integer", "/service/people", { page: "1.5" }],
    ["page_size 0", "/service/people/preview", { page_size: 0 }],
    ["page_size 51", "/service/people", { page_size: 51 }],
    ["bad boolean", "/service/people", { verified: "yes" }],
    ["bad is_international", "/service/technologies/append", { is_international: "1" }],
    ["unknown job level", "/service/people", { job_levels: "vp,ceo" }],
    ["unknown department", "/service/people", { job_departments: "it" }],
    ["unknown required field", "/service/people", { required_fields: "mobile" }],
    ["bad sort_by", "/service/people", { sort_by: "first_name" }],
    ["bad sort_direction", "/service/people", { sort_direction: "up" }],
    [
      "bad products sort_by",
      "/service/technologies/taxonomy/products",
      { vendor: "a", sort_by: "company_name" },
    ],
    ["products without product or vendor", "/service/technologies/taxonomy/products", {}],
    ["unknown parameter", "/service/people", { jobLevels: "vp" }],
    ["categories take no parameters", "/service/technologies/taxonomy/categories", { page: 1 }],
    ["non-integer size", "/service/people", { company_min_size: "ten" }],
    ["inverted size range", "/service/people", { company_min_size: 500, company_max_size: 10 }],
    ["formatted mobile", "/service/people", { mobile_phone: "(512) 555-0142" }],
    ["short mobile", "/service/people", { mobile_phone: "12345" }],
    ["linkedin token", "/service/people", { linkedin_url: "dana-reyes" }],
    ["distance without zip", "/service/people", { company_location_zipcodes_distance: 10 }],
  ]
  for (const [name, path, params] of badRequests) {
    it(`400: ${name}`, async () => {
      const answer = await call<{ error: string }>(path, params)
      expect(answer.status).toBe(400)
      expect(answer.body.error.length).toBeGreaterThan(0)
      expect((await accountOf("sandbox-full")).credits_charged).toBe(0)
    })
  }

  it("the error message names the parameter", async () => {
    const answer = await call<{ error: string }>("/service/people", { job_levels: "ceo" })
    expect(answer.body.error).toContain("job_levels")
  })

  it("unknown paths are 404 and other methods 405, both with a JSON error", async () => {
    const missing = await fetch(`${sandbox.url}/service/company`, {
      headers: { "X-CB-ApiKey": "sandbox-full", Accept: "application/json" },
    })
    expect(missing.status).toBe(404)
    expect(((await missing.json()) as { error: string }).error).toBeTruthy()
    const post = await fetch(`${sandbox.url}/service/people`, {
      method: "POST",
      headers: { "X-CB-ApiKey": "sandbox-full" },
    })
    expect(post.status).toBe(405)
    await post.body?.cancel()
  })
})

describe("credits", () => {
  it("search and append charge one credit per record on each returned page, exactly", async () => {
    let returned = 0
    for (const [path, params] of [
      ["/service/people", { job_levels: "brd", page_size: 17 }],
      ["/service/people", { job_levels: "brd", page_size: 17, page: 2 }],
      ["/service/people", { match_ids: "m-zzzzzzz" }],
      ["/service/people", { company_name: "willow", page_size: 50 }],
      ["/service/technologies/append", { page_size: 13 }],
      [
        "/service/technologies/append",
        { company_domain: sandbox.dataset.companies[3]!.domain, tech_product: "Slack~Zoom" },
      ],
      ["/service/people/preview", { page_size: 50 }],
      ["/service/technologies/taxonomy/categories", {}],
      ["/service/technologies/taxonomy/products", { product: "a" }],
    ] as const) {
      const answer = await call<Envelope<unknown>>(path, params)
      expect(answer.status).toBe(200)
      if (!path.includes("preview") && !path.includes("taxonomy"))
        returned += answer.body.search_results.length
    }
    const account = await accountOf("sandbox-full")
    expect(account.credits_charged).toBe(returned)
    expect(account.credits_left).toBe(1_000_000 - returned)
  })

  it("402 when the balance cannot cover the page, charging nothing; smaller pages still pass", async () => {
    expect((await people({ page_size: 50 }, "sandbox-low-credit")).status).toBe(200)
    expect((await people({ page_size: 45, page: 2 }, "sandbox-low-credit")).status).toBe(200)
    const refused = await call<{ error: string }>("/service/people", { page_size: 6 }, "sandbox-low-credit")
    expect(refused.status).toBe(402)
    expect(refused.body.error).toMatch(/credits/)
    expect((await call("/service/technologies/append", { page_size: 6 }, "sandbox-low-credit")).status).toBe(
      402,
    )
    expect((await people({ page_size: 5 }, "sandbox-low-credit")).status).toBe(200)
    expect((await people({ page_size: 1 }, "sandbox-low-credit")).status).toBe(402)
    expect((await preview({ page_size: 50 }, "sandbox-low-credit")).status).toBe(200)
    const account = await accountOf("sandbox-low-credit")
    expect(account).toMatchObject({ credits_charged: 100, credits_left: 0 })
    expect(account.requests["people.search"]).toEqual({ "200": 3, "402": 2 })
    await admin("/_sandbox/reset", {})
    expect(await accountOf("sandbox-low-credit")).toMatchObject({
      credits_charged: 0,
      credits_left: 100,
      requests: {},
    })
  })
})

describe("technologies append and taxonomy", () => {
  it("without tech filters lists the company's products, all in use", async () => {
    const company = sandbox.dataset.companies[11]!
    const answer = await call<Envelope<CompanyTechnologies>>("/service/technologies/append", {
      company_domain: company.domain,
    })
    expect(answer.body.result_count).toBe(1)
    const record = answer.body.search_results[0]!
    expect(record.company_id).toBe(company.id)
    expect(record.technologies.length).toBe(company.products.length)
    expect(record.technologies.every((t) => t.in_use)).toBe(true)
    expect(record).toEqual(sandbox.dataset.company(11))
  })

  it("with tech filters lists the requested products with in_use, charging every company returned", async () => {
    const d = sandbox.dataset
    const slack = d.taxonomy.products.find((p) => p.product === "Slack")!
    const domains = d.companies.slice(0, 30).map((c) => c.domain)
    const answer = await call<Envelope<CompanyTechnologies>>("/service/technologies/append", {
      company_domain: domains.join(","),
      tech_product: "slack",
    })
    expect(answer.body.result_count).toBe(30)
    for (const r of answer.body.search_results) {
      expect(r.technologies.map((t) => t.product)).toEqual(["Slack"])
      expect(r.technologies[0]!.in_use).toBe(d.companyById(r.company_id)!.products.includes(slack.id))
    }
    expect(new Set(answer.body.search_results.map((r) => r.technologies[0]!.in_use))).toEqual(
      new Set([true, false]),
    )
    expect((await accountOf("sandbox-full")).credits_charged).toBe(30)
  })

  it("company filters: name contains, is_international, verified, sorting", async () => {
    const d = sandbox.dataset
    for (const [params, test] of [
      [{ company_name: "summit" }, (c: (typeof d.companies)[number]) => /summit/i.test(c.name)],
      [{ is_international: true }, (c: (typeof d.companies)[number]) => c.sites[0]!.city.country !== "US"],
      [{ verified: false }, (c: (typeof d.companies)[number]) => !c.verified],
    ] as const) {
      const answer = await call<Envelope<CompanyTechnologies>>("/service/technologies/append", {
        ...params,
        page_size: 5,
      })
      expect(answer.body.result_count).toBe(d.companies.filter(test).length)
    }
    const sorted = await call<Envelope<CompanyTechnologies>>("/service/technologies/append", {
      sort_by: "company_name",
      sort_direction: "desc",
    })
    const names = sorted.body.search_results.map((r) => r.company_name.toLowerCase())
    expect(names).toEqual([...names].sort().reverse())
  })

  it("categories list every category with its subcategories, matching the taxonomy", async () => {
    const answer = await call<{
      result_count: number
      search_results: Array<{ category: string; subcategories: string[] }>
    }>("/service/technologies/taxonomy/categories")
    expect(answer.body.result_count).toBe(sandbox.dataset.taxonomy.categories.length)
    expect(answer.body.search_results).toContainEqual({
      category: "Sales",
      subcategories: ["CRM", "Sales Engagement"],
    })
  })

  it("products: tilde lists, case-insensitive contains, AND between product and vendor, sorting", async () => {
    const byVendor = await call<Envelope<{ product: string; vendor: string }>>(
      "/service/technologies/taxonomy/products",
      {
        vendor: "MICROSOFT~adobe",
        sort_by: "product",
      },
    )
    expect(byVendor.body.search_results.length).toBeGreaterThan(5)
    for (const p of byVendor.body.search_results) expect(p.vendor).toMatch(/microsoft|adobe/i)
    const names = byVendor.body.search_results.map((p) => p.product.toLowerCase())
    expect(names).toEqual([...names].sort((a, b) => a.localeCompare(b)))
    const both = await call<Envelope<{ product: string; vendor: string }>>(
      "/service/technologies/taxonomy/products",
      {
        vendor: "microsoft",
        product: "teams",
      },
    )
    expect(both.body.search_results.map((p) => p.product)).toEqual(["Microsoft Teams"])
  })
})

describe("faults, rate limits and introspection", () => {
  it("injected 500s, 429s, drops and truncations never charge and are counted", async () => {
    sandbox.setFaults({ error_rate: 1 }, "sandbox-full")
    expect((await people({})).status).toBe(500)
    sandbox.setFaults({ error_rate: 0, rate_limit_rate: 1, retry_after_s: 7 }, "sandbox-full")
    const limited = await people({})
    expect(limited.status).toBe(429)
    expect(limited.headers.get("retry-after")).toBe("7")
    // The provider documents no Retry-After: the sandbox can leave it out.
    sandbox.setFaults({ retry_after_header: 0 }, "sandbox-full")
    const bare = await people({})
    expect(bare.status).toBe(429)
    expect(bare.headers.get("retry-after")).toBeNull()
    sandbox.setFaults({ retry_after_header: 1 }, "sandbox-full")
    sandbox.setFaults({ rate_limit_rate: 0, drop_rate: 1 }, "sandbox-full")
    await expect(
      fetch(`${sandbox.url}/service/people`, {
        headers: { "X-CB-ApiKey": "sandbox-full", Accept: "application/json" },
      }),
    ).rejects.toThrow()
    sandbox.setFaults({ drop_rate: 0, truncate_rate: 1 }, "sandbox-full")
    const truncated = await fetch(`${sandbox.url}/service/people`, {
      headers: { "X-CB-ApiKey": "sandbox-full", Accept: "application/json" },
    })
    await expect(truncated.text().then((t) => JSON.parse(t))).rejects.toThrow()
    // Another key is untouched by per-key faults.
    expect((await people({ page_size: 3 }, "sandbox-no-tech")).status).toBe(200)
    const account = await accountOf("sandbox-full")
    expect(account.credits_charged).toBe(0)
    expect(account.requests["people.search"]).toEqual({ "500": 1, "429": 2, dropped: 1, truncated: 1 })
  })

  it("sends the same contacts without match_id, or bought with a field of the wrong type, on every request, and charges every copy on a page", async () => {
    // Faults that break the spec on purpose: read as plain JSON, not checked against it.
    const raw = async (path: string, params: Record<string, string>) => {
      const res = await fetch(`${sandbox.url}${path}?${new URLSearchParams(params).toString()}`, {
        headers: { "X-CB-ApiKey": "sandbox-full", Accept: "application/json" },
      })
      return ((await res.json()) as People).search_results
    }
    const query = { job_levels: "vp", page_size: "50" }
    sandbox.setFaults({ no_match_id_rate: 0.2 }, "sandbox-full")
    const listed = await raw("/service/people/preview", query)
    const bought = await raw("/service/people", query)
    const keyless = (records: ReadonlyArray<ContactRecord>) =>
      records.flatMap((r, at) => (r.match_id === undefined ? [at] : []))
    expect(keyless(bought).length).toBeGreaterThan(0)
    expect(keyless(bought).length).toBeLessThan(50)
    expect(keyless(listed)).toEqual(keyless(bought))
    expect(bought.map((r) => r.last_name)).toEqual(listed.map((r) => r.last_name))
    expect((await accountOf("sandbox-full")).credits_charged).toBe(50)
    sandbox.setFaults({ no_match_id_rate: 0, duplicate_rate: 0.2 }, "sandbox-full")
    const doubled = await raw("/service/people", query)
    const copies = doubled.length - new Set(doubled.map((r) => r.match_id)).size
    expect(copies).toBeGreaterThan(0)
    expect(doubled.filter((r, at) => at > 0 && r.match_id === doubled[at - 1]!.match_id).length).toBe(copies)
    // One credit a record on the page, copies included.
    expect((await accountOf("sandbox-full")).credits_charged).toBe(50 + doubled.length)
    // A field of the wrong type on the paid record only: the same contacts every time, charged.
    sandbox.setFaults({ duplicate_rate: 0, bad_field_rate: 0.2 }, "sandbox-full")
    const badOf = (records: ReadonlyArray<ContactRecord>) =>
      records.flatMap((r) =>
        typeof (r as { job_level: unknown }).job_level === "number" ? [r.match_id] : [],
      )
    const paid = await raw("/service/people", query)
    expect(badOf(paid).length).toBeGreaterThan(0)
    expect(badOf(paid).length).toBeLessThan(50)
    expect(badOf(await raw("/service/people", query))).toEqual(badOf(paid))
    const previewed = await raw("/service/people/preview", query)
    expect(badOf(previewed)).toEqual([])
    expect(previewed.map((r) => r.match_id)).toEqual(paid.map((r) => r.match_id))
    expect((await accountOf("sandbox-full")).credits_charged).toBe(50 + doubled.length + 100)
  })

  it("faults set over HTTP, globally, with latency; reset restores them", async () => {
    const set = await admin("/_sandbox/faults", { latency_ms: 120, error_rate: 0 })
    expect((set.faults as { latency_ms: number }).latency_ms).toBe(120)
    let started = performance.now()
    expect((await call("/service/technologies/taxonomy/categories", {}, "sandbox-no-tech")).status).toBe(200)
    expect(performance.now() - started).toBeGreaterThanOrEqual(110)
    await admin("/_sandbox/reset", {})
    started = performance.now()
    await call("/service/technologies/taxonomy/categories")
    expect(performance.now() - started).toBeLessThan(100)
  })

  it("fault draws are reproducible from the seed", async () => {
    const run = async () => {
      sandbox.reset()
      sandbox.setFaults({ error_rate: 0.5 }, "sandbox-full")
      const statuses: number[] = []
      for (let i = 0; i < 20; i++)
        statuses.push((await call("/service/technologies/taxonomy/categories")).status)
      return statuses
    }
    const first = await run()
    expect(first).toContain(500)
    expect(first).toContain(200)
    expect(await run()).toEqual(first)
  })

  it("the per-key request limit answers 429 with Retry-After and charges nothing", async () => {
    sandbox.setFaults({ requests_per_minute: 3 }, "sandbox-full")
    for (let i = 0; i < 3; i++) expect((await people({ page_size: 1 })).status).toBe(200)
    const refused = await people({ page_size: 1 })
    expect(refused.status).toBe(429)
    expect(Number(refused.headers.get("retry-after"))).toBeGreaterThan(0)
    expect((await people({ page_size: 1 }, "sandbox-no-tech")).status).toBe(200)
    expect((await accountOf("sandbox-full")).credits_charged).toBe(3)
  })

  it("rejects bad fault settings", async () => {
    const res = await fetch(`${sandbox.url}/_sandbox/faults`, {
      method: "POST",
      body: JSON.stringify({ error_rate: 2 }),
    })
    expect(res.status).toBe(400)
    await res.body?.cancel()
  })
})

describe("dataset changes", () => {
  it("growing the contact count adds contacts and keeps existing ones unchanged", async () => {
    const before = (await people({ match_ids: sandbox.dataset.matchId(123) })).body.search_results[0]!
    const grown = await admin("/_sandbox/dataset", { contacts: contacts + 500 })
    expect(grown.contacts).toBe(contacts + 500)
    expect((await preview({})).body.result_count).toBe(contacts + 500)
    const after = (await people({ match_ids: before.match_id })).body.search_results[0]!
    expect(after).toEqual(before)
    const newcomer = sandbox.dataset.matchId(contacts + 10)
    expect((await people({ match_ids: newcomer })).body.result_count).toBe(1)
    await admin("/_sandbox/dataset", { contacts, generation: 1 })
    const modified = records().filter(
      (r) =>
        sandbox.dataset.contact(sandbox.dataset.indexOfMatchId(r.match_id)!).dates.last_modified_date !==
        r.dates.last_modified_date,
    )
    expect(modified.length).toBeGreaterThan(contacts * 0.02)
    await admin("/_sandbox/dataset", { generation: 0 })
  })

  it("a generation set over HTTP moves the contacts and technologies its change lists name, and no others", async () => {
    await admin("/_sandbox/dataset", { generation: 2 })
    try {
      const jobChanges = sandbox.dataset.jobChanges(0)
      expect(jobChanges.length).toBeGreaterThan(0)
      const sample = jobChanges.slice(0, 50)
      const found = await people({ match_ids: sample.map((c) => c.match_id).join(","), page_size: 50 })
      const byId = new Map(found.body.search_results.map((r) => [r.match_id, r]))
      for (const change of sample) {
        const record = byId.get(change.match_id)!
        const { company_id, job_title, job_level, job_department } = record
        expect({ company_id, job_title, job_level, job_department }).toEqual(change.to)
      }
      const techChanges = sandbox.dataset.technologyChanges(0)
      const changedIds = [...new Set(techChanges.map((c) => c.company_id))].slice(0, 20)
      for (const id of changedIds) {
        const company = sandbox.dataset.companyById(id)!
        type Append = Envelope<{ company_id: number; technologies: Array<{ product: string }> }>
        const appended = await call<Append>("/service/technologies/append", {
          company_domain: company.domain,
        })
        const products = new Set(appended.body.search_results[0]!.technologies.map((t) => t.product))
        for (const change of techChanges.filter((c) => c.company_id === id))
          expect(products.has(change.product)).toBe(change.change === "adopted")
      }
    } finally {
      await admin("/_sandbox/dataset", { generation: 0 })
    }
    expect(sandbox.dataset.jobChanges(0)).toEqual([])
  })
})

describe("spec and sandbox agree on the parameters", () => {
  const specParameters = (path: string) =>
    (
      spec.paths[path] as unknown as {
        get: { parameters: Array<{ $ref?: string; name?: string; in?: string }> }
      }
    ).get.parameters
      .map((p) => {
        const resolved = p.$ref
          ? (spec.components as unknown as { parameters: Record<string, { name: string; in: string }> })
              .parameters[p.$ref.split("/").pop()!]!
          : p
        return resolved
      })
      .filter((p) => p.in === "query")
      .map((p) => p.name!)
      .sort()

  for (const [path, accepted] of [
    ["/service/people", peopleParams],
    ["/service/people/preview", peopleParams],
    ["/service/technologies/append", appendParams],
    ["/service/technologies/taxonomy/products", productsParams],
    ["/service/technologies/taxonomy/categories", []],
  ] as const) {
    it(`${path}: the query parameters of the spec are exactly those the sandbox accepts`, () => {
      expect(specParameters(path)).toEqual([...accepted].sort())
    })
  }

  it("every operation declares its JSON error statuses", () => {
    for (const path of endpointPaths) {
      const statuses = Object.keys(spec.paths[path]!.get.responses)
      for (const s of ["200", "400", "401", "403", "429", "500"]) expect(statuses).toContain(s)
      const credited = path === "/service/people" || path === "/service/technologies/append"
      expect(statuses.includes("402")).toBe(credited)
    }
  })
})

describe("duplicates (opt-in)", () => {
  it("append without is_international returns a multi-country company once per country, each row charged", async () => {
    const dup = await startSandbox({ seed: 7, contacts: 1000, companies: companies, duplicates: true })
    try {
      const d = dup.dataset
      const spread = d.companies.find((c) => new Set(c.sites.map((s) => s.city.country)).size > 1)!
      const countries = [...new Set(spread.sites.map((s) => s.city.country))]
      const get = async (params: Record<string, string>) => {
        const res = await fetch(`${dup.url}/service/technologies/append?${new URLSearchParams(params)}`, {
          headers: { "X-CB-ApiKey": "sandbox-full", Accept: "application/json" },
        })
        const body = (await res.json()) as Envelope<CompanyTechnologies>
        const validate = validatorFor("/service/technologies/append", res.status)
        expect(validate(body)).toBe(true)
        return body
      }
      const all = await get({ company_domain: spread.domain })
      expect(all.result_count).toBe(countries.length)
      expect(new Set(all.search_results.map((r) => r.company_id))).toEqual(new Set([spread.id]))
      const us = await get({ company_domain: spread.domain, is_international: "false" })
      expect(us.result_count).toBe(countries.includes("US") ? 1 : 0)
      expect(dup.accounts()["sandbox-full"]!.credits_charged).toBe(countries.length + us.result_count)
    } finally {
      await dup.close()
    }
  })
})
