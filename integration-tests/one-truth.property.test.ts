/**
 * One truth for what was bought, as a property: random sequences of `salesintel sync`, the pipe
 * (`salesintel-pg state | source read | salesintel-pg load`, each command's logic in process), a
 * pipe given no state, a pipe beside a sync, full refreshes (one stopped by its budget and resumed
 * at another page size), config changes, a sync killed part way, and `TRUNCATE _bought`, on one
 * schema against the sandbox. After each run: the ledger's keys are the contacts table's keys; a
 * sync's figures are what the sandbox charged; and `salesintel plan`, asked first, said what the
 * run would spend, to the credit, so that nothing held is bought again unless the plan said so (a
 * full refresh buys everything again, and says so; a pipe given no state buys what the plan of an
 * empty state says).
 */

import { Readable } from "node:stream"
import { Ndjson } from "@salesintel/airbyte"
import { Plan, Sync } from "@salesintel/cli"
import { type Database, PgDatabase, Runs, Sql } from "@salesintel/postgres"
import { Commands, HeldKeys } from "@salesintel/source"
import * as Effect from "effect/Effect"
import * as ManagedRuntime from "effect/ManagedRuntime"
import * as Stream from "effect/Stream"
import fc from "fast-check"
import { afterAll, beforeAll, expect, it } from "vitest"
import { loadRun } from "../packages/postgres/src/LoadRun.ts"
import { oneBackend, open } from "../packages/postgres/src/testing/Backends.ts"
import { sandboxForFile } from "./sandbox.ts"
import {
  apartIn,
  configOver,
  contactsCatalog,
  outsideEmails,
  searchA,
  searchB,
  truthSandbox,
} from "./truth.ts"

const sandbox = sandboxForFile(truthSandbox)
let database: Awaited<ReturnType<typeof open>>
beforeAll(async () => {
  // One backend: the loader's SQL is tested on both elsewhere; here the sequences are the point.
  database = await open(await oneBackend(), "e2e truth property")
})
afterAll(async () => {
  await database?.close()
})

/** The configs a sequence moves between (a config change is a step to another). */
const configs = () => [
  { searches: [searchA] },
  { searches: [searchB] },
  { searches: [searchA, searchB] },
  { searches: [searchA], emails: outsideEmails(sandbox.dataset) },
  { searches: [searchA], exclude_fields: ["job_title"] },
  // The companies of the contacts too: their bought set is held by their table as well.
  { searches: [searchB], companies: true },
]
/** Config `index` with a key of its own: what the sandbox charges that key is one step's spend. */
const configOf = (index: number) => {
  const { companies, ...contacts } = configs()[index] ?? {}
  return {
    ...configOver(sandbox.url, sandbox.key(), contacts),
    ...(companies === true ? { companies: { from_contacts: true } } : {}),
  }
}
/** The pipe's catalog: contacts and companies, incremental into append_dedup. */
const catalog = {
  streams: [
    ...contactsCatalog.streams,
    { stream: { name: "companies" }, sync_mode: "incremental", destination_sync_mode: "append_dedup" },
  ],
}

type Step =
  | {
      readonly kind: "sync" | "pipe" | "stateless pipe" | "pipe beside sync" | "full refresh" | "kill"
      readonly config: number
    }
  | {
      /** A full refresh stopped by a budget at one page size, then resumed at another. */
      readonly kind: "refresh resumed"
      readonly config: number
      readonly budget: number
      readonly pageSizes: readonly [number, number]
    }
  /**
   * `truncate`: `TRUNCATE _bought`; `replay`: the last pipe's input loaded again, after what came
   * since (older records and states); `lose companies state`: its `_state` row deleted.
   */
  | { readonly kind: "truncate" | "replay" | "lose companies state" }

const pageSize = fc.constantFrom(10, 25, 30, 50)
const step: fc.Arbitrary<Step> = fc.oneof(
  fc.record({
    kind: fc.constantFrom(
      "sync" as const,
      "pipe" as const,
      "stateless pipe" as const,
      "pipe beside sync" as const,
      "full refresh" as const,
      "kill" as const,
    ),
    config: fc.integer({ min: 0, max: 5 }),
  }),
  fc.record({
    kind: fc.constant("refresh resumed" as const),
    config: fc.integer({ min: 0, max: 5 }),
    budget: fc.integer({ min: 1, max: 150 }),
    pageSizes: fc.tuple(pageSize, pageSize),
  }),
  fc.constantFrom(
    { kind: "truncate" as const },
    { kind: "replay" as const },
    { kind: "lose companies state" as const },
  ),
)

