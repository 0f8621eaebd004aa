/**
 * The companies stream on the provider in memory (testing/FakeProvider.ts): its batches of keys
 * are bought at once (as pages are), each whole and in key order, and its state marks every key
 * of every batch read.
 */
import { describe, expect, it } from "@effect/vitest"
import { CreditBudget } from "@salesintel/core"
import * as Chunk from "effect/Chunk"
import * as Effect from "effect/Effect"
import * as Either from "effect/Either"
import * as Fiber from "effect/Fiber"
import * as Layer from "effect/Layer"
import * as Option from "effect/Option"
import * as Stream from "effect/Stream"
import * as TestClock from "effect/TestClock"
import * as Config from "../Config.ts"
import type * as Output from "../read/Output.ts"
import { fakeProvider } from "../testing/FakeProvider.ts"
import { companies } from "./Companies.ts"

const domains = Array.from({ length: 25 }, (_, i) => `company-${i}.example`)

const config = Either.getOrThrow(
  Config.decode({
    api_key: "test-key",
    credit_budget: 1_000,
    page_size: 10,
    concurrency: 4,
    companies: { domains },
  }),
)

describe("companies", () => {
  it.effect("buys its batches at once, each whole and in key order, and marks every key read", () =>
    Effect.gen(function* () {
      // Each request takes 100 ms of the test clock: three batches one after another take 300.
      const provider = fakeProvider({ contacts: 0, latency: "100 millis" })
      const budget = yield* CreditBudget.make(config.credit_budget)
      const fiber = yield* companies
        .read({ config, syncMode: "incremental", state: undefined, startedAt: 0 })
        .pipe(
          Stream.runCollect,
          Effect.provide(Layer.merge(provider.layer, Layer.succeed(CreditBudget.CreditBudget, budget))),
          Effect.fork,
        )
      yield* TestClock.adjust("100 millis")
      const done = yield* Fiber.poll(fiber)
      expect(Option.isSome(done)).toBe(true)
      const outputs: ReadonlyArray<Output.Output<unknown>> = Chunk.toReadonlyArray(yield* Fiber.join(fiber))
      const records = outputs.flatMap((output) =>
        output._tag === "Record" ? [(output.data as { domain: string }).domain] : [],
      )
      // The provider answers a batch's companies in its keys' order: the batches came out in turn.
      expect(records).toEqual(domains)
      const states = outputs.flatMap((output) => (output._tag === "Checkpoint" ? [output.state] : []))
      const last = states[states.length - 1] as { domains: Record<string, ReadonlyArray<string>> }
      expect(Object.values(last.domains).flat().length).toBe(25)
      expect(provider.requests.append).toBe(3)
      expect(provider.charged()).toBe(25)
    }),
  )
})

describe("companies with refresh_after_days 0", () => {
  it.effect("buys every key again on the next run, the same day, each once a run", () =>
    Effect.gen(function* () {
      const provider = fakeProvider({ contacts: 0 })
      const everyRun = Either.getOrThrow(
        Config.decode({
          api_key: "test-key",
          credit_budget: 1_000,
          page_size: 10,
          companies: { domains: [...domains, ...domains.slice(0, 5)], refresh_after_days: 0 },
        }),
      )
      const read = (state: unknown) =>
        companies.read({ config: everyRun, syncMode: "incremental", state, startedAt: 0 }).pipe(
          Stream.runCollect,
          Effect.map((outputs) => Chunk.toReadonlyArray(outputs)),
          Effect.provide(Layer.merge(provider.layer, CreditBudget.layer(1_000))),
        )
      const first = yield* read(undefined)
      expect(provider.charged()).toBe(25)
      const state = first.flatMap((output) => (output._tag === "Checkpoint" ? [output.state] : [])).at(-1)
      yield* read(state)
      expect(provider.charged()).toBe(50)
    }),
  )
})

