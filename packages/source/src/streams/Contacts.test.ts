/**
 * Every way the contacts stream buys, on the provider in memory (testing/FakeProvider.ts): what
 * it asks, what it is charged, what it checkpoints, and what a later read from that state buys.
 * And the plan of each read, which is the same read run dry: its credits and requests are the
 * read's, to the credit and the request.
 */
import { describe, expect, it } from "@effect/vitest"
import type { Catalog } from "@salesintel/airbyte"
import { CreditBudget } from "@salesintel/core"
import * as Chunk from "effect/Chunk"
import type * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as Either from "effect/Either"
import * as Fiber from "effect/Fiber"
import * as Layer from "effect/Layer"
import * as Option from "effect/Option"
import * as Stream from "effect/Stream"
import * as TestClock from "effect/TestClock"
import * as BoughtLedger from "../bought/BoughtLedger.ts"
import * as Config from "../Config.ts"
import * as Plan from "../read/CostPlan.ts"
import type * as Output from "../read/Output.ts"
import { fakeProvider } from "../testing/FakeProvider.ts"
import { memoryLedger } from "../testing/MemoryLedger.ts"
import { contacts } from "./Contacts.ts"
import * as KnownDone from "./contacts/KnownDone.ts"

const now = Date.UTC(2026, 10, 24)

const configOf = (contactsConfig: Record<string, unknown>, budget = 10_000) =>
  Either.getOrThrow(
    Config.decode({
      api_key: "test-key",
      credit_budget: budget,
      page_size: 10,
      concurrency: 4,
      contacts: { searches: [{ name: "all", filters: { job_levels: ["mgr"] } }], ...contactsConfig },
    }),
  )

interface Ran {
  readonly outputs: ReadonlyArray<Output.Output<unknown>>
  readonly failure: string | undefined
  /** The last checkpoint's state: what the next read starts from. */
  readonly state: unknown
}

const readWith = (
  provider: ReturnType<typeof fakeProvider>,
  config: Config.SourceConfig,
  state: unknown,
  syncMode: Catalog.SyncMode = "incremental",
  closed = false,
  ledger?: BoughtLedger.Ledger,
) =>
  Effect.gen(function* () {
    const budget = yield* CreditBudget.make(config.credit_budget)
    if (closed) yield* budget.close
    const read = contacts.read({ config, syncMode, state, startedAt: now })
    const all = yield* (
      ledger === undefined ? read : Stream.provideService(read, BoughtLedger.BoughtLedger, ledger)
    ).pipe(
      Stream.either,
      Stream.runCollect,
      Effect.provide(Layer.merge(provider.layer, Layer.succeed(CreditBudget.CreditBudget, budget))),
    )
    const elements = Chunk.toReadonlyArray(all)
    const outputs = elements.flatMap((element) => (Either.isRight(element) ? [element.right] : []))
    const checkpoints = outputs.flatMap((output) => (output._tag === "Checkpoint" ? [output.state] : []))
    return {
      outputs,
      failure: elements.flatMap((element) => (Either.isLeft(element) ? [element.left._tag] : []))[0],
      state: checkpoints.at(-1) ?? state,
    } satisfies Ran
  })

const records = (ran: Ran) => ran.outputs.filter((output) => output._tag === "Record").length
const shortfalls = (ran: Ran) =>
  ran.outputs.flatMap((output) => (output._tag === "Shortfall" ? [output.records] : []))

/** The plan of a read from `state`, then that read: the plan's figures against what it did. */
const planThenRead = (
  provider: ReturnType<typeof fakeProvider>,
  config: Config.SourceConfig,
  state: unknown,
) =>
  Effect.gen(function* () {
    const plan = yield* Plan.plan({
      config,
      state: state === undefined ? [] : [stateMessage(state)],
      mode: "exact",
      now,
    }).pipe(Effect.provide(provider.layer))
    const before = { ...provider.requests, charged: provider.charged() }
    const ran = yield* readWith(provider, config, state)
    const asked = provider.requests.search + provider.requests.preview - before.search - before.preview
    return { plan, ran, credits: provider.charged() - before.charged, requests: asked }
  })

const stateMessage = (state: unknown) => ({
  type: "STREAM",
  stream: { stream_descriptor: { name: "contacts" }, stream_state: state },
})

