/**
 * A run's lifecycle, with the real `salesintel sync` command in child processes against the
 * sandbox, on a real Postgres and on PGlite: two syncs at once into one target (the second fails
 * at once naming the holder; with --wait it runs after and buys nothing extra), SIGTERM and SIGINT
 * mid-run (exit 143/130, the run recorded `interrupted`, and a rerun buys nothing the committed
 * pages had bought). The child is `packages/cli/dist/bin.js`, built by `npm test`.
 */
import { type ChildProcess, spawn } from "node:child_process"
import { mkdtempSync, writeFileSync } from "node:fs"
import { tmpdir } from "node:os"
import { dirname, join } from "node:path"
import { fileURLToPath } from "node:url"
import { Sql } from "@salesintel/postgres"
import { type Sandbox, startSandbox } from "@salesintel/sandbox"
import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest"
import { backends, open } from "../packages/postgres/src/testing/Backends.ts"

const cli = join(dirname(fileURLToPath(import.meta.url)), "..", "packages", "cli", "dist", "bin.js")

let sandbox: Sandbox
beforeAll(async () => {
  sandbox = await startSandbox({ seed: 42, contacts: 30_000, companies: 3_000 })
})
afterAll(async () => {
  await sandbox?.close()
})

interface Ended {
  readonly code: number | null
  readonly signal: NodeJS.Signals | null
  readonly stdout: string
  readonly stderr: string
}

const started = (args: ReadonlyArray<string>): { child: ChildProcess; ended: Promise<Ended> } => {
  const child = spawn(process.execPath, [cli, "sync", ...args], { stdio: ["ignore", "pipe", "pipe"] })
  let stdout = ""
  let stderr = ""
  child.stdout?.on("data", (chunk) => {
    stdout += chunk
  })
  child.stderr?.on("data", (chunk) => {
    stderr += chunk
  })
  const ended = new Promise<Ended>((resolve) =>
    child.on("exit", (code, signal) => resolve({ code, signal, stdout, stderr })),
  )
  return { child, ended }
}

const charged = () => sandbox.accounts()["sandbox-full"]?.credits_charged ?? 0

/** Waits (bounded) until the sandbox has charged `credits` (a contact costs one). */
const untilCharged = async (credits: number) => {
  const deadline = Date.now() + 30_000
  while (charged() < credits) {
    if (Date.now() > deadline) throw new Error(`the sandbox charged only ${charged()} credits in 30 s`)
    await new Promise((resolve) => setTimeout(resolve, 25))
  }
}

describe.each(await backends())("salesintel sync's lifecycle on $name", (backend) => {
  let database: Awaited<ReturnType<typeof open>>
  let configFile: string
  beforeAll(async () => {
    database = await open(backend, "lifecycle")
    const dir = mkdtempSync(join(tmpdir(), "salesintel-lifecycle-"))
    configFile = join(dir, "config.json")
    // Contacts alone, 10 a page, one page at a time, each answered after 150 ms: a run of seconds.
    writeFileSync(
      configFile,
      JSON.stringify({
        api_key: "sandbox-full",
        base_url: sandbox.url,
        credit_budget: 100_000,
        page_size: 10,
        concurrency: 1,
        contacts: {
          searches: [{ name: "it-vps", filters: { job_departments: ["it_is"], job_levels: ["vp"] } }],
        },
      }),
    )
  })
  afterAll(async () => {
    await database?.close()
  })
  beforeEach(async () => {
    // The child needs the target to itself on PGlite (the directory's lock); reopened by queries.
    await database.suspend()
    await database.resume()
    await database.query(`DROP SCHEMA IF EXISTS ${Sql.ident(database.schema)} CASCADE`)
    await database.suspend()
    await database.resume()
    sandbox.reset()
    sandbox.setFaults({ latency_ms: 150 })
  })

  const target = () =>
    database.url === undefined ? ["--pglite-dir", database.pgliteDir ?? ""] : ["--database-url", database.url]
  const args = (...more: ReadonlyArray<string>) => [
    "--config",
    configFile,
    ...target(),
    "--schema",
    database.schema,
    ...more,
  ]
  const table = (name: string) => Sql.qualified(database.schema, name)
  const count = async () =>
    Number((await database.query(`SELECT count(*)::int AS n FROM ${table("contacts")}`))[0]?.n)
  const statuses = async () =>
    (await database.query(`SELECT status FROM ${table("_sync_runs")} ORDER BY id`)).map((row) => row.status)

  it("a second sync fails at once naming the holder; with --wait it runs after and buys nothing twice", {
    timeout: 120_000,
  }, async () => {
    const first = started(args())
    await untilCharged(10)
    const second = await started(args()).ended
    expect(second.code).toBe(1)
    expect(second.stderr).toContain("is in use by another run")
    expect(second.stderr).toMatch(
      database.url === undefined ? /pid \d+ \(salesintel sync\)/ : /backend pid \d+/,
    )
    const waiting = started(args("--wait"))
    const [one, three] = await Promise.all([first.ended, waiting.ended])
    expect(one.code).toBe(0)
    expect(three.code).toBe(0)
    expect(three.stdout).toContain("sync succeeded")
    const contacts = await count()
    expect(contacts).toBeGreaterThan(50)
    // Every contact bought once: the waiting run read the first one's state and bought nothing.
    expect(charged()).toBe(contacts)
    expect(await statuses()).toEqual(["succeeded", "succeeded"])
  })

  for (const [signal, code] of [
    ["SIGTERM", 143],
    ["SIGINT", 130],
  ] as const) {
    it(`${signal} mid-run: exit ${code}, the run interrupted, a rerun buys only what was not committed`, {
      timeout: 120_000,
    }, async () => {
      const run = started(args())
      await untilCharged(30)
      run.child.kill(signal)
      const ended = await run.ended
      expect(ended.signal).toBeNull()
      expect(ended.code).toBe(code)
      expect(ended.stdout).toContain(`sync interrupted by ${signal}`)
      // What was left unbought is the signal's doing, not the budget's (100,000 credits, barely touched).
      expect(ended.stdout).toMatch(
        new RegExp(`\\n  contacts .*\\(stopped by ${signal}: [\\d,]+ left to buy\\)\\n`),
      )
      expect(ended.stdout).not.toContain("lack of budget")
      const [row] = await database.query(
        `SELECT status, finished_at IS NOT NULL AS finished, streams::text AS streams FROM ${table("_sync_runs")}`,
      )
      expect(row?.status).toBe("interrupted")
      expect(row?.finished).toBe(true)
      const committed = await count()
      const figures = JSON.parse(String(row?.streams)) as Record<string, { records: number }>
      expect(figures.contacts?.records ?? 0).toBe(committed)
      await database.suspend()
      await database.resume()

      // A request the child sent before it exited is still answered (and charged) after its
      // latency: let it finish before the counters are reset.
      await new Promise((resolve) => setTimeout(resolve, 1_000))
      sandbox.reset()
      sandbox.setFaults({ latency_ms: 0 })
      const rerun = await started(args()).ended
      expect(rerun.code).toBe(0)
      const after = await count()
      expect(after).toBeGreaterThan(committed)
      // Nothing the interrupted run committed was bought again.
      expect(charged()).toBe(after - committed)
      expect(await statuses()).toEqual(["interrupted", "succeeded"])
    })
  }
})
