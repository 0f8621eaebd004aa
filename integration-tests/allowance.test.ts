/**
 * The credit allowance against the sandbox: a day allowance of 1,000 over runs of budget 800
 * spends 800, then 200, then 0 (saying the allowance is reached and when it renews), and buys
 * again the next UTC day; in a pipe (the source's read, each read given the state the one before
 * wrote) and under `salesintel sync` (the target's runs), with `salesintel plan` saying the figures
 * before each sync. "Today" is the read's `startedAt`. A sync killed with SIGKILL (a real process)
 * counts against the period: the next sync spends only what its mark leaves.
 */
import { type ChildProcess, spawn } from "node:child_process"
import { mkdtempSync, rmSync, writeFileSync } from "node:fs"
import { tmpdir } from "node:os"
import { dirname, join } from "node:path"
import { fileURLToPath } from "node:url"
import type { Message } from "@salesintel/airbyte"
import { Plan, Query } from "@salesintel/cli"
import { Sql } from "@salesintel/postgres"
import { Allowance, Commands } from "@salesintel/source"
import * as Effect from "effect/Effect"
import * as Stream from "effect/Stream"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { messageProblems } from "../packages/airbyte/src/testing/AirbyteSchema.ts"
import { backends, open } from "../packages/postgres/src/testing/Backends.ts"
import { runTag } from "../packages/postgres/src/testing/RunTag.ts"
import { runInProcess } from "./bins.ts"
import { fastPace, sandboxForFile } from "./sandbox.ts"
import { targetOn } from "./target.ts"

const sandbox = sandboxForFile({ seed: 42, contacts: 10_000, companies: 1_000 })

const managers = { name: "managers", filters: { job_levels: ["mgr"] } }

const configFor = (key: string, overrides: Record<string, unknown> = {}) => ({
  api_key: key,
  base_url: sandbox.url,
  credit_budget: 800,
  credit_allowance: { credits: 1_000, per: "day" },
  requests_per_minute: fastPace,
  contacts: { searches: [managers] },
  ...overrides,
})

// A Tuesday, mid-morning UTC; the next day renews the allowance at midnight.
const monday = Date.UTC(2026, 10, 23)
const tuesday = Date.UTC(2026, 10, 24, 10, 30)
const wednesday = Date.UTC(2026, 10, 25, 9)
const renewal = Date.UTC(2026, 10, 25)

describe("Allowance periods", () => {
  it("are calendar periods in UTC, weeks from Monday", () => {
    expect(Allowance.periodOf("day", tuesday)).toEqual({ start: Date.UTC(2026, 10, 24), renewsAt: renewal })
    expect(Allowance.periodOf("week", tuesday)).toEqual({ start: monday, renewsAt: Date.UTC(2026, 10, 30) })
    expect(Allowance.periodOf("week", Date.UTC(2026, 10, 29, 23))).toEqual({
      start: monday,
      renewsAt: Date.UTC(2026, 10, 30),
    })
    expect(Allowance.periodOf("month", tuesday)).toEqual({
      start: Date.UTC(2026, 10, 1),
      renewsAt: Date.UTC(2026, 11, 1),
    })
  })
})

const catalog = {
  streams: [
    { stream: { name: "contacts" }, sync_mode: "incremental", destination_sync_mode: "append_dedup" },
  ],
}

/** One read of the pipe, its messages checked against the protocol, and what it was charged. */
const pipeRead = async (key: string, state: ReadonlyArray<unknown> | undefined, startedAt: number) => {
  const before = sandbox.charged(key)
  const messages = [
    ...(await Effect.runPromise(
      Stream.runCollect(
        Commands.read({
          config: configFor(key),
          catalog,
          ...(state === undefined ? {} : { state }),
          startedAt,
        }),
      ),
    )),
  ]
  for (const message of messages) expect(messageProblems(message)).toEqual([])
  const states = messages.flatMap((m) => (m.type === "STATE" ? [m.state] : []))
  const incomplete = messages.flatMap((m) =>
    m.type === "TRACE" && m.trace.type === "STREAM_STATUS" && m.trace.stream_status.status === "INCOMPLETE"
      ? [m.trace.stream_status]
      : [],
  )
  return {
    charged: sandbox.charged(key) - before,
    logs: messages.flatMap((m) => (m.type === "LOG" ? [m.log.message] : [])),
    trace: messages.find((m: Message.Message) => m.type === "TRACE" && m.trace.type === "ERROR"),
    incomplete,
    state: states.length === 0 ? state : states.slice(-1),
  }
}

