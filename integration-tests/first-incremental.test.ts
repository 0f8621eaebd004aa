/**
 * The first incremental read of a search with nothing bought reads it directly through the
 * credited search: the same credits and the same bought ids as the free listing's path, in fewer
 * requests, and a rerun with its state buys nothing. The listing's path is forced by a state
 * holding one fresh id no search returns.
 *
 * 75,000 contacts: the smallest round size where the engineering search (10,464 contacts) passes
 * the 10,000-deep paging limit, so that it is read through partitions; each read has a key of its
 * own, whose counters are that read's.
 */
import { Commands } from "@salesintel/source"
import * as Effect from "effect/Effect"
import * as Either from "effect/Either"
import * as Stream from "effect/Stream"
import { beforeAll, describe, expect, it } from "vitest"
import { messageProblems } from "../packages/airbyte/src/testing/AirbyteSchema.ts"
import { boughtIds } from "../packages/source/src/testing/BoughtIds.ts"
import { fastPace, sandboxForFile } from "./sandbox.ts"

const sandbox = sandboxForFile({ seed: 42, contacts: 75_000, companies: 7_500 })

const today = Math.floor(Date.now() / 86_400_000)
const outsider = "m-bought-elsewhere"
/** A state whose only bought contact is fresh and outside every search: the listing's path. */
const listingState = { known: { [String(today)]: [outsider] } }

/** A config with a new key: each read's counters are its own. */
const configFor = (searches: ReadonlyArray<unknown>, overrides: Record<string, unknown> = {}) => ({
  api_key: sandbox.key(),
  base_url: sandbox.url,
  credit_budget: 100_000,
  requests_per_minute: fastPace,
  retry: { initial_delay_ms: 5, max_delay_ms: 50 },
  contacts: { searches },
  ...overrides,
})
const catalog = {
  streams: [
    { stream: { name: "contacts" }, sync_mode: "incremental", destination_sync_mode: "append_dedup" },
  ],
}

const readContacts = async (config: ReturnType<typeof configFor>, stateOfContacts?: unknown) => {
  const state =
    stateOfContacts === undefined
      ? undefined
      : [
          {
            type: "STREAM",
            stream: { stream_descriptor: { name: "contacts" }, stream_state: stateOfContacts },
          },
        ]
  const prepared = Either.getOrThrow(Commands.prepareRead({ config, catalog, state }))
  const messages = [
    ...(await Effect.runPromise(
      Stream.runCollect(prepared.read.messages).pipe(Effect.provide(Commands.layerFor(prepared.config))),
    )),
  ]
  for (const message of messages) expect(messageProblems(message)).toEqual([])
  const ids = messages.flatMap((m) => (m.type === "RECORD" ? [String(m.record.data.match_id)] : []))
  const states = messages.flatMap((m) => (m.type === "STATE" ? [m.state.stream.stream_state] : []))
  const last = states.at(-1) as { known: unknown } | undefined
  return {
    ids,
    known: boughtIds(last?.known),
    lastState: last,
    logs: messages.flatMap((m) => (m.type === "LOG" ? [m.log.message] : [])),
    failed: messages.some((m) => m.type === "TRACE" && m.trace.type === "ERROR"),
    credits: sandbox.charged(config.api_key),
    requests: sandbox.requestCount(config.api_key),
    searches: sandbox.requests(config.api_key)["people.search"]?.["200"] ?? 0,
    previews: sandbox.requests(config.api_key)["people.preview"]?.["200"] ?? 0,
  }
}

const cases = [
  {
    label: "a search that fits one query",
    search: { name: "it-vps", filters: { job_departments: ["it_is"], job_levels: ["vp"] } },
  },
  {
    label: "a search read through partitions",
    search: { name: "engineering", filters: { job_departments: ["enrd"] } },
  },
]

describe("the first incremental read", () => {
  // A small read first, with a key of its own: the sandbox's and the source's first requests are
  // slow (cold code), and a search's count that takes past the planner's 150 ms asks up to 24 more
  // counts beside it (Partitioner's hedge), which the first case would count as its own requests.
  beforeAll(async () => {
    const warm = await readContacts(configFor([cases[0]?.search], { credit_budget: 50 }))
    expect(warm.failed).toBe(false)
  })

  // Each case in three steps (vitest runs them in order): the direct read, the listing's read of
  // the same search compared with it, and a rerun from the direct read's state.
  for (const { label, search } of cases)
    describe(`of ${label}: same credits and bought ids as the listing, fewer requests, a rerun buys nothing`, () => {
      let direct: Awaited<ReturnType<typeof readContacts>> | undefined
      const directRead = () => {
        if (direct === undefined) throw new Error("the direct read's step did not run")
        return direct
      }

      it("reads directly through the credited search", async () => {
        direct = await readContacts(configFor([search]))
        expect(direct.failed).toBe(false)
        expect(direct.logs.some((log) => log.includes("read directly through the credited search"))).toBe(
          true,
        )
      })

      it("the listing's path buys the same, in more requests", async () => {
        const direct = directRead()
        const listing = await readContacts(configFor([search]), listingState)
        expect(listing.failed).toBe(false)
        expect(listing.logs.some((log) => log.includes("read directly"))).toBe(false)

        // Same credits, each contact once, the same records and the same bought set.
        expect(direct.credits).toBe(listing.credits)
        expect(direct.ids).toHaveLength(direct.credits)
        expect(new Set(direct.ids).size).toBe(direct.ids.length)
        expect(new Set(direct.ids)).toEqual(new Set(listing.ids))
        expect(direct.known).toEqual(new Set([...listing.known].filter((id) => id !== outsider)))
        // Fewer requests: no preview page walked. The credited requests are the same but for one
        // short page per part (the listing's batches of 50 run on across parts).
        expect(direct.requests).toBeLessThan(listing.requests * 0.6)
        expect(direct.previews).toBeLessThan(listing.previews)
      })

      it("a rerun with the direct read's state buys nothing", async () => {
        const rerun = await readContacts(configFor([search]), directRead().lastState)
        expect(rerun.failed).toBe(false)
        expect(rerun.ids).toHaveLength(0)
        expect(rerun.credits).toBe(0)
      })
    })

  it("a second search of the same run takes the listing, so an overlap is never bought twice", async () => {
    const vps = { name: "it-vps", filters: { job_departments: ["it_is"], job_levels: ["vp"] } }
    // A second search that holds the first: 2,200 IT directors and VPs (all IT, 9,000, was
    // more than the point needs).
    const wider = { name: "it-dirs", filters: { job_departments: ["it_is"], job_levels: ["dir", "vp"] } }
    const result = await readContacts(configFor([vps, wider]))
    expect(result.failed).toBe(false)
    expect(new Set(result.ids).size).toBe(result.ids.length)
    expect(result.credits).toBe(result.ids.length)
    expect(result.logs.filter((log) => log.includes("read directly"))).toHaveLength(1)
  }, 120_000)

  it("a budget that cannot cover the search is spent through the listing, to the credit", async () => {
    const search = { name: "it-vps", filters: { job_departments: ["it_is"], job_levels: ["vp"] } }
    const result = await readContacts(configFor([search], { credit_budget: 430 }))
    expect(result.logs.some((log) => log.includes("read directly"))).toBe(false)
    expect(result.credits).toBe(430)
  })
})
