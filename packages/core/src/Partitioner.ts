/**
 * Splits a contact query whose result set is deeper than paging can reach (10,000 records) into
 * disjoint sub-queries that each fit, sized with the free preview's result_count.
 *
 * Dimensions are tried in order: company size ranges (cut four ways per round at geometric points,
 * since company sizes span orders of magnitude), then job levels, job departments and US states. A
 * split is kept only if its parts' counts add up to the parent's count, which is what proves the
 * parts disjoint and complete (a contact with no company size, say, would fall out of every size
 * range: the sums disagree and the next dimension is tried instead). A part that no dimension
 * can split is reported as unsplittable, never dropped.
 *
 * Each level of counts is a round trip before the first credited page. When a count has not come
 * back within `hedgeAfter` (a slow provider), its first split is counted beside it, and so on down,
 * at most `maxCountsAhead` counts a plan: where the query needs splitting, a round trip is saved per
 * level; where it fits, the free counts already sent are the price. A fast answer asks nothing more.
 */
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as Fiber from "effect/Fiber"
import * as Ref from "effect/Ref"
import { type ApiError, Decode } from "./ApiError.ts"
import type { SalesIntelClientService } from "./Client.ts"
import {
  type JobDepartment,
  type JobLevel,
  jobDepartments,
  jobLevels,
  type PeopleFilters,
} from "./Filters.ts"
import { maxDepth } from "./Limits.ts"
import * as RateLimit from "./RateLimit.ts"

/** US states and DC, the values of company_location_states for a US split. */
export const usStates = [
  "AL",
  "AK",
  "AZ",
  "AR",
  "CA",
  "CO",
  "CT",
  "DE",
  "DC",
  "FL",
  "GA",
  "HI",
  "ID",
  "IL",
  "IN",
  "IA",
  "KS",
  "KY",
  "LA",
  "ME",
  "MD",
  "MA",
  "MI",
  "MN",
  "MS",
  "MO",
  "MT",
  "NE",
  "NV",
  "NH",
  "NJ",
  "NM",
  "NY",
  "NC",
  "ND",
  "OH",
  "OK",
  "OR",
  "PA",
  "RI",
  "SC",
  "SD",
  "TN",
  "TX",
  "UT",
  "VT",
  "VA",
  "WA",
  "WV",
  "WI",
  "WY",
] as const

/** Above any real company's employee count: the open upper end of a size range. */
export const maxCompanySize = 10_000_000

export interface Part {
  readonly filters: PeopleFilters
  readonly count: number
}

export interface Unsplittable extends Part {
  readonly reason: string
}

export interface Plan {
  /** Disjoint sub-queries, each at most `limit` records, in a stable order. */
  readonly parts: ReadonlyArray<Part>
  /** Sub-queries over the limit that could not be split further; their records are not in `parts`. */
  readonly unsplittable: ReadonlyArray<Unsplittable>
  /** The whole query's count. */
  readonly total: number
  /** How many count requests the plan took. */
  readonly countRequests: number
}

export interface Options {
  /** The count of a query: normally the preview's result_count (see previewCount). */
  readonly count: (filters: PeopleFilters) => Effect.Effect<number, ApiError>
  /** Largest part. Default 10,000 (the paging depth). */
  readonly limit?: number | undefined
  /** Most count requests a plan may take; past it, what is left is reported unsplittable. */
  readonly maxCountRequests?: number | undefined
  /** Count requests in flight at once. Default 4. */
  readonly concurrency?: number | undefined
  /** How long the whole count may take before the first split is counted beside it. Default 150 ms. */
  readonly hedgeAfter?: Duration.DurationInput | undefined
}

/** At 30 requests a second, 150 ms is the time the four counts of a size split take to send. */
const defaultHedgeAfter = Duration.millis(150)

/** A way to cut a query into pieces; None when this dimension cannot cut it any further. */
type Dimension = (filters: PeopleFilters) => ReadonlyArray<PeopleFilters> | undefined

/** Pieces a size range is cut into per round: more pieces, fewer rounds of count requests. */
const sizePieces = 4

