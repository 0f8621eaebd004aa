import * as Either from "effect/Either"
import { describe, expect, it } from "vitest"
import * as Allowance from "./Allowance.ts"
import * as Config from "./Config.ts"

const problemsOf = (credit_allowance: unknown) =>
  Either.match(Config.decode({ api_key: "k", credit_budget: 10, credit_allowance }), {
    onLeft: (error) => error.problems,
    onRight: () => [],
  })

const tuesday = Date.UTC(2026, 10, 24, 10, 30)
const day = { credits: 1_000, per: "day" } as const
const part = (period_start: string, spent: number, per = "day") => ({
  credit_allowance: { per, period_start, spent },
})

describe("credit_allowance in the config", () => {
  it("is optional, and takes credits and a period", () => {
    expect(problemsOf(undefined)).toEqual([])
    expect(problemsOf({ credits: 30_000, per: "month" })).toEqual([])
  })

  it("names the field and what it expects", () => {
    expect(problemsOf({ credits: 1_000, per: "year" })).toEqual([
      {
        path: "credit_allowance.per",
        message:
          'Expected "day", "week" or "month" (calendar periods in UTC; a week starts on Monday), actual "year"',
      },
    ])
    expect(problemsOf({ credits: -1, per: "day" })).toEqual([
      {
        path: "credit_allowance.credits",
        message: "Expected a whole number of credits, 0 or more, such as 30000, actual -1",
      },
    ])
    expect(problemsOf({ per: "day" })).toEqual([{ path: "credit_allowance.credits", message: "is missing" }])
  })
})

describe("what a state says the period spent", () => {
  it("is the largest figure for the current period; an older period or another `per` counts nothing", () => {
    const state = new Map<string, unknown>([
      ["contacts", { searches: {}, ...part("2026-11-24T00:00:00.000Z", 800) }],
      ["companies", part("2026-11-24T00:00:00.000Z", 950)],
      ["taxonomy", part("2026-11-23T00:00:00.000Z", 5_000)],
    ])
    expect(Allowance.spentInState(state, day, tuesday)).toEqual(Either.right(950))
    expect(Allowance.spentInState(state, day, Date.UTC(2026, 10, 25, 1))).toEqual(Either.right(0))
    expect(Allowance.spentInState(state, { credits: 1_000, per: "week" }, tuesday)).toEqual(Either.right(0))
  })

  it("refuses a part that does not decode, with its stream and path", () => {
    const state = new Map<string, unknown>([["contacts", part("yesterday", 5)]])
    const refused = Allowance.spentInState(state, day, tuesday)
    expect(Either.isLeft(refused) && refused.left.message).toMatch(
      /^the saved state of stream contacts is not readable at credit_allowance\.period_start: /,
    )
  })

  it("is taken out of the stream's state before the stream reads it", () => {
    expect(Allowance.withoutPart({ searches: {}, ...part("2026-11-24T00:00:00.000Z", 1) })).toEqual({
      searches: {},
    })
    expect(Allowance.withoutPart(undefined)).toBeUndefined()
  })
})

describe("the run's limit", () => {
  it("is min(credit_budget, what the period has left)", () => {
    expect(Allowance.limitOf(800, undefined)).toBe(800)
    expect(Allowance.limitOf(800, Allowance.standingOf(day, tuesday, 0, "runs"))).toBe(800)
    expect(Allowance.limitOf(800, Allowance.standingOf(day, tuesday, 800, "runs"))).toBe(200)
    expect(Allowance.limitOf(800, Allowance.standingOf(day, tuesday, 1_200, "runs"))).toBe(0)
  })
})
