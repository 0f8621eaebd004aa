import { describe, expect, it } from "@effect/vitest"
import type * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as Fiber from "effect/Fiber"
import * as FiberRef from "effect/FiberRef"
import * as Option from "effect/Option"
import * as TestClock from "effect/TestClock"
import {
  type JobDepartment,
  type JobLevel,
  jobDepartments,
  jobLevels,
  type PeopleFilters,
} from "./Filters.ts"
import * as Partitioner from "./Partitioner.ts"
import * as RateLimit from "./RateLimit.ts"

interface Person {
  readonly size: number | null
  readonly level: JobLevel
  readonly department: JobDepartment
  readonly state: string | null
}

/** A deterministic population: skewed company sizes, every level and department. */
const population = (count: number, seed: number, extra: ReadonlyArray<Person> = []): Array<Person> => {
  let state = seed
  const next = () => {
    state = (state * 1103515245 + 12345) % 2 ** 31
    return state / 2 ** 31
  }
  const people: Array<Person> = []
  for (let i = 0; i < count; i++) {
    people.push({
      size: Math.floor(10 ** (1 + next() * 4.5)),
      level: jobLevels[Math.floor(next() * jobLevels.length)]!,
      department: jobDepartments[Math.floor(next() * jobDepartments.length)]!,
      state: Partitioner.usStates[Math.floor(next() * Partitioner.usStates.length)]!,
    })
  }
  return [...people, ...extra]
}

const matches = (filters: PeopleFilters, person: Person): boolean =>
  (filters.company_min_size === undefined ||
    (person.size !== null && person.size >= filters.company_min_size)) &&
  (filters.company_max_size === undefined ||
    (person.size !== null && person.size <= filters.company_max_size)) &&
  (filters.job_levels === undefined || filters.job_levels.includes(person.level)) &&
  (filters.job_departments === undefined || filters.job_departments.includes(person.department)) &&
  (filters.company_location_states === undefined ||
    (person.state !== null && filters.company_location_states.includes(person.state)))

const counter = (people: ReadonlyArray<Person>) => (filters: PeopleFilters) =>
  Effect.sync(() => people.filter((person) => matches(filters, person)).length)

/** Every person lands in exactly one part or one unsplittable query. */
const expectDisjointAndComplete = (people: ReadonlyArray<Person>, plan: Partitioner.Plan) => {
  const queries = [...plan.parts, ...plan.unsplittable]
  const notExactlyOnce = people.filter(
    (person) => queries.filter((query) => matches(query.filters, person)).length !== 1,
  )
  expect(notExactlyOnce).toEqual([])
  expect(queries.reduce((sum, query) => sum + query.count, 0)).toBe(plan.total)
}