const bySize: Dimension = (filters) => {
  const low = filters.company_min_size ?? 0
  const high = filters.company_max_size ?? maxCompanySize
  if (low >= high) return undefined
  // Geometric cut points: sizes cluster low, so cutting the range linearly would take many rounds.
  const cuts: Array<number> = []
  const ratio = (high + 1) / (low + 1)
  for (let piece = 1; piece < sizePieces; piece++) {
    const cut = Math.floor((low + 1) * ratio ** (piece / sizePieces)) - 1
    const previous = cuts.at(-1) ?? low - 1
    if (cut > previous && cut < high) cuts.push(cut)
  }
  if (cuts.length === 0) cuts.push(Math.floor((low + high) / 2))
  const bounds = [low - 1, ...cuts, high]
  return bounds.slice(1).map((upper, index) => ({
    ...filters,
    company_min_size: (bounds[index] ?? low - 1) + 1,
    company_max_size: upper,
  }))
}

/** One sub-query per value of a list filter (all its codes when the filter is not set). */
const byValues =
  <K extends "job_levels" | "job_departments" | "company_location_states", V extends string>(
    key: K,
    allValues: ReadonlyArray<V>,
  ): Dimension =>
  (filters) => {
    const current = (filters[key] as ReadonlyArray<V> | undefined) ?? allValues
    if (current.length <= 1) return undefined
    return current.map((value) => ({ ...filters, [key]: [value] }))
  }

const dimensions: ReadonlyArray<readonly [string, Dimension]> = [
  ["company size", bySize],
  ["job level", byValues<"job_levels", JobLevel>("job_levels", jobLevels)],
  ["job department", byValues<"job_departments", JobDepartment>("job_departments", jobDepartments)],
  ["US state", byValues("company_location_states", usStates)],
]

/** What splitting one query gave: its parts and what could not be split, in order. */
interface Split {
  readonly parts: ReadonlyArray<Part>
  readonly unsplittable: ReadonlyArray<Unsplittable>
}

const none: Split = { parts: [], unsplittable: [] }
const concat = (splits: ReadonlyArray<Split>): Split => ({
  parts: splits.flatMap((split) => split.parts),
  unsplittable: splits.flatMap((split) => split.unsplittable),
})

/** A query's count, and its first split's counts when they were asked before it answered. */
interface Counted {
  readonly total: number
  readonly firstSplit: ReadonlyArray<Counted> | undefined
}

/** Counts a plan may ask ahead of need (a size split and its own splits: 4 + 16, and some). */
export const maxCountsAhead = 24