const table = (name: string) => Sql.qualified(database.schema, name)
/** Whether the schema has the table `name` (a sequence's first steps may come before any run). */
const present = async (name: string) =>
  (await database.query("SELECT to_regclass($1) IS NOT NULL AS present", [table(name)]))[0]?.present === true
const apart = () => apartIn(database.query, database.schema)

/**
 * The plan's credits for `config`, from the saved state as `salesintel plan` reads it, asked with a
 * key of its own (it must charge nothing).
 */
const planned = async (
  config: ReturnType<typeof configOf>,
  fullRefresh: boolean,
  /** As a pipe's source reads: from the state alone (`stateless`: none), not the target's held keys. */
  from: "target" | "state" | "stateless" = "target",
) => {
  const own = { ...config, api_key: sandbox.key() }
  const saved = await database.run(Plan.savedIn(database.schema, Plan.heldKeysWanted(own)))
  const make = Plan.makePlan({
    config: own,
    state: from === "stateless" ? [] : saved.state,
    mode: "exact",
    ...(fullRefresh ? { fullRefresh: ["contacts"] } : {}),
  })
  const plan = await Effect.runPromise(
    from === "target" ? Effect.provideService(make, HeldKeys.HeldKeys, saved.held) : make,
  )
  expect(sandbox.charged(own.api_key)).toBe(0)
  return plan.credits
}

const silent = { isTTY: false, write: () => true }
const syncOf = (config: unknown, fullRefresh: boolean, lock?: Sync.SyncOptions["lock"]) =>
  Sync.sync({
    config,
    schema: database.schema,
    progress: silent,
    ...(fullRefresh ? { fullRefresh: ["contacts"] } : {}),
    ...(lock === undefined ? {} : { lock }),
  })

/** The runtime a pipe runs on: the test's own, or (beside a sync) one of its own on the server. */
type Runner = <A, E>(effect: Effect.Effect<A, E, Database.Database>) => Promise<A>

/** `salesintel-pg load` of `lines` (waiting for a run under way), which must succeed. */
const loadLines = async (lines: string, runner: Runner = database.run) => {
  const outcome = await runner(
    loadRun(Readable.from([lines]), {
      schema: database.schema,
      syncModes: undefined,
      batchSize: 5_000,
      lock: { owner: "salesintel-pg load", wait: waiting },
      onSourceMessage: () => Effect.void,
      onStateCommitted: () => Effect.void,
    }),
  )
  expect(outcome.status).toBe("succeeded")
}

/** The pipe's source read from `state` (the messages as JSON lines), and its load. */
const pipeOf = async (config: unknown, state: unknown, runner: Runner = database.run) => {
  const lines = await Effect.runPromise(
    Stream.runFold(
      Commands.read({ config, catalog, state }),
      "",
      (text, message) => text + Ndjson.serialize(message),
    ),
  )
  await loadLines(lines, runner)
  lastPipe = lines
  return lines
}

/** The last pipe's input, for a replay. */
let lastPipe: string | undefined
/** The config of the last step that read one: what a replay or a lost state must not make due again. */
let lastConfig = 0

/**
 * A step that buys nothing, but must change nothing the next sync buys: the plan of the last
 * config before and after it are equal (a replayed older input reverts nothing, a lost companies
 * state is mended from the table).
 */
const changesNothingDue = async (change: () => Promise<unknown>) => {
  const config = configOf(lastConfig)
  const before = await planned(config, false)
  await change()
  expect(await planned(config, false)).toBe(before)
}

const waiting = { wait: true, interval: 20 }
/** `salesintel-pg state`'s export (under the lock, with the pipe's lease; waiting for a run under way). */
const exported = (runner: Runner = database.run) =>
  runner(Runs.StateExport.exportState({ schema: database.schema, wait: waiting, leaseMinutes: 10 }))

/**
 * A sync and a pipe at once into one target, each waiting for the other: the pipe on a connection
 * of its own (a server's lock is its session's). On PGlite (one process's files) they go in turn.
 */
const pipeBesideSync = async (config: ReturnType<typeof configOf>) => {
  const url = database.url
  const other = url === undefined ? undefined : ManagedRuntime.make(PgDatabase.layer(url))
  const runner: Runner = other === undefined ? database.run : (effect) => other.runPromise(effect)
  try {
    const synced = database.run(
      syncOf(config, false, { owner: "salesintel sync", wait: waiting }).pipe(Effect.map((o) => o.error)),
    )
    const piped = (async () => pipeOf(config, await exported(runner), runner))()
    const [error] = await Promise.all([synced, piped])
    expect(error).toBeUndefined()
  } finally {
    await other?.dispose()
  }
}

