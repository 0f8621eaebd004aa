/**
 * `companies.from_contacts` through the pipe (no target: the state alone carries the run), on the
 * provider in memory (testing/FakeProvider.ts, where contact i works at company-<i % 10>.example):
 * the companies of the contacts bought are appended after them, within the budget; what the budget
 * left waits in the state and the next run buys exactly it; a run with nothing new spends nothing;
 * and the plan, the read run dry, says each run's credits first.
 */
import { describe, expect, it } from "@effect/vitest"
import { Catalog } from "@salesintel/airbyte"
import { CreditBudget } from "@salesintel/core"
import * as Chunk from "effect/Chunk"
import * as Effect from "effect/Effect"
import * as Either from "effect/Either"
import * as Layer from "effect/Layer"
import * as Schema from "effect/Schema"
import * as Stream from "effect/Stream"
import * as Config from "../../Config.ts"
import * as Plan from "../../read/CostPlan.ts"
import { read } from "../../read/Read.ts"
import { fakeProvider } from "../../testing/FakeProvider.ts"

const configWith = (budget: number, companies: Record<string, unknown>) =>
  Either.getOrThrow(
    Config.decode({
      api_key: "test-key",
      credit_budget: budget,
      page_size: 4,
      contacts: { searches: [{ name: "all", filters: { job_levels: ["mgr"] } }] },
      companies: { from_contacts: true, ...companies },
    }),
  )

const catalog = Schema.decodeUnknownSync(Catalog.ConfiguredCatalog)({
  // Companies listed first: a substream is read after its parent whatever the catalog's order.
  streams: ["companies", "contacts"].map((name) => ({
    stream: { name },
    sync_mode: "incremental",
    destination_sync_mode: "append_dedup",
  })),
})

type States = ReadonlyMap<string, unknown>

/** One read through the pipe from `states`: what it charged, the companies it emitted, the states after it. */
const runOnce = (provider: ReturnType<typeof fakeProvider>, config: Config.SourceConfig, states: States) =>
  Effect.gen(function* () {
    const before = provider.charged()
    const planned = yield* Plan.plan({ config, state: Object.fromEntries(states), mode: "exact", now: 0 })
    expect(provider.charged()).toBe(before)
    const budget = yield* CreditBudget.make(config.credit_budget)
    const items = yield* read({ config, catalog, state: states, startedAt: 0 }).items.pipe(
      Stream.runCollect,
      Effect.provide(Layer.succeed(CreditBudget.CreditBudget, budget)),
    )
    const messages = Chunk.toReadonlyArray(items).flatMap((item) =>
      item._tag === "Message" ? [item.message] : [],
    )
    const after = new Map(states)
    for (const message of messages)
      if (message.type === "STATE" && message.state.stream !== undefined)
        after.set(message.state.stream.stream_descriptor.name, message.state.stream.stream_state)
    const warnings = messages.flatMap((message) =>
      message.type === "LOG" && message.log.level === "WARN" ? [message.log.message] : [],
    )
    const companies = messages.flatMap((message) =>
      message.type === "RECORD" && message.record.stream === "companies"
        ? [String((message.record.data as { domain?: unknown }).domain)]
        : [],
    )
    const order = messages.flatMap((message) => (message.type === "RECORD" ? [message.record.stream] : []))
    return {
      charged: provider.charged() - before,
      planned,
      companies,
      order,
      warnings,
      states: after as States,
    }
  }).pipe(Effect.provide(provider.layer))

describe("companies from contacts, through the pipe", () => {
  it.effect(
    "appends the contacts' companies after them, keeps what the budget left, buys exactly it next",
    () =>
      Effect.gen(function* () {
        const provider = fakeProvider({ contacts: 30 })
        // 30 contacts at 10 companies; the budget leaves 4 companies for later.
        const first = yield* runOnce(provider, configWith(36, {}), new Map())
        expect(first.charged).toBe(36)
        expect(first.planned.credits).toBe(36)
        expect(first.companies).toHaveLength(6)
        expect(first.order.indexOf("companies")).toBeGreaterThan(first.order.lastIndexOf("contacts"))
        const fromContacts = first.planned.works.find((work) => work.work === "companies from contacts")
        expect(fromContacts?.counts).toMatchObject({ listed: 10, new: 10, held: 0 })
        const pending = (first.states.get("companies") as { pending_contact_domains: ReadonlyArray<string> })
          .pending_contact_domains
        expect(pending).toHaveLength(4)

        // Nothing new among the contacts: the pending four alone, as planned.
        const second = yield* runOnce(provider, configWith(1_000, {}), first.states)
        expect(second.planned.credits).toBe(4)
        expect(second.charged).toBe(4)
        expect([...second.companies].sort()).toEqual([...pending].sort())
        expect(
          second.planned.works.find((work) => work.work === "companies from contacts")?.counts,
        ).toMatchObject({
          listed: 10,
          held: 6,
          new: 4,
        })

        const third = yield* runOnce(provider, configWith(1_000, {}), second.states)
        expect([third.planned.credits, third.charged]).toEqual([0, 0])
      }),
  )

  it.effect("buys a configured domain once, and refreshes the contacts' companies when they are due", () =>
    Effect.gen(function* () {
      const provider = fakeProvider({ contacts: 30 })
      const config = configWith(1_000, { domains: ["Company-3.example"], refresh_after_days: 30 })
      const first = yield* runOnce(provider, config, new Map())
      // 30 contacts and their 10 companies, company-3 bought once (as configured).
      expect(first.charged).toBe(40)
      expect(first.companies.filter((domain) => domain === "company-3.example")).toHaveLength(1)
      expect(
        first.planned.works.find((work) => work.work === "companies from contacts")?.counts,
      ).toMatchObject({
        earlier: 1,
        new: 9,
      })
      // 31 days later every company is due again (the contacts are kept as bought: no refresh set
      // for them), each bought once more, whether configured or named by a contact.
      const later = yield* Effect.gen(function* () {
        const states = Object.fromEntries(first.states)
        const planned = yield* Plan.plan({ config, state: states, mode: "exact", now: 31 * 86_400_000 })
        return planned
      }).pipe(Effect.provide(provider.layer))
      expect(later.credits).toBe(10)
      expect(later.refresh.companies).toBe(10)
    }),
  )

  it.effect("names a contact's company domain that matched no company, and does not ask for it again", () =>
    Effect.gen(function* () {
      const provider = fakeProvider({ contacts: 30, unknownDomains: ["company-7.example"] })
      const first = yield* runOnce(provider, configWith(1_000, {}), new Map())
      expect(first.charged).toBe(39)
      expect(first.warnings).toContainEqual(
        expect.stringContaining(
          "1 of the 10 domains of your contacts' companies (from_contacts) looked up matched no company at the provider, so nothing was charged for it: company-7.example",
        ),
      )
      const again = yield* runOnce(provider, configWith(1_000, {}), first.states)
      expect([again.planned.credits, again.charged]).toEqual([0, 0])
    }),
  )
})