describe("contacts, on the provider in memory", () => {
  it.effect(
    "a first incremental read goes straight through the credited search, then buys nothing again",
    () =>
      Effect.gen(function* () {
        const provider = fakeProvider({ contacts: 95 })
        const config = configOf({})
        const first = yield* planThenRead(provider, config, undefined)
        // One count, then ten credited pages: no free listing, no purchase by ids (the plan asked
        // the free preview only, and no credited request at all).
        expect(provider.requests.search).toBe(10)
        expect(first.requests).toBe(11)
        expect(first.plan.requests).toEqual({ free: 1, credited: 10, total: 11 })
        expect(first.credits).toBe(95)
        expect(records(first.ran)).toBe(95)
        expect(first.plan.credits).toBe(95)
        expect(first.plan.requests.total).toBe(first.requests)
        const again = yield* planThenRead(provider, config, first.ran.state)
        expect(again.credits).toBe(0)
        expect(again.plan.credits).toBe(0)
        expect(again.plan.contacts?.searches[0]?.bought).toBe(95)
        expect(again.plan.requests.total).toBe(again.requests)
      }),
  )

  it.effect("a full refresh records what it bought: the incremental read after it buys nothing", () =>
    Effect.gen(function* () {
      const provider = fakeProvider({ contacts: 42 })
      const config = configOf({})
      const full = yield* readWith(provider, config, undefined, "full_refresh")
      expect(provider.charged()).toBe(42)
      const next = yield* readWith(provider, config, full.state)
      expect(provider.charged()).toBe(42)
      expect(records(next)).toBe(0)
    }),
  )

  it.effect("the free listing buys only what is not held, by match ids, and the plan says so first", () =>
    Effect.gen(function* () {
      const provider = fakeProvider({ contacts: 60 })
      const small = yield* readWith(fakeProvider({ contacts: 25 }), configOf({}), undefined)
      const run = yield* planThenRead(provider, configOf({}), small.state)
      expect(run.credits).toBe(35)
      // One count and two free listing pages (50 ids a page), then 4 purchases of up to 10 ids.
      expect(provider.requests.search).toBe(4)
      const search = run.plan.contacts?.searches[0]
      expect([search?.bought, search?.new, search?.due, search?.credits]).toEqual([25, 35, 35, 35])
      expect(run.plan.requests.total).toBe(run.requests)
    }),
  )

  it.effect("an email's contact bought by a search is not bought again; the email's own is", () =>
    Effect.gen(function* () {
      const provider = fakeProvider({ contacts: 30 })
      const held = yield* readWith(fakeProvider({ contacts: 10 }), configOf({}), undefined)
      const emails = [provider.contact(3)?.email, provider.contact(20)?.email, "nobody@example.com"]
      const config = configOf({ searches: [], emails })
      const run = yield* planThenRead(provider, config, held.state)
      expect(run.credits).toBe(1)
      expect(run.plan.contacts?.emails).toMatchObject({
        lookedUp: 3,
        matches: 2,
        bought: 1,
        new: 1,
        credits: 1,
      })
      expect(run.plan.requests.total).toBe(run.requests)
    }),
  )

  it.effect(
    "known contacts by email and match id: repeats once, no one's never charged, a rerun buys nothing",
    () =>
      Effect.gen(function* () {
        const provider = fakeProvider({ contacts: 30 })
        const held = yield* readWith(fakeProvider({ contacts: 10 }), configOf({}), undefined)
        const known = [
          { match_id: provider.contact(3)?.match_id },
          { match_id: provider.contact(21)?.match_id },
          { email: provider.contact(21)?.email },
          { email: provider.contact(22)?.email?.toUpperCase() },
          { email: provider.contact(22)?.email },
          { match_id: "no-such-id" },
          { email: "nobody@example.com" },
        ]
        const config = configOf({ searches: [], known })
        const run = yield* planThenRead(provider, config, held.state)
        expect(run.credits).toBe(2)
        expect(run.plan.credits).toBe(2)
        const said = run.ran.outputs.flatMap((output) => (output._tag === "Log" ? [output.message] : []))
        expect(said).toEqual([
          "known contacts: 6 looked up, 2 matched no one (nobody@example.com, match_id no-such-id; nothing was charged for them), 4 matched",
        ])
        const again = yield* planThenRead(provider, config, run.ran.state)
        expect(again.credits).toBe(0)
      }),
  )

  it.effect("a budget below the search's needs buys up to it and says what it left", () =>
    Effect.gen(function* () {
      const provider = fakeProvider({ contacts: 95 })
      const held = yield* readWith(fakeProvider({ contacts: 5 }), configOf({}), undefined)
      const run = yield* planThenRead(provider, configOf({}, 33), held.state)
      expect(run.credits).toBe(33)
      expect(shortfalls(run.ran)).toEqual([90 - 33])
      expect([run.plan.credits, run.plan.creditsNeeded]).toEqual([33, 90])
    }),
  )

  it.effect(
    "a full refresh of two searches cut by the budget resumes where it stopped: nothing bought twice",
    () =>
      Effect.gen(function* () {
        const searches = ["a", "b"].map((name) => ({ name, filters: { job_levels: ["mgr"] } }))
        const cut = yield* readWith(
          fakeProvider({ contacts: 95 }),
          configOf({ searches }, 33),
          undefined,
          "full_refresh",
        )
        expect(records(cut)).toBe(30)
        // The second search is not begun: its 95 are one shortfall, the first's rest another.
        expect(shortfalls(cut).reduce<number>((sum, n) => sum + (n ?? 0), 0)).toBe(65 + 95)
        const provider = fakeProvider({ contacts: 95 })
        const rest = yield* readWith(provider, configOf({ searches }), cut.state, "full_refresh")
        // The first search from its page 4 on, then the second whole (a full refresh buys each search).
        expect(provider.charged()).toBe(65 + 95)
        expect(records(rest)).toBe(65 + 95)
      }),
  )

  /** A read on a provider that takes a second a request, the test clock moved until it ends. */
  const readTimed = (
    provider: ReturnType<typeof fakeProvider>,
    config: Config.SourceConfig,
    state: unknown,
    stopAfter?: Duration.DurationInput,
  ) =>
    Effect.gen(function* () {
      const budget = yield* CreditBudget.make(config.credit_budget)
      const fiber = yield* contacts
        .read({ config, syncMode: "full_refresh", state, startedAt: now })
        .pipe(
          Stream.runCollect,
          Effect.provide(Layer.merge(provider.layer, Layer.succeed(CreditBudget.CreditBudget, budget))),
          Effect.fork,
        )
      if (stopAfter !== undefined) yield* Effect.fork(Effect.delay(budget.close, stopAfter))
      let steps = 0
      while (Option.isNone(yield* Fiber.poll(fiber)) && steps < 120) {
        yield* TestClock.adjust("500 millis")
        steps++
      }
      const outputs = Chunk.toReadonlyArray(yield* Fiber.join(fiber))
      const checkpoints = outputs.flatMap((output) => (output._tag === "Checkpoint" ? [output.state] : []))
      return { outputs, failure: undefined, state: checkpoints.at(-1) ?? state } satisfies Ran
    })

  it.effect(
    "a search refused while the pages of the one before wait to be passed on leaves that one done",
    () =>
      Effect.gen(function* () {
        // 100 credits: the first search's ten pages hold them all (the last a full page for its 5),
        // so the second's first page is refused while they are still in flight.
        const searches = ["a", "b"].map((name) => ({ name, filters: { job_levels: ["mgr"] } }))
        const config = { ...configOf({ searches }, 100), concurrency: 16 }
        const cut = yield* readTimed(fakeProvider({ contacts: 95, latency: "1 second" }), config, undefined)
        expect(records(cut)).toBe(95)
        const provider = fakeProvider({ contacts: 95, latency: "1 second" })
        yield* readTimed(provider, { ...config, credit_budget: 10_000 }, cut.state)
        // The second search alone: the first is done.
        expect(provider.charged()).toBe(95)
      }),
  )

  it.effect(
    "a stop during a full refresh of two searches resumes where it stopped: nothing bought twice",
    () =>
      Effect.gen(function* () {
        const searches = ["a", "b"].map((name) => ({ name, filters: { job_levels: ["mgr"] } }))
        const config = { ...configOf({ searches }), concurrency: 2 }
        const first = fakeProvider({ contacts: 95, latency: "1 second" })
        const cut = yield* readTimed(first, config, undefined, "3500 millis")
        expect(records(cut)).toBeGreaterThan(0)
        expect(records(cut)).toBeLessThan(95)
        const provider = fakeProvider({ contacts: 95, latency: "1 second" })
        yield* readTimed(provider, config, cut.state)
        expect(first.charged() + provider.charged()).toBe(190)
      }),
  )

  it.effect(
    "a full refresh reads its searches in turn: the next begins while the last pages are in flight",
    () =>
      Effect.gen(function* () {
        // Each request takes a second; three searches of three pages, every page in flight at once.
        const provider = fakeProvider({ contacts: 30, latency: "1 second" })
        const searches = ["a", "b", "c"].map((name) => ({ name, filters: { job_levels: ["mgr"] } }))
        const config = { ...configOf({ searches }), concurrency: 16 }
        const budget = yield* CreditBudget.make(config.credit_budget)
        const read = contacts
          .read({ config, syncMode: "full_refresh", state: undefined, startedAt: now })
          .pipe(
            Stream.runCollect,
            Effect.provide(Layer.merge(provider.layer, Layer.succeed(CreditBudget.CreditBudget, budget))),
          )
        const fiber = yield* Effect.fork(read)
        let seconds = 0
        while (Option.isNone(yield* Fiber.poll(fiber)) && seconds < 30) {
          yield* TestClock.adjust("1 second")
          seconds++
        }
        // The counts, then every search's pages at once: two latencies (one after another: four).
        expect(seconds).toBe(2)
        const outputs = Chunk.toReadonlyArray(yield* Fiber.join(fiber))
        const searched = outputs.flatMap((output) =>
          output._tag === "Record" ? [String(output.data._salesintel_search)] : [],
        )
        expect(searched).toEqual([...Array(30).fill("a"), ...Array(30).fill("b"), ...Array(30).fill("c")])
        expect(provider.charged()).toBe(90)
      }),
  )

  it.effect("a stop requested before the read: nothing is asked, nothing charged, the state kept", () =>
    Effect.gen(function* () {
      const provider = fakeProvider({ contacts: 20 })
      const state = { known: { "20000": ["m-1"] }, emails: {} }
      const ran = yield* readWith(provider, configOf({}), state, "incremental", true)
      expect(provider.requests).toEqual({ search: 0, preview: 0, append: 0 })
      expect(ran.state).toEqual(state)
    }),
  )

  it.effect(
    "a 402 mid-search: what landed is checkpointed before the failure, and the rerun buys only the rest",
    () =>
      Effect.gen(function* () {
        const failing = fakeProvider({ contacts: 95, paymentRequiredOnPage: 4 })
        const config = { ...configOf({}), concurrency: 1 }
        const cut = yield* readWith(failing, config, undefined)
        expect(cut.failure).toBe("PaymentRequired")
        expect(cut.outputs.at(-1)?._tag).toBe("Checkpoint")
        expect(failing.charged()).toBe(30)
        const provider = fakeProvider({ contacts: 95 })
        yield* readWith(provider, config, cut.state)
        expect(provider.charged()).toBe(65)
      }),
  )

  it.effect("sizes every search and looks up every email at once, before the first credit", () =>
    Effect.gen(function* () {
      // Each request takes a second; three searches and two emails are the free work of the read.
      const provider = fakeProvider({ contacts: 30, latency: "1 second" })
      const searches = ["a", "b", "c"].map((name) => ({ name, filters: { job_levels: ["mgr"] } }))
      const config = configOf({ searches, emails: [provider.contact(1)?.email, provider.contact(2)?.email] })
      const budget = yield* CreditBudget.make(config.credit_budget)
      const untilEstimate = contacts
        .read({ config, syncMode: "incremental", state: undefined, startedAt: now })
        .pipe(
          Stream.takeUntil((output) => output._tag === "Estimate"),
          Stream.runDrain,
          Effect.provide(Layer.merge(provider.layer, Layer.succeed(CreditBudget.CreditBudget, budget))),
        )
      const fiber = yield* Effect.fork(untilEstimate)
      let seconds = 0
      while (Option.isNone(yield* Fiber.poll(fiber)) && seconds < 30) {
        yield* TestClock.adjust("1 second")
        seconds++
      }
      // One latency for all five (the searches one after another, then the emails, took four).
      expect(seconds).toBe(1)
      expect(provider.requests.search).toBe(0)
    }),
  )
})