describe("a credit allowance in a pipe (the state carries the period's spending)", () => {
  it("spends 800, 200, then 0 with the allowance line, and buys again the next UTC day", {
    timeout: 60_000,
  }, async () => {
    const key = sandbox.key()
    const first = await pipeRead(key, undefined, tuesday)
    expect(first.trace).toBeUndefined()
    expect(first.charged).toBe(800)
    // Without state the read cannot know what the day spent before it: one WARN says so.
    expect(first.logs.filter((line) => line.startsWith("credit_allowance: no state given"))).toHaveLength(1)
    expect(first.logs.some((line) => line.startsWith("credit allowance reached"))).toBe(false)

    const second = await pipeRead(key, first.state, tuesday + 3_600_000)
    expect(second.charged).toBe(200)
    expect(second.logs.some((line) => line.startsWith("credit_allowance: no state given"))).toBe(false)
    const reached = second.logs.filter((line) => line.startsWith("credit allowance reached"))
    expect(reached).toEqual([
      "credit allowance reached: 1,000 of 1,000 credits spent this day (200 by this run); it renews at 2026-11-25T00:00:00.000Z, when the rest is due",
    ])
    expect(second.incomplete).toEqual([
      {
        stream_descriptor: { name: "contacts" },
        status: "INCOMPLETE",
        reasons: [{ type: "RATE_LIMITED", rate_limited: { quota_reset: renewal } }],
      },
    ])

    const third = await pipeRead(key, second.state, tuesday + 7_200_000)
    expect(third.trace).toBeUndefined()
    expect(third.charged).toBe(0)
    expect(third.logs).toContain(
      "credit allowance reached: 1,000 of 1,000 credits spent this day (0 by this run); it renews at 2026-11-25T00:00:00.000Z, when the rest is due",
    )
    expect(third.incomplete[0]?.reasons).toEqual([
      { type: "RATE_LIMITED", rate_limited: { quota_reset: renewal } },
    ])

    // The next UTC day: the state's period is an older one, so the allowance is whole again.
    const fourth = await pipeRead(key, third.state, wednesday)
    expect(fourth.charged).toBe(800)
    expect(fourth.logs.some((line) => line.startsWith("credit allowance reached"))).toBe(false)
  })

  it("refuses a state whose allowance part does not decode, naming the stream and path", async () => {
    const key = sandbox.key()
    const state = [
      {
        type: "STREAM",
        stream: {
          stream_descriptor: { name: "contacts" },
          stream_state: {
            credit_allowance: { per: "day", period_start: "2026-11-24T00:00:00.000Z", spent: -5 },
          },
        },
      },
    ]
    const read = await pipeRead(key, state, tuesday)
    expect(read.charged).toBe(0)
    expect(
      read.trace?.type === "TRACE" && read.trace.trace.type === "ERROR" && read.trace.trace.error.message,
    ).toMatch(
      /^invalid state file: the saved state of stream contacts is not readable at credit_allowance\.spent: /,
    )
  })
})

describe("a credit allowance and a stream whose destination replaces its table", () => {
  it("is refused before a credit when what the allowance leaves cannot finish it", async () => {
    const key = sandbox.key()
    // 109 contacts: within the budget, but the day has 50 credits left.
    const config = configFor(key, {
      contacts: {
        searches: [{ name: "it-vps", filters: { job_departments: ["it_is"], job_levels: ["vp"] } }],
      },
    })
    const state = [
      {
        type: "STREAM",
        stream: {
          stream_descriptor: { name: "contacts" },
          stream_state: {
            credit_allowance: { per: "day", period_start: "2026-11-24T00:00:00.000Z", spent: 950 },
          },
        },
      },
    ]
    const overwrite = {
      streams: [
        { stream: { name: "contacts" }, sync_mode: "full_refresh", destination_sync_mode: "overwrite" },
      ],
    }
    const messages = await Effect.runPromise(
      Stream.runCollect(Commands.read({ config, catalog: overwrite, state, startedAt: tuesday })),
    )
    const error = [...messages].find((m) => m.type === "TRACE" && m.trace.type === "ERROR")
    expect(sandbox.charged(key)).toBe(0)
    expect(error?.type === "TRACE" && error.trace.type === "ERROR" && error.trace.error.message).toContain(
      "within the 50 credits credit_allowance has left this day (credit_budget 800)",
    )
  })
})

describe.each(await backends())("a credit allowance under salesintel sync on $name", (backend) => {
  const target = targetOn(backend, "allowance", sandbox)

  it("spends 800, 200, then 0 with the allowance line; plan says the figures first; the next UTC day buys again", {
    timeout: 120_000,
  }, async () => {
    await target.fresh()
    const key = sandbox.key()
    const config = configFor(key, { page_size: 50 })
    const expectations = [
      { at: tuesday, spentBefore: 0, charged: 800 },
      { at: tuesday + 3_600_000, spentBefore: 800, charged: 200 },
      { at: tuesday + 7_200_000, spentBefore: 1_000, charged: 0 },
      { at: wednesday, spentBefore: 0, charged: 800 },
    ]
    for (const { at, spentBefore, charged } of expectations) {
      const plan = await target.plan(config, undefined, at)
      expect(plan.allowance).toMatchObject({ credits: 1_000, spent: spentBefore, left: 1_000 - spentBefore })
      expect(plan.creditLimit).toBe(Math.min(800, 1_000 - spentBefore))
      expect(plan.credits).toBe(charged)
      expect(Plan.render(plan, "the target")).toContain(
        `credit allowance: ${spentBefore.toLocaleString("en-US")} of 1,000 credits spent this day (since ${new Date(Allowance.periodOf("day", at).start).toISOString()}), ${(1_000 - spentBefore).toLocaleString("en-US")} left; renews at `,
      )
      const synced = await target.sync(config, { startedAt: at })
      expect(synced.charged).toBe(charged)
      expect(synced.outcome.status).toBe("stopped_at_budget")
      const said = synced.printed.includes("credit allowance reached")
      expect(said).toBe(spentBefore + charged === 1_000)
    }
    const { printed } = await target.syncAsIs(config, { startedAt: tuesday + 9_000_000 })
    expect(printed).toContain(
      "credit allowance reached: 1,000 of 1,000 credits spent this day (0 by this run); it renews at 2026-11-25T00:00:00.000Z",
    )
    // `status --config` says the same figures.
    const status = await target.database.run(
      Query.status(target.database.schema, 3, {
        allowance: Allowance.standingOf({ credits: 1_000, per: "day" }, wednesday, 800, "runs"),
      }),
    )
    expect(status.split("\n")[0]).toBe(
      "credit allowance: 800 of 1,000 credits spent this day (since 2026-11-25T00:00:00.000Z), 200 left; renews at 2026-11-26T00:00:00.000Z",
    )
  })
})