describe("companies with domains that match no company", () => {
  const unknown = Array.from({ length: 23 }, (_, i) => `nosuch-${i}.example`)
  // Known and unknown domains interleaved, so most batches hold both.
  const mixed = domains.flatMap((domain, i) => (i < unknown.length ? [domain, unknown[i] ?? ""] : [domain]))
  const configOf = (keys: ReadonlyArray<string>, refresh?: number) =>
    Either.getOrThrow(
      Config.decode({
        api_key: "test-key",
        credit_budget: 1_000,
        page_size: 10,
        companies: { domains: keys, ...(refresh === undefined ? {} : { refresh_after_days: refresh }) },
      }),
    )
  const readOf = (
    provider: ReturnType<typeof fakeProvider>,
    keys: ReadonlyArray<string>,
    state: unknown,
    refresh?: number,
  ) =>
    Effect.gen(function* () {
      const budget = yield* CreditBudget.make(1_000)
      const outputs = yield* companies
        .read({ config: configOf(keys, refresh), syncMode: "incremental", state, startedAt: 0 })
        .pipe(
          Stream.runCollect,
          Effect.map((all) => Chunk.toReadonlyArray(all)),
          Effect.provide(Layer.merge(provider.layer, Layer.succeed(CreditBudget.CreditBudget, budget))),
        )
      return { outputs, spent: (yield* budget.snapshot).spent }
    })

  it.effect(
    "names them in one WARN (20, then how many more), charges nothing for them, and keeps them in the state",
    () =>
      Effect.gen(function* () {
        const provider = fakeProvider({ contacts: 0, unknownDomains: unknown })
        const { outputs, spent } = yield* readOf(provider, mixed, undefined)
        expect(provider.charged()).toBe(25)
        expect(spent).toBe(25)
        const warnings = outputs.flatMap((output) =>
          output._tag === "Log" && output.level === "WARN" ? [output.message] : [],
        )
        expect(warnings).toEqual([
          `23 of the 48 domains in companies.domains looked up matched no company at the provider, so nothing was charged for them: ${unknown.slice(0, 20).join(", ")} and 3 more (a domain is matched exactly: check the spelling, without www. or a path)`,
        ])
        const states = outputs.flatMap((output) => (output._tag === "Checkpoint" ? [output.state] : []))
        expect(states.at(-1)).toMatchObject({ unmatched: { domains: [...unknown].sort() } })
      }),
  )

  it.effect(
    "says nothing when every domain matched, and a later read counts the keys not known to match",
    () =>
      Effect.gen(function* () {
        const provider = fakeProvider({ contacts: 0, unknownDomains: unknown })
        const first = yield* readOf(provider, domains, undefined)
        expect(first.outputs.some((output) => output._tag === "Log" && output.level === "WARN")).toBe(false)
        const known = first.outputs
          .flatMap((output) => (output._tag === "Checkpoint" ? [output.state] : []))
          .at(-1)
        expect(known).not.toHaveProperty("unmatched")
        // Everything due again, the unknown domains added: 25 matched before, 23 never looked up.
        const second = yield* readOf(provider, mixed, known, 0)
        const tally = second.outputs.find(
          (output): output is Output.Tally => output._tag === "Tally" && output.work === "companies domains",
        )
        expect(tally?.counts).toEqual({ configured: 48, new: 23, stale: 25, unconfirmed: 23 })
        const state = second.outputs
          .flatMap((output) => (output._tag === "Checkpoint" ? [output.state] : []))
          .at(-1)
        // A third read with everything due: the 23 matched nothing when last looked up.
        const third = yield* readOf(provider, mixed, state, 0)
        const again = third.outputs.find(
          (output): output is Output.Tally => output._tag === "Tally" && output.work === "companies domains",
        )
        expect(again?.counts).toEqual({ configured: 48, new: 0, stale: 48, unconfirmed: 23 })
        expect(provider.charged()).toBe(75)
      }),
  )
})

