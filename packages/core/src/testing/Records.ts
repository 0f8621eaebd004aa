/** Provider-shaped records for tests: a contact with phones, a company with technologies. */

export const contact = (id: number, overrides: Record<string, unknown> = {}): Record<string, unknown> => ({
  _score: null,
  match_id: `m-${id}`,
  doc_id: `d-${id}`,
  display_name: `Person ${id}`,
  first_name: "Person",
  last_name: String(id),
  email: `person${id}@example.com`,
  job_title: "IT Manager",
  job_level: id % 2 === 0 ? "mgr" : "vp",
  job_department: "it_is",
  phone_numbers: [
    { type: "work_hq", value: `555${id}` },
    { type: "mobile", value: `777${id}` },
  ],
  social_profiles: [{ type: "linkedin", url: `linkedin.com/in/p-${id}` }],
  company: { id: 1000 + (id % 10), name: `Company ${id % 10}`, revenue: "41", size: 131 },
  company_id: 1000 + (id % 10),
  company_name: `Company ${id % 10}`,
  company_size: 131,
  company_size_range: "50-199",
  company_revenue: 41,
  company_revenue_range: "$10M - $50M",
  company_score: null,
  company_status: null,
  cds_batch_id: null,
  dates: { created_date: "1585357174668", last_modified_date: 1751025325591 },
  _salesintel_search: "managers",
  _salesintel_fetched_at: "2026-11-21T23:47:42.419Z",
  ...overrides,
})

export const company = (id: number, products: ReadonlyArray<string> = ["Marketo Engage"]) => ({
  company_id: id,
  company_name: `Company ${id}`,
  company_domains: [`c${id}.example.com`],
  is_international: false,
  verified: true,
  company: { id, name: `Company ${id}`, revenue: 41, size: 131, naics_codes: ["484121"] },
  technologies: products.map((product) => ({
    category: "Marketing",
    subcategory: "Marketing Automation",
    product,
    vendor: "Adobe",
    in_use: true,
  })),
})