/** A full refresh stopped by `budget` at one page size, then resumed at another: the resume's figures. */
const refreshResumed = async (step: Extract<Step, { kind: "refresh resumed" }>) => {
  const config = configOf(step.config)
  const [first, second] = step.pageSizes
  await database.run(syncOf({ ...config, page_size: first, credit_budget: step.budget }, true))
  const resumed = { ...config, page_size: second }
  const plan = await planned(resumed, true)
  const before = sandbox.charged(config.api_key)
  const outcome = await database.run(syncOf(resumed, true))
  expect(outcome.error).toBeUndefined()
  return { planned: plan, charged: sandbox.charged(config.api_key) - before }
}

/** A step that buys nothing: the ledger truncated, the last pipe replayed, the companies' state lost. */
const unpaid = async (next: Extract<Step, { kind: "truncate" | "replay" | "lose companies state" }>) => {
  if (next.kind === "truncate") {
    if (await present("_bought")) await database.query(`TRUNCATE ${table("_bought")}`)
    return undefined
  }
  if (next.kind === "replay") {
    const lines = lastPipe
    if (lines !== undefined) await changesNothingDue(() => loadLines(lines))
    return undefined
  }
  if (next.kind === "lose companies state") {
    if (await present("_state"))
      await changesNothingDue(() =>
        database.query(`DELETE FROM ${table("_state")} WHERE stream = 'companies'`),
      )
  }
  return undefined
}

/** Runs one step; returns what the plan said it would cost, and what the sandbox charged. */
const run = async (next: Step): Promise<{ planned: number; charged: number } | undefined> => {
  if (!("config" in next)) return unpaid(next)
  lastConfig = next.config
  if (next.kind === "refresh resumed") return refreshResumed(next)
  const config = configOf(next.config)
  const fullRefresh = next.kind === "full refresh"
  const from = next.kind === "stateless pipe" ? "stateless" : next.kind === "pipe" ? "state" : "target"
  const plan = await planned(config, fullRefresh, from)
  const charged = () => sandbox.charged(config.api_key)
  if (next.kind === "pipe") {
    // `salesintel-pg state | source-salesintel read --state - | salesintel-pg load`, in process.
    await pipeOf(config, await exported())
    return { planned: plan, charged: charged() }
  }
  if (next.kind === "stateless pipe") {
    // No --state: it says so before it buys, and buys what a plan of no state says.
    expect((await pipeOf(config, undefined)).split("\n")[0]).toContain("no state given (--state)")
    return { planned: plan, charged: charged() }
  }
  if (next.kind === "pipe beside sync") {
    // Between them, what one sync would buy.
    await pipeBesideSync(config)
    return { planned: plan, charged: charged() }
  }
  if (next.kind === "kill") {
    // Killed once half of what the plan said is charged: what committed stays, the rest is lost.
    const killAt = Math.max(1, Math.floor(plan / 2))
    const killer = Effect.promise(async () => {
      while (charged() < killAt) await new Promise((resolve) => setTimeout(resolve, 1))
    })
    await database.run(Effect.race(Effect.asVoid(syncOf(config, false)), killer))
    return undefined
  }
  const outcome = await database.run(syncOf(config, fullRefresh))
  expect(outcome.error).toBeUndefined()
  expect(outcome.creditsSpent).toBe(charged())
  return { planned: plan, charged: charged() }
}

it("after any sequence of syncs, pipes (with and without state, beside a sync, replayed), full refreshes (resumed at another page size), config changes, kills, a truncated ledger and a lost companies state, the ledger is the tables' index and the plan was exact", async () => {
  await fc.assert(
    fc.asyncProperty(fc.array(step, { minLength: 3, maxLength: 5 }), async (steps) => {
      await database.query(`DROP SCHEMA IF EXISTS ${Sql.ident(database.schema)} CASCADE`)
      lastPipe = undefined
      for (const next of steps) {
        const figures = await run(next)
        // After a run: a truncated ledger, or a lost state, is mended by the next one.
        const ran = "config" in next || (next.kind === "replay" && lastPipe !== undefined)
        if (!ran || !(await present("_bought"))) continue
        // After every run (a kill included): the ledger holds exactly the table's keys.
        expect(await apart(), JSON.stringify(steps)).toEqual({ extraKeys: 0, missingKeys: 0 })
        // The plan, asked first, said what the run spent: nothing held bought unless it said so.
        if (figures !== undefined) expect(figures.charged, JSON.stringify(steps)).toBe(figures.planned)
      }
    }),
    // More with TRUTH_PROPERTY_RUNS (a longer search for a sequence that breaks it).
    { numRuns: Number(process.env.TRUTH_PROPERTY_RUNS ?? 5), endOnFailure: true },
  )
}, 300_000)