describe("companies from a saved state dated in the future", () => {
  const now = Date.UTC(2026, 10, 24)
  const today = Math.floor(now / 86_400_000)
  const contactDomains = ["company-0.example", "company-1.example", "company-2.example"]
  const configOf = (refresh: number) =>
    Either.getOrThrow(
      Config.decode({
        api_key: "test-key",
        credit_budget: 1_000,
        page_size: 10,
        companies: { domains, from_contacts: true, refresh_after_days: refresh },
      }),
    )
  /** Every set dated ahead, as a clock that far ahead wrote them; the contacts' domains on two days. */
  const future = {
    domains: { "99999": domains },
    names: { "99999": ["acme"] },
    contact_domains: { "99998": contactDomains.slice(0, 1), "99999": contactDomains.slice(1) },
  }
  const readFrom = (
    provider: ReturnType<typeof fakeProvider>,
    state: unknown,
    syncMode: "incremental" | "full_refresh",
    refresh: number,
  ) =>
    companies
      .read({
        config: configOf(refresh),
        syncMode,
        state,
        startedAt: now,
        // The contacts of this read name companies whose domains the state holds.
        parentKeys: new Set(contactDomains),
      })
      .pipe(
        Stream.runCollect,
        Effect.map((outputs) => Chunk.toReadonlyArray(outputs)),
        Effect.provide(Layer.merge(provider.layer, CreditBudget.layer(1_000))),
      )
  const warningsOf = (outputs: ReadonlyArray<Output.Output<unknown>>) =>
    outputs.flatMap((output) => (output._tag === "Log" && output.level === "WARN" ? [output.message] : []))
  const lastState = (outputs: ReadonlyArray<Output.Output<unknown>>) =>
    outputs.flatMap((output) => (output._tag === "Checkpoint" ? [output.state] : [])).at(-1)

  it.effect(
    "is held: nothing is bought, one WARN names each set's path and day, the state carries it on",
    () =>
      Effect.gen(function* () {
        const provider = fakeProvider({ contacts: 0 })
        // Before: the read failed (StateError at domains.99999), with no checkpoint.
        const outputs = yield* readFrom(provider, future, "incremental", 30)
        expect(provider.charged()).toBe(0)
        expect(outputs.filter((output) => output._tag === "Record")).toHaveLength(0)
        expect(warningsOf(outputs)).toEqual([
          "the saved state's domains.99999 is dated 2243-10-16, after today (2026-11-24): its 25 domains are held as bought and not due until then; names.99999 is dated 2243-10-16: its 1 name is held as bought and not due until then; contact_domains.99998 is dated 2243-10-15 (and 1 later days, to 2243-10-16): its 3 contact domains are held as bought and not due until then; if the worker's clock was wrong, remove the stream's state to start it afresh",
        ])
        const state = lastState(outputs)
        expect(state).toMatchObject(future)
        // The next read holds them again.
        const again = yield* readFrom(provider, state, "incremental", 30)
        expect(provider.charged()).toBe(0)
        expect(lastState(again)).toMatchObject(future)
      }),
  )

  it.effect("a full refresh, or refresh_after_days 0, buys them again, says so, and dates them today", () =>
    Effect.gen(function* () {
      for (const [syncMode, refresh] of [
        ["full_refresh", 30],
        ["incremental", 0],
      ] as const) {
        const provider = fakeProvider({ contacts: 0 })
        const outputs = yield* readFrom(provider, future, syncMode, refresh)
        expect(provider.charged()).toBe(domains.length)
        const [warning, ...more] = warningsOf(outputs)
        expect(more).toEqual([])
        expect(warning).toContain("its 25 domains are due all the same (")
        const state = lastState(outputs) as { domains: Record<string, ReadonlyArray<string>> }
        expect(Object.keys(state.domains)).toEqual([String(today)])
      }
    }),
  )
})