describe("Partitioner.plan", () => {
  it.effect("a query that fits is one part, counted once", () =>
    Effect.gen(function* () {
      const people = population(5_000, 1)
      const plan = yield* Partitioner.plan({ job_levels: ["vp"] }, { count: counter(people) })
      expect(plan.parts).toEqual([{ filters: { job_levels: ["vp"] }, count: plan.total }])
      expect(plan.countRequests).toBe(1)
    }),
  )

  it.effect("splits a large query into disjoint parts of at most 10,000 that add up", () =>
    Effect.gen(function* () {
      const people = population(60_000, 7)
      const plan = yield* Partitioner.plan({}, { count: counter(people) })
      expect(plan.total).toBe(60_000)
      expect(plan.unsplittable).toEqual([])
      expect(plan.parts.length).toBeGreaterThanOrEqual(6)
      for (const part of plan.parts) expect(part.count).toBeLessThanOrEqual(10_000)
      expectDisjointAndComplete(people, plan)
    }),
  )

  it.effect("falls back to other dimensions when size ranges miss contacts with no company size", () =>
    Effect.gen(function* () {
      const sizeless = Array.from(
        { length: 500 },
        (_, i): Person => ({
          size: null,
          level: jobLevels[i % jobLevels.length]!,
          department: jobDepartments[i % jobDepartments.length]!,
          state: "TX",
        }),
      )
      const people = population(30_000, 3, sizeless)
      const plan = yield* Partitioner.plan({}, { count: counter(people), limit: 5_000 })
      expect(plan.unsplittable).toEqual([])
      for (const part of plan.parts) expect(part.count).toBeLessThanOrEqual(5_000)
      expectDisjointAndComplete(people, plan)
    }),
  )

  it.effect("reports a part no dimension can split instead of dropping it", () =>
    Effect.gen(function* () {
      const clones = Array.from(
        { length: 12_000 },
        (): Person => ({
          size: 500,
          level: "mgr",
          department: "sale",
          state: "CA",
        }),
      )
      const people = population(20_000, 11, clones)
      const plan = yield* Partitioner.plan({}, { count: counter(people) })
      expect(plan.unsplittable).toHaveLength(1)
      expect(plan.unsplittable[0]!.count).toBeGreaterThanOrEqual(12_000)
      expect(plan.unsplittable[0]!.reason).toContain("single value")
      expectDisjointAndComplete(people, plan)
    }),
  )

  it.effect("stops at maxCountRequests and reports what is left", () =>
    Effect.gen(function* () {
      const people = population(60_000, 5)
      const plan = yield* Partitioner.plan({}, { count: counter(people), maxCountRequests: 5 })
      expect(plan.countRequests).toBeLessThanOrEqual(5)
      expect(plan.unsplittable.length).toBeGreaterThan(0)
      expect(plan.unsplittable.some((part) => part.reason.includes("5 count requests"))).toBe(true)
      expectDisjointAndComplete(people, plan)
    }),
  )

  it.effect("keeps the parent's own filters in every part", () =>
    Effect.gen(function* () {
      const people = population(60_000, 9)
      const plan = yield* Partitioner.plan(
        { job_departments: ["it_is", "sale", "ops"] },
        {
          count: counter(people),
          limit: 2_000,
        },
      )
      for (const part of plan.parts) {
        for (const department of part.filters.job_departments ?? []) {
          expect(["it_is", "sale", "ops"]).toContain(department)
        }
        expect(part.filters.job_departments).toBeDefined()
      }
      expectDisjointAndComplete(
        people.filter((p) => ["it_is", "sale", "ops"].includes(p.department)),
        plan,
      )
    }),
  )

  it.effect("counts sibling queries at the same time: a plan takes a latency per level, not per query", () =>
    Effect.gen(function* () {
      const people = population(60_000, 7)
      // Each count answers after one second, as a slow provider would.
      const slow = (filters: PeopleFilters) => Effect.delay(counter(people)(filters), "1 second")
      const secondsOf = (hedgeAfter: Duration.DurationInput) =>
        Effect.gen(function* () {
          const fiber = yield* Effect.fork(Partitioner.plan({}, { count: slow, hedgeAfter }))
          let seconds = 0
          while (Option.isNone(yield* Fiber.poll(fiber)) && seconds < 60) {
            yield* TestClock.adjust("1 second")
            seconds++
          }
          const plan = yield* Fiber.join(fiber)
          expectDisjointAndComplete(people, plan)
          expect(plan.parts.length).toBeGreaterThan(4)
          return seconds
        })
      // Nothing asked ahead: the whole count, the size pieces, then every piece still too large
      // split at once: three rounds of one second, where splitting them one after another took five.
      expect(yield* secondsOf("1 minute")).toBe(3)
      // The size pieces and their own pieces asked while the whole count is in flight: two rounds.
      expect(yield* secondsOf("150 millis")).toBe(2)
    }),
  )

  describe("a slow whole count", () => {
    /** `counter`, each answer taking `millis` of the test clock; and when each count was asked. */
    const slowCounter = (people: ReadonlyArray<Person>, millis: number) => {
      const asked: Array<readonly [PeopleFilters, number]> = []
      const aheadOfNeed: Array<boolean> = []
      const count = (filters: PeopleFilters) =>
        Effect.gen(function* () {
          asked.push([filters, yield* TestClock.currentTimeMillis])
          aheadOfNeed.push(yield* FiberRef.get(RateLimit.aheadOfNeed))
          yield* Effect.sleep(millis)
          return people.filter((person) => matches(filters, person)).length
        })
      return { asked, aheadOfNeed, count }
    }

    it.effect("counts the first split beside it, a round trip sooner, with the plan unchanged", () =>
      Effect.gen(function* () {
        const people = population(30_000, 7)
        const slow = slowCounter(people, 1_000)
        const fiber = yield* Effect.fork(Partitioner.plan({}, { count: slow.count }))
        yield* TestClock.adjust("1 minute")
        const plan = yield* Fiber.join(fiber)
        // The size split's four counts were asked at 150 ms, while the whole count was in flight,
        // as requests ahead of need (the rate limiter's idle slots); the whole count was needed.
        expect(slow.asked.slice(0, 5).map(([, at]) => at)).toEqual([0, 150, 150, 150, 150])
        expect(slow.aheadOfNeed.slice(0, 5)).toEqual([false, true, true, true, true])
        const fast = yield* Partitioner.plan({}, { count: counter(people) })
        expect({ ...plan, countRequests: 0 }).toEqual({ ...fast, countRequests: 0 })
        // Some of what was asked ahead was not needed, within the plan's allowance.
        expect(plan.countRequests - fast.countRequests).toBeGreaterThan(0)
        expect(plan.countRequests - fast.countRequests).toBeLessThanOrEqual(Partitioner.maxCountsAhead)
        expectDisjointAndComplete(people, plan)
      }),
    )

    it.effect("of a query that fits: the counts asked ahead were the price, the plan one part", () =>
      Effect.gen(function* () {
        const people = population(5_000, 1)
        const slow = slowCounter(people, 1_000)
        const fiber = yield* Effect.fork(Partitioner.plan({ job_levels: ["vp"] }, { count: slow.count }))
        yield* TestClock.adjust("1 minute")
        const plan = yield* Fiber.join(fiber)
        expect(plan.parts).toEqual([{ filters: { job_levels: ["vp"] }, count: plan.total }])
        // Its split at 150 ms, their splits at 300 ms, and so on while the allowance lasted.
        expect(plan.countRequests).toBe(1 + Partitioner.maxCountsAhead)
        // A whole count that answers within hedgeAfter asks nothing more.
        const quick = slowCounter(people, 100)
        const quickFiber = yield* Effect.fork(
          Partitioner.plan({ job_levels: ["vp"] }, { count: quick.count }),
        )
        yield* TestClock.adjust("1 minute")
        expect((yield* Fiber.join(quickFiber)).countRequests).toBe(1)
        expect(quick.asked).toHaveLength(1)
      }),
    )
  })
})
