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
import type * as Output from "../Output.ts"
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