const cli = join(dirname(fileURLToPath(import.meta.url)), "..", "packages", "cli", "dist", "bin.js")

let directory: string
beforeAll(() => {
  directory = mkdtempSync(join(tmpdir(), `salesintel-allowance-${runTag()}-`))
})
afterAll(() => {
  if (directory !== undefined) rmSync(directory, { recursive: true, force: true })
})

/** `salesintel sync` in a child process: its exit and output. */
const started = (args: ReadonlyArray<string>) => {
  const child: ChildProcess = spawn(process.execPath, [cli, "sync", ...args], {
    stdio: ["ignore", "pipe", "pipe"],
  })
  let stdout = ""
  child.stdout?.on("data", (chunk) => {
    stdout += chunk
  })
  child.stderr?.on("data", () => undefined)
  const ended = new Promise<{ code: number | null; signal: NodeJS.Signals | null; stdout: string }>(
    (resolve) => child.on("exit", (code, signal) => resolve({ code, signal, stdout })),
  )
  return { child, ended }
}

const until = async (done: () => boolean, what: () => string) => {
  const deadline = Date.now() + 30_000
  while (!done()) {
    if (Date.now() > deadline) throw new Error(`not in 30 s: ${what()}`)
    await new Promise((resolve) => setTimeout(resolve, 25))
  }
}

describe.each(await backends())("a SIGKILLed sync's credits count against the period on $name", (backend) => {
  it("the next sync spends only what the killed run's mark leaves", { timeout: 120_000 }, async () => {
    const database = await open(backend, "allowance kill")
    const killed = sandbox.key()
    const next = sandbox.key()
    const fileOf = (key: string, overrides: Record<string, unknown>) => {
      const path = join(directory, `${key}.json`)
      writeFileSync(path, JSON.stringify(configFor(key, { credit_budget: 1_000, ...overrides })))
      return path
    }
    const flags = [
      ...(database.url === undefined
        ? ["--pglite-dir", database.pgliteDir ?? ""]
        : ["--database-url", database.url]),
      "--schema",
      database.schema,
    ]
    const args = (config: string) => ["--config", config, ...flags]
    try {
      // Slow pages of 10, one at a time: killed once it has paid for a few.
      sandbox.setFaults({ latency_ms: 300 }, killed)
      const run = started(args(fileOf(killed, { page_size: 10, concurrency: 1 })))
      await until(
        () => sandbox.charged(killed) >= 30,
        () => `30 credits charged (${sandbox.charged(killed)})`,
      )
      run.child.kill("SIGKILL")
      expect((await run.ended).signal).toBe("SIGKILL")
      const charged = sandbox.charged(killed)
      // The killed run wrote ahead a mark of 500 (its first block): the day has 500 left.
      const after = await started(args(fileOf(next, {}))).ended
      expect(after.code).toBe(0)
      expect(after.stdout).toContain(
        "credit allowance reached: 1,000 of 1,000 credits spent this day (500 by this run)",
      )
      expect(sandbox.charged(next)).toBe(500)
      expect(charged + sandbox.charged(next)).toBeLessThanOrEqual(1_000)
      // `salesintel status --config` counts the day's runs, the killed one's mark included.
      const status = await runInProcess("salesintel", [
        "status",
        "--config",
        fileOf(next, {}),
        ...args("").slice(2),
      ])
      const { start, renewsAt } = Allowance.periodOf("day", Date.now())
      expect(status.stdout.split("\n")[0]).toBe(
        `credit allowance: 1,000 of 1,000 credits spent this day (since ${new Date(start).toISOString()}), 0 left; renews at ${new Date(renewsAt).toISOString()}`,
      )
      const rows = await database.query(
        `SELECT status, credits::int AS credits FROM ${Sql.qualified(database.schema, "_sync_runs")} ORDER BY id`,
      )
      expect(rows.map((row) => row.status)).toEqual(["abandoned", "stopped_at_budget"])
      expect(Number(rows[0]?.credits)).toBeGreaterThanOrEqual(charged)
    } finally {
      await database.close()
    }
  })
})
