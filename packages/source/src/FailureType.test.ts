// Who must act on each failure: the failure_type a read's TRACE error carries.
import { ApiError } from "@salesintel/core"
import { describe, expect, it } from "vitest"
import { failureTypeOf } from "./read/Read.ts"

const endpoint = "people.search" as const

describe("failureTypeOf", () => {
  it("a provider 400 on a filter is the config's to fix; on the paging the connector chose, ours", () => {
    expect(failureTypeOf(new ApiError.BadRequest({ endpoint, parameter: "linkedin_url" }))).toBe(
      "config_error",
    )
    expect(failureTypeOf(new ApiError.BadRequest({ endpoint }))).toBe("config_error")
    expect(failureTypeOf(new ApiError.BadRequest({ endpoint, parameter: "page_size" }))).toBe("system_error")
    expect(failureTypeOf(new ApiError.BadRequest({ endpoint, parameter: "page" }))).toBe("system_error")
  })

  it("a refused connection is transient, like every transport failure; other statuses keep theirs", () => {
    const refused = new ApiError.Transport({ endpoint, reason: "refused", description: "connection refused" })
    expect(failureTypeOf(refused)).toBe("transient_error")
    expect(failureTypeOf(new ApiError.UnexpectedStatus({ endpoint, status: 404 }))).toBe("system_error")
    expect(failureTypeOf(new ApiError.Forbidden({ endpoint, techFilters: [] }))).toBe("config_error")
  })
})
