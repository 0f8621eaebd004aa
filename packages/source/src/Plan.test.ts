import { describe, expect, it } from "vitest"
import { requestsOf } from "./Plan.ts"

describe("Plan.requestsOf", () => {
  it("a search: its counts and free listing (50 ids a page), then purchases of page_size ids", () => {
    // 3 count requests, parts of 10,000 and 2,001 ids (200 + 41 listing pages), 5,000 bought at 50.
    expect(
      requestsOf(
        { _tag: "Search", countRequests: 3, partCounts: [10_000, 2_001], credits: 5_000, direct: false },
        50,
      ),
    ).toEqual({ free: 3 + 200 + 41, credited: 100 })
    // A smaller page_size buys in more batches; the listing still reads 50 ids a page.
    expect(
      requestsOf({ _tag: "Search", countRequests: 1, partCounts: [120], credits: 120, direct: false }, 25),
    ).toEqual({
      free: 1 + 3,
      credited: 5,
    })
    expect(
      requestsOf({ _tag: "Search", countRequests: 1, partCounts: [], credits: 0, direct: false }, 50),
    ).toEqual({
      free: 1,
      credited: 0,
    })
  })

  it("a search read directly: its counts, then each partition's credited pages of page_size", () => {
    // The same search as above read directly: 3 counts, then 200 + 41 pages of 50 bought records.
    expect(
      requestsOf(
        { _tag: "Search", countRequests: 3, partCounts: [10_000, 2_001], credits: 12_001, direct: true },
        50,
      ),
    ).toEqual({ free: 3, credited: 200 + 41 })
    // page_size 25: each partition's pages of 25.
    expect(
      requestsOf({ _tag: "Search", countRequests: 1, partCounts: [120], credits: 120, direct: true }, 25),
    ).toEqual({ free: 1, credited: 5 })
  })

  it("emails, companies (per kind) and the taxonomy", () => {
    expect(requestsOf({ _tag: "Emails", lookupPages: 7, credits: 51 }, 50)).toEqual({ free: 7, credited: 2 })
    expect(requestsOf({ _tag: "Companies", domainsBought: 51, namesBought: 1 }, 50)).toEqual({
      free: 0,
      credited: 3,
    })
    expect(requestsOf({ _tag: "Taxonomy", categoryRequests: 1, productPages: 40 }, 50)).toEqual({
      free: 41,
      credited: 0,
    })
  })
})