/**
 * A ledger in memory, written as the loader writes `_bought`: a row for every record emitted (the
 * records a checkpoint covers commit with it), the later day kept. Counts what it was asked.
 */
const ledgerOfRun = () => {
  const memory = memoryLedger()
  const commit = (ran: Ran) => {
    for (const output of ran.outputs)
      if (output._tag === "Record")
        memory.rows.set(String(output.data.match_id), Math.floor(now / 86_400_000))
      else if (output._tag === "KnownDone")
        for (const key of output.keys) memory.done.set(key, Math.floor(now / 86_400_000))
  }
  return { ...memory, commit }
}

describe("contacts with the bought set in a ledger (salesintel sync)", () => {
  it.effect("the state says 'ledger', a checkpoint comes after every page, and a rerun buys nothing", () =>
    Effect.gen(function* () {
      const provider = fakeProvider({ contacts: 95 })
      const { ledger, rows, commit } = ledgerOfRun()
      const first = yield* readWith(provider, configOf({}), undefined, "incremental", false, ledger)
      commit(first)
      expect(first.state).toMatchObject({ known: "ledger" })
      expect(JSON.stringify(first.state).length).toBeLessThan(200)
      // Ten credited pages of 10: a checkpoint after each (under 2,500 held, every page).
      const checkpoints = first.outputs.filter((output) => output._tag === "Checkpoint").length
      expect(checkpoints).toBeGreaterThanOrEqual(10)
      expect(rows.size).toBe(95)
      const again = yield* readWith(provider, configOf({}), first.state, "incremental", false, ledger)
      expect(provider.charged()).toBe(95)
      expect(records(again)).toBe(0)
    }),
  )

  it.effect("a rerun asks the ledger about the ids it lists only, whatever else it holds", () =>
    Effect.gen(function* () {
      const provider = fakeProvider({ contacts: 95 })
      const { ledger, rows, asked, commit } = ledgerOfRun()
      commit(yield* readWith(provider, configOf({}), undefined, "incremental", false, ledger))
      // Held from elsewhere (other searches, earlier years): never read by this run.
      for (let index = 0; index < 20_000; index++) rows.set(`other-${index}`, Math.floor(now / 86_400_000))
      expect(asked).toEqual([])
      const state = { known: "ledger" }
      const again = yield* readWith(provider, configOf({}), state, "incremental", false, ledger)
      expect(records(again)).toBe(0)
      expect(provider.charged()).toBe(95)
      // The 95 listed ids, a page at a time.
      expect(asked.reduce((sum, keys) => sum + keys, 0)).toBe(95)
      expect(Math.max(...asked)).toBeLessThanOrEqual(100)
    }),
  )

  it.effect("emails look their contacts up in the ledger: one bought by a search is not bought again", () =>
    Effect.gen(function* () {
      const provider = fakeProvider({ contacts: 30 })
      const { ledger, asked, commit } = ledgerOfRun()
      commit(yield* readWith(provider, configOf({}), undefined, "incremental", false, ledger))
      expect(provider.charged()).toBe(30)
      const emails = [provider.contact(3)?.email, provider.contact(20)?.email, "nobody@example.com"]
      const run = yield* readWith(
        provider,
        configOf({ searches: [], emails }),
        { known: "ledger" },
        "incremental",
        false,
        ledger,
      )
      expect(run.failure).toBeUndefined()
      expect(records(run)).toBe(0)
      expect(provider.charged()).toBe(30)
      // Once, as they are looked up: what that said is kept until the emails are marked done.
      expect(asked).toEqual([2])
    }),
  )

  it.effect(
    "known contacts done go out as records before their checkpoint: the state says 'ledger', a rerun looks up none",
    () =>
      Effect.gen(function* () {
        const provider = fakeProvider({ contacts: 30 })
        const { ledger, done, adoptedDone, askedDone, commit } = ledgerOfRun()
        const emails = [provider.contact(3)?.email, provider.contact(20)?.email, "nobody@example.com"]
        const config = configOf({ searches: [], emails })
        // A state from before the ledger: its identities move into it first.
        const saved = {
          known: {},
          emails: { [String(Math.floor(now / 86_400_000) - 1)]: ["old@example.com"] },
        }
        const first = yield* readWith(provider, config, saved, "incremental", false, ledger)
        expect(first.failure).toBeUndefined()
        expect(adoptedDone.map(([key]) => key)).toEqual(["old@example.com"])
        expect(first.state).toMatchObject({ known: "ledger", emails: "ledger" })
        const tags = first.outputs.map((output) => output._tag)
        const marked = tags.indexOf("KnownDone")
        expect(tags.slice(marked + 1)).toContain("Checkpoint")
        const keys = first.outputs.flatMap((output) => (output._tag === "KnownDone" ? output.keys : []))
        expect([...keys].sort()).toEqual([...emails].map(String).sort())
        expect(records(first)).toBe(2)
        commit(first)
        expect(done.size).toBe(4)
        const previews = provider.requests.preview
        const again = yield* readWith(provider, config, first.state, "incremental", false, ledger)
        expect(again.failure).toBeUndefined()
        expect(provider.requests.preview).toBe(previews)
        expect(again.outputs.some((output) => output._tag === "KnownDone")).toBe(false)
        // Asked once each by the check before the read and by the read: a chunk at a time.
        expect(askedDone.slice(-2)).toEqual([3, 3])
        // Without the ledger, a state that says it is there is refused, never read as empty.
        const piped = yield* readWith(provider, config, { known: {}, emails: "ledger" }, "incremental", false)
        expect(piped.failure).toBe("StateError")
        const refused = yield* Effect.flip(KnownDone.saved("ledger", 20_000, undefined, true))
        expect(refused.message).toContain("not readable at emails")
        expect(refused.message).toContain("_known_done")
      }),
  )

  it.effect(
    "a full refresh moves no identity of the state into the ledger, and looks every one up again",
    () =>
      Effect.gen(function* () {
        const provider = fakeProvider({ contacts: 30 })
        const { ledger, done, adoptedDone, commit } = ledgerOfRun()
        const emails = [provider.contact(3)?.email, "nobody@example.com"]
        const day = String(Math.floor(now / 86_400_000))
        // A state from before the ledger, its set naming one configured email and one no longer configured.
        const saved = { known: {}, emails: { [day]: [String(emails[0]), "old@example.com"] } }
        const full = yield* readWith(
          provider,
          configOf({ searches: [], emails }),
          saved,
          "full_refresh",
          false,
          ledger,
        )
        expect(full.failure).toBeUndefined()
        expect(adoptedDone).toEqual([])
        expect(records(full)).toBe(1)
        commit(full)
        expect([...done.keys()].sort()).toEqual([...emails].map(String).sort())
      }),
  )

  it.effect("keeps no held key it met: a second search listing the same contacts looks them up again", () =>
    Effect.gen(function* () {
      const provider = fakeProvider({ contacts: 95 })
      const { ledger, asked, commit } = ledgerOfRun()
      commit(yield* readWith(provider, configOf({}), undefined, "incremental", false, ledger))
      expect(provider.charged()).toBe(95)
      // Both searches list all 95 contacts (the provider in memory matches every filter).
      const twoSearches = configOf({
        searches: [
          { name: "all", filters: { job_levels: ["mgr"] } },
          { name: "again", filters: { job_levels: ["dir"] } },
        ],
      })
      const again = yield* readWith(provider, twoSearches, { known: "ledger" }, "incremental", false, ledger)
      expect(again.failure).toBeUndefined()
      expect(records(again)).toBe(0)
      expect(provider.charged()).toBe(95)
      // What the first search's lookups said was dropped once its pages were sorted.
      expect(asked.reduce((sum, keys) => sum + keys, 0)).toBe(190)
    }),
  )

  it.effect("a state that holds ids moves them into the ledger: nothing is bought again", () =>
    Effect.gen(function* () {
      const provider = fakeProvider({ contacts: 60 })
      const piped = yield* readWith(fakeProvider({ contacts: 25 }), configOf({}), undefined)
      expect(Object.keys(piped.state as object)).toContain("known")
      const { ledger, adopted, commit } = ledgerOfRun()
      const run = yield* readWith(provider, configOf({}), piped.state, "incremental", false, ledger)
      commit(run)
      expect(adopted).toHaveLength(25)
      expect(provider.charged()).toBe(35)
      expect(run.state).toMatchObject({ known: "ledger" })
      const again = yield* readWith(provider, configOf({}), run.state, "incremental", false, ledger)
      expect(provider.charged()).toBe(35)
      expect(records(again)).toBe(0)
    }),
  )

  it.effect("a 'ledger' state without the ledger is refused, and nothing is bought", () =>
    Effect.gen(function* () {
      const provider = fakeProvider({ contacts: 20 })
      const ran = yield* readWith(provider, configOf({}), { known: "ledger" })
      expect(ran.failure).toBe("StateError")
      expect(provider.charged()).toBe(0)
    }),
  )
})

