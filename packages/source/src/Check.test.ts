import { ApiError, Client } from "@salesintel/core"
import * as Effect from "effect/Effect"
import * as Either from "effect/Either"
import { describe, expect, it } from "vitest"
import * as Check from "./Check.ts"
import * as Config from "./Config.ts"

const config = Either.getOrThrow(Config.decode({ api_key: "k", credit_budget: 10, contacts: {} }))

/** A provider whose people preview ends in `answer`; anything else asked is a test failure. */
const provider = (answer: Effect.Effect<never, ApiError.ApiError> | "ok") => {
  const asked: Array<string> = []
  const never = (what: string) => () => Effect.die(new Error(`${what} asked`))
  const service: Client.SalesIntelClientService = {
    searchPeople: never("a credited search"),
    appendTechnologies: never("append"),
    taxonomyProducts: never("products"),
    taxonomyCategories: Effect.die(new Error("categories asked")),
    previewPeople: (_filters, paging) => {
      asked.push(`preview page ${paging.page} of ${paging.pageSize}`)
      return answer === "ok"
        ? Effect.succeed({ page: 1, pageSize: 1, resultCount: 0, isPreview: true, items: [], rejected: [] })
        : answer
    },
  }
  return { asked, service }
}

const keyAccepted = (answer: Effect.Effect<never, ApiError.ApiError> | "ok") => {
  const { asked, service } = provider(answer)
  const outcome = Effect.runSync(
    Effect.either(Check.keyAccepted(config).pipe(Effect.provideService(Client.SalesIntelClient, service))),
  )
  return { asked, outcome }
}

describe("Check.keyAccepted: the key, before salesintel sync opens its target", () => {
  it("asks one free request, and fails on a rejected key", () => {
    const { asked, outcome } = keyAccepted(
      Effect.fail(new ApiError.Unauthorized({ endpoint: "people.preview" })),
    )
    expect(asked).toEqual(["preview page 1 of 1"])
    expect(Either.isLeft(outcome) && outcome.left._tag).toBe("Unauthorized")
  })

  it("passes an accepted key, and a 403 (the run names a missing permission where it needs it)", () => {
    expect(Either.isRight(keyAccepted("ok").outcome)).toBe(true)
    const forbidden = keyAccepted(
      Effect.fail(new ApiError.Forbidden({ endpoint: "people.preview", techFilters: [] })),
    )
    expect(Either.isRight(forbidden.outcome)).toBe(true)
  })
})