export const plan = (filters: PeopleFilters, options: Options): Effect.Effect<Plan, ApiError> =>
  Effect.gen(function* () {
    const limit = options.limit ?? maxDepth
    const maxCountRequests = options.maxCountRequests ?? 2_000
    const concurrency = options.concurrency ?? 4
    const hedgeAfter = Duration.decode(options.hedgeAfter ?? defaultHedgeAfter)
    const countRequests = yield* Ref.make(0)
    const aheadLeft = yield* Ref.make(Math.min(maxCountsAhead, maxCountRequests - 1))
    const count = (query: PeopleFilters) =>
      Effect.zipRight(
        Ref.update(countRequests, (n) => n + 1),
        options.count(query),
      )

    /**
     * `query`'s count; when it has not answered within `hedgeAfter`, its first split is counted
     * beside it (as long as the plan's counts ahead last), to be used if it turns out over `limit`.
     */
    const counted = (query: PeopleFilters): Effect.Effect<Counted, ApiError> =>
      Effect.gen(function* () {
        const children = firstChildren(query)
        if (children === undefined) return { total: yield* count(query), firstSplit: undefined }
        // "waiting": the hedge sleeps; "asking": it counts the split; "answered": the query did.
        const phase = yield* Ref.make<"waiting" | "asking" | "answered">("waiting")
        const askSplit = Effect.flatMap(
          Ref.modify(aheadLeft, (left) =>
            left >= children.length ? [true, left - children.length] : [false, left],
          ),
          (affordable): Effect.Effect<ReadonlyArray<Counted> | undefined, ApiError> =>
            affordable ? Effect.forEach(children, counted, { concurrency }) : Effect.succeed(undefined),
        )
        // Its requests take only the slots no other request waits for (RateLimit.aheadOfNeed).
        const ahead = yield* Effect.fork(
          Effect.zipRight(
            Effect.sleep(hedgeAfter),
            Effect.flatMap(
              Ref.modify(phase, (now) => (now === "waiting" ? [true, "asking" as const] : [false, now])),
              (asking) => (asking ? RateLimit.asAheadOfNeed(askSplit) : Effect.succeed(undefined)),
            ),
          ),
        )
        const total = yield* Effect.onError(count(query), () => Fiber.interrupt(ahead))
        const asked = (yield* Ref.getAndSet(phase, "answered")) === "asking"
        // Under the limit the split is not needed; a hedge not yet begun will not ask it.
        if (total <= limit || !asked) {
          yield* Fiber.interrupt(ahead)
          return { total, firstSplit: undefined }
        }
        return { total, firstSplit: yield* Fiber.join(ahead) }
      })

    // Sibling queries are split at the same time (their counts overlap instead of each level
    // waiting for the one before); their parts are kept in the children's order.
    const split = (query: PeopleFilters, known: Counted): Effect.Effect<Split, ApiError> =>
      Effect.gen(function* () {
        const queryCount = known.total
        if (queryCount === 0) return none
        if (queryCount <= limit) return { parts: [{ filters: query, count: queryCount }], unsplittable: [] }
        const mismatches: Array<string> = []
        for (const [name, dimension] of dimensions) {
          const children = dimension(query)
          if (children === undefined) continue
          const early = mismatches.length === 0 ? known.firstSplit : undefined
          if (early === undefined && (yield* Ref.get(countRequests)) + children.length > maxCountRequests) {
            const reason = `the plan reached its limit of ${maxCountRequests} count requests`
            return { parts: [], unsplittable: [{ filters: query, count: queryCount, reason }] }
          }
          const counts = early ?? (yield* Effect.forEach(children, counted, { concurrency }))
          const sum = counts.reduce((total, value) => total + value.total, 0)
          if (sum !== queryCount) {
            mismatches.push(`${name} parts add up to ${sum}, not ${queryCount}`)
            continue
          }
          // Each child may split again on any dimension that still applies.
          const splits = yield* Effect.forEach(
            children,
            (child, index) => split(child, counts[index] ?? { total: 0, firstSplit: undefined }),
            { concurrency: "unbounded" },
          )
          return concat(splits)
        }
        const reason =
          mismatches.length > 0
            ? `no dimension splits it into disjoint parts (${mismatches.join("; ")})`
            : "every dimension is already down to a single value"
        return { parts: [], unsplittable: [{ filters: query, count: queryCount, reason }] }
      })

    const whole = yield* counted(filters)
    const { parts, unsplittable } = yield* split(filters, whole)
    return { parts, unsplittable, total: whole.total, countRequests: yield* Ref.get(countRequests) }
  })

/** The first dimension that can cut `filters`, as the children it cuts it into. */
const firstChildren = (filters: PeopleFilters): ReadonlyArray<PeopleFilters> | undefined => {
  for (const [, dimension] of dimensions) {
    const children = dimension(filters)
    if (children !== undefined) return children
  }
  return undefined
}

/** The count of a query from the free preview: one record per page, result_count read. */
export const previewCount =
  (client: Pick<SalesIntelClientService, "previewPeople">) =>
  (filters: PeopleFilters): Effect.Effect<number, ApiError> =>
    Effect.flatMap(client.previewPeople(filters, { page: 1, pageSize: 1 }), (page) =>
      page.resultCount === undefined
        ? new Decode({
            endpoint: "people.preview",
            path: "result_count",
            description: "a total count is needed to size the query, and the preview sent none",
          })
        : Effect.succeed(page.resultCount),
    )