describe("refresh_after_days 0: bought again on every run, once a run", () => {
  const searches = ["a", "b"].map((name) => ({ name, filters: { job_levels: ["mgr"] } }))
  const emailsOf = (provider: ReturnType<typeof fakeProvider>) => [provider.contact(3)?.email]

  it.effect(
    "from a state: two searches and an email finding the same contacts buy each once, and again the next run",
    () =>
      Effect.gen(function* () {
        const provider = fakeProvider({ contacts: 25 })
        const config = configOf({ searches, emails: emailsOf(provider), refresh_after_days: 0 })
        const first = yield* planThenRead(provider, config, undefined)
        expect([first.credits, first.plan.credits, records(first.ran)]).toEqual([25, 25, 25])
        // The same day: what the first run bought was bought at an earlier time, so it is due.
        const again = yield* planThenRead(provider, config, first.ran.state)
        expect([again.credits, again.plan.credits, records(again.ran)]).toEqual([25, 25, 25])
        expect(again.plan.requests.total).toBe(again.requests)
      }),
  )

  it.effect("in a ledger: the same, each contact once a run", () =>
    Effect.gen(function* () {
      const provider = fakeProvider({ contacts: 25 })
      const config = configOf({ searches, emails: emailsOf(provider), refresh_after_days: 0 })
      const { ledger, commit } = ledgerOfRun()
      const first = yield* readWith(provider, config, undefined, "incremental", false, ledger)
      commit(first)
      expect([provider.charged(), records(first)]).toEqual([25, 25])
      const again = yield* readWith(provider, config, first.state, "incremental", false, ledger)
      expect([provider.charged(), records(again)]).toEqual([50, 25])
    }),
  )
})

describe("a saved state whose day is in the future", () => {
  const today = Math.floor(now / 86_400_000)
  const warnings = (ran: Ran) =>
    ran.outputs.flatMap((output) =>
      output._tag === "Log" && output.level === "WARN" ? [output.message] : [],
    )
  /** A read from `state` on day `day` (the tests' own day when left out). */
  const readOn = (
    provider: ReturnType<typeof fakeProvider>,
    config: Config.SourceConfig,
    state: unknown,
    day: number,
  ) =>
    contacts.read({ config, syncMode: "incremental", state, startedAt: day * 86_400_000 }).pipe(
      Stream.runCollect,
      Effect.map(
        (outputs) => Chunk.toReadonlyArray(outputs).filter((output) => output._tag === "Record").length,
      ),
      Effect.provide(Layer.merge(provider.layer, CreditBudget.layer(10_000))),
    )
  /** Every contact of a first read, and its email, moved to `day`: as a clock that far ahead wrote them. */
  const datedAhead = (provider: ReturnType<typeof fakeProvider>, day: string) => ({
    known: { [day]: Array.from({ length: 25 }, (_, i) => provider.contact(i)?.match_id ?? "") },
    emails: { [day]: [provider.contact(3)?.email ?? ""] },
  })

  it.effect(
    "is held: nothing is bought, one WARN names each set's path and day, the state carries it on",
    () =>
      Effect.gen(function* () {
        const provider = fakeProvider({ contacts: 25 })
        const config = configOf({ refresh_after_days: 30, emails: [provider.contact(3)?.email] })
        const future = datedAhead(provider, "99999")
        const ran = yield* readWith(provider, config, future)
        // Before: the read failed (StateError at known.99999), with no checkpoint.
        expect(ran.failure).toBeUndefined()
        expect([provider.charged(), records(ran)]).toEqual([0, 0])
        expect(warnings(ran)).toEqual([
          "the saved state's known.99999 is dated 2243-10-16, after today (2026-11-24): its 25 contacts are held as bought and not due until then; emails.99999 is dated 2243-10-16: its 1 email is held as bought and not due until then; if the worker's clock was wrong, remove the stream's state to start it afresh",
        ])
        // The sets as they were; beside them, the search's last read (what a quick plan estimates from).
        expect(ran.state).toEqual({
          ...future,
          searches: { all: expect.objectContaining({ matches: 25, held: 25 }) },
        })
        // Held on every read until the day has passed and aged refresh_after_days.
        const again = yield* readWith(provider, config, ran.state)
        expect([provider.charged(), records(again)]).toEqual([0, 0])
        expect(yield* readOn(provider, config, ran.state, 99_999 + 29)).toBe(0)
        expect(provider.charged()).toBe(0)
        expect(yield* readOn(provider, config, ran.state, 99_999 + 30)).toBe(25)
        expect(provider.charged()).toBe(25)
      }),
  )

  it.effect("in a ledger (salesintel sync): what its rows date ahead is held, and said", () =>
    Effect.gen(function* () {
      const provider = fakeProvider({ contacts: 25 })
      const ids = Array.from({ length: 25 }, (_, i) => provider.contact(i)?.match_id ?? "")
      // Rows fetched by a worker whose clock ran ahead: 20 on two days ahead, 5 before today.
      const { ledger } = memoryLedger(ids.map((id, i) => [id, i < 5 ? today - 3 : today + 1_000 + (i % 2)]))
      const ran = yield* readWith(
        provider,
        configOf({ refresh_after_days: 30 }),
        { known: "ledger" },
        "incremental",
        false,
        ledger,
      )
      expect([ran.failure, provider.charged(), records(ran)]).toEqual([undefined, 0, 0])
      expect(warnings(ran)).toEqual([
        "the ledger (_bought) dates 20 contacts 2029-08-20 (and 1 later days, to 2029-08-21), after today (2026-11-24): they are held as bought and not due until then; if the worker's clock was wrong, remove the stream's state to start it afresh (salesintel sync --reset-state with the stream's name)",
      ])
    }),
  )

  it.effect(
    "in a ledger (salesintel sync): the known identities _known_done dates ahead are held, and said",
    () =>
      Effect.gen(function* () {
        const provider = fakeProvider({ contacts: 25 })
        const emails = [
          provider.contact(3)?.email ?? "",
          provider.contact(4)?.email ?? "",
          "nobody@example.com",
        ]
        // Two identities done on a day a clock ahead wrote, one looked up yesterday.
        const { ledger } = memoryLedger(
          [],
          emails.map((email, i) => [email, i < 2 ? today + 1_000 : today - 1]),
        )
        const config = configOf({ refresh_after_days: 30, searches: [], emails })
        const ran = yield* readWith(
          provider,
          config,
          { known: "ledger", emails: "ledger" },
          "incremental",
          false,
          ledger,
        )
        expect([ran.failure, provider.charged(), provider.requests.preview]).toEqual([undefined, 0, 0])
        expect(warnings(ran)).toEqual([
          "the ledger (_known_done) dates 2 identities 2029-08-20, after today (2026-11-24): they are held as bought and not due until then; if the worker's clock was wrong, remove the stream's state to start it afresh (salesintel sync --reset-state with the stream's name)",
        ])
        // A full refresh looks every identity up again: nothing to say.
        const full = yield* readWith(
          provider,
          config,
          { known: "ledger", emails: "ledger" },
          "full_refresh",
          false,
          ledger,
        )
        expect([full.failure, warnings(full)]).toEqual([undefined, []])
      }),
  )

  it.effect("tomorrow is not ahead: held, and nothing said", () =>
    Effect.gen(function* () {
      const provider = fakeProvider({ contacts: 25 })
      const ran = yield* readWith(
        provider,
        configOf({ refresh_after_days: 1 }),
        datedAhead(provider, String(today + 1)),
      )
      expect([ran.failure, provider.charged(), warnings(ran)]).toEqual([undefined, 0, []])
    }),
  )

  it.effect("the largest day a state can say (999999, in 4707) is held: no overflow, no NaN", () =>
    Effect.gen(function* () {
      const provider = fakeProvider({ contacts: 25 })
      const future = datedAhead(provider, "999999")
      const ran = yield* readWith(provider, configOf({ refresh_after_days: 365 }), future)
      expect([ran.failure, provider.charged()]).toEqual([undefined, 0])
      expect(warnings(ran).join("")).toContain("known.999999 is dated 4707-11-28, after today (2026-11-24)")
      // The sets as they were; beside them, the search's last read (what a quick plan estimates from).
      expect(ran.state).toEqual({
        ...future,
        searches: { all: expect.objectContaining({ matches: 25, held: 25 }) },
      })
      // One digit more is not a day: refused with its path, as before.
      const wider = yield* readWith(provider, configOf({}), { known: { "1000000": ["m-1"] } })
      expect(wider.failure).toBe("StateError")
      expect(provider.charged()).toBe(0)
    }),
  )

  it.effect("a full refresh, or refresh_after_days 0, buys them again, says so, and dates them today", () =>
    Effect.gen(function* () {
      for (const [syncMode, refresh] of [
        ["full_refresh", 30],
        ["incremental", 0],
      ] as const) {
        const provider = fakeProvider({ contacts: 25 })
        const config = configOf({ refresh_after_days: refresh })
        const ran = yield* readWith(provider, config, datedAhead(provider, "99999"), syncMode)
        expect([ran.failure, provider.charged(), records(ran)]).toEqual([undefined, 25, 25])
        expect(warnings(ran)).toHaveLength(1)
        expect(warnings(ran)[0]).toMatch(
          /^the saved state's known\.99999 is dated 2243-10-16, after today \(2026-11-24\): its 25 contacts are due all the same \(/,
        )
        expect(Object.keys((ran.state as { known: object }).known)).toEqual([String(today)])
      }
    }),
  )
})
