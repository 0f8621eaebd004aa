/**
 * A run's lifecycle, with the real `salesintel sync` command in child processes against the
 * sandbox, on a real Postgres and on PGlite (the lock between two syncs and the commits around a
 * signal are each backend's own: an advisory lock on Postgres, a pid lock file on PGlite): two
 * syncs at once into one target (the second fails at once naming the holder; with --wait it says
 * it waits, runs after and buys nothing extra), SIGTERM mid-run and SIGINT mid-rerun (exit 143 and
 * 130, each run recorded `interrupted` with every page it paid for committed, and each rerun buys
 * nothing the committed pages had bought). The child is `packages/cli/dist/bin.js`, built by
 * `npm test`.
 *
 * Each run buys with a key of its own, so what one run was charged (a request answered after its
 * process ended included) is never counted for another, and no counter is reset between runs.
 */
import { type ChildProcess, spawn } from "node:child_process"
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs"
import { tmpdir } from "node:os"
import { dirname, join } from "node:path"
import { fileURLToPath } from "node:url"
import { Plan } from "@salesintel/cli"
import { Sql } from "@salesintel/postgres"
import { HeldKeys } from "@salesintel/source"
import * as Effect from "effect/Effect"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { backends, open } from "../packages/postgres/src/testing/Backends.ts"
import { runTag } from "../packages/postgres/src/testing/RunTag.ts"
import { fastPace, sandboxForFile } from "./sandbox.ts"

const cli = join(dirname(fileURLToPath(import.meta.url)), "..", "packages", "cli", "dist", "bin.js")

// The search below finds 109 contacts here: 11 pages of 10, enough for a run to be caught mid-way
// (each page is a commit, slow on PGlite: no more pages than that).
const sandbox = sandboxForFile({ seed: 42, contacts: 10_000, companies: 1_000 })

let directory: string
beforeAll(() => {
  directory = mkdtempSync(join(tmpdir(), `salesintel-lifecycle-${runTag()}-`))
})
afterAll(() => {
  if (directory !== undefined) rmSync(directory, { recursive: true, force: true })
})

/** A config buying with `key`: contacts alone, 10 a page, one page at a time. */
const configFor = (key: string) => {
  const path = join(directory, `${key}.json`)
  writeFileSync(
    path,
    JSON.stringify({
      api_key: key,
      base_url: sandbox.url,
      credit_budget: 100_000,
      requests_per_minute: fastPace,
      page_size: 10,
      concurrency: 1,
      contacts: {
        searches: [{ name: "it-vps", filters: { job_departments: ["it_is"], job_levels: ["vp"] } }],
      },
    }),
  )
  return path
}

interface Ended {
  readonly code: number | null
  readonly signal: NodeJS.Signals | null
  readonly stdout: string
  readonly stderr: string
}

/** The children still running: a test that failed half-way ends them before it drops its target. */
const running = new Set<ChildProcess>()
const endLeftovers = () =>
  Promise.all(
    [...running].map(
      (child) =>
        new Promise((resolve) => {
          child.once("exit", resolve)
          child.kill("SIGKILL")
        }),
    ),
  )

const started = (args: ReadonlyArray<string>) => {
  const child: ChildProcess = spawn(process.execPath, [cli, "sync", ...args], {
    stdio: ["ignore", "pipe", "pipe"],
  })
  running.add(child)
  child.on("exit", () => running.delete(child))
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
  return { child, ended, stderr: () => stderr }
}

/** Waits (bounded) until `done()` holds, polling. */
const until = async (done: () => boolean, what: () => string) => {
  const deadline = Date.now() + 30_000
  while (!done()) {
    if (Date.now() > deadline) throw new Error(`not in 30 s: ${what()}`)
    await new Promise((resolve) => setTimeout(resolve, 25))
  }
}

/** Waits until the sandbox has charged `key` `credits` (a contact costs one). */
const untilCharged = (key: string, credits: number) =>
  until(
    () => sandbox.charged(key) >= credits,
    () => `${credits} credits charged (${sandbox.charged(key)} so far)`,
  )

describe.each(await backends())("salesintel sync's lifecycle on $name", (backend) => {
  /** A target of the test's own (a schema; on PGlite a directory too), dropped by `close`. */
  const target = async () => {
    const database = await open(backend, "lifecycle")
    const table = (name: string) => Sql.qualified(database.schema, name)
    return {
      database,
      args: (config: string, ...more: ReadonlyArray<string>) => [
        "--config",
        config,
        ...(database.url === undefined
          ? ["--pglite-dir", database.pgliteDir ?? ""]
          : ["--database-url", database.url]),
        "--schema",
        database.schema,
        ...more,
      ],
      table,
      count: async () =>
        Number((await database.query(`SELECT count(*)::int AS n FROM ${table("contacts")}`))[0]?.n),
      statuses: async () =>
        (await database.query(`SELECT status FROM ${table("_sync_runs")} ORDER BY id`)).map(
          (row) => row.status,
        ),
    }
  }

  it("a second sync fails at once naming the holder; with --wait it runs after and buys nothing twice", {
    timeout: 120_000,
  }, async () => {
    const { database, args, count, statuses } = await target()
    try {
      // The first run holds the target: once its first page is bought (its requests answered in
      // 300 ms until then, so it cannot end before that is seen: 10 pages are left), its pages take
      // 2 s each (18 s or more: room for the other two to start on a busy machine); released once
      // both have answered.
      const holder = sandbox.key()
      sandbox.setFaults({ latency_ms: 300 }, holder)
      const first = started(args(configFor(holder)))
      await untilCharged(holder, 10)
      sandbox.setFaults({ latency_ms: 2_000 }, holder)
      // The other two side by side: one refused at once, one waiting.
      const refused = sandbox.key()
      const waiter = sandbox.key()
      const refusal = started(args(configFor(refused)))
      const waiting = started(args(configFor(waiter), "--wait"))
      const second = await refusal.ended
      expect(second.code).toBe(1)
      expect(second.stderr).toContain("is in use by another run")
      expect(second.stderr).toMatch(
        database.url === undefined ? /pid \d+ \(salesintel sync\)/ : /backend pid \d+/,
      )
      expect(sandbox.charged(refused)).toBe(0)
      await until(
        () => waiting.stderr().includes("waiting for it to end"),
        () => `the --wait run to wait: ${waiting.stderr()}`,
      )
      sandbox.setFaults({ latency_ms: 0 }, holder)
      const [one, three] = await Promise.all([first.ended, waiting.ended])
      expect(one.code).toBe(0)
      expect(three.code).toBe(0)
      expect(three.stdout).toContain("sync succeeded")
      const contacts = await count()
      expect(contacts).toBeGreaterThan(50)
      // Every contact bought once: the waiting run read the first one's state and bought nothing.
      expect(sandbox.charged(holder)).toBe(contacts)
      expect(sandbox.charged(waiter)).toBe(0)
      expect(await statuses()).toEqual(["succeeded", "succeeded"])
    } finally {
      await endLeftovers()
      await database.close()
    }
  })

  it("SIGTERM mid-run, then SIGINT mid-rerun: exit 143 and 130, each run interrupted, each rerun buys only what was not committed", {
    timeout: 120_000,
  }, async () => {
    const { database, args, table, count, statuses } = await target()
    try {
      /** Interrupts a run (of a key of its own) once it has bought `pages`; its committed rows. */
      const interrupted = async (
        signal: "SIGTERM" | "SIGINT",
        code: number,
        pages: number,
        before: number,
      ) => {
        // Each request answered in 400 ms: once it has bought `pages`, 6 or more of the 11 are
        // left (2.4 s or more: room for the signal to land on a busy machine), and the page in
        // flight when it does lands within 400 ms.
        const key = sandbox.key()
        sandbox.setFaults({ latency_ms: 400 }, key)
        const run = started(args(configFor(key)))
        await untilCharged(key, 10 * pages)
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
        // The credits left, as the plan counts them (the next run's purchase, checked below).
        const left = Number(/\n {2}credits left: ([\d,]+) /.exec(ended.stdout)?.[1]?.replaceAll(",", ""))
        expect(left, ended.stdout).toBeGreaterThan(0)
        const row = (
          await database.query(
            `SELECT status, finished_at IS NOT NULL AS finished, streams::text AS streams FROM ${table("_sync_runs")} ORDER BY id`,
          )
        ).at(-1)
        expect(row?.status).toBe("interrupted")
        expect(row?.finished).toBe(true)
        const committed = await count()
        expect(committed).toBeGreaterThan(before)
        const figures = JSON.parse(String(row?.streams)) as Record<string, { records: number }>
        expect(figures.contacts?.records ?? 0).toBe(committed - before)
        // Every page it paid for was committed, and nothing an earlier run had committed was bought again.
        expect(sandbox.charged(key)).toBe(committed - before)
        // The next run needs the target to itself (PGlite's files are one process's at a time).
        await database.suspend()
        await database.resume()
        return { committed, left }
      }
      const afterTerm = (await interrupted("SIGTERM", 143, 3, 0)).committed
      const { committed: afterInt, left } = await interrupted("SIGINT", 130, 1, afterTerm)
      // What the interrupted run said was left is what `salesintel plan` says now.
      const { state, held } = await database.run(Plan.savedIn(database.schema, []))
      const planned = await Effect.runPromise(
        Effect.provideService(
          Plan.makePlan({
            config: JSON.parse(readFileSync(configFor(sandbox.key()), "utf8")),
            state,
            mode: "exact",
          }),
          HeldKeys.HeldKeys,
          held,
        ),
      )
      expect(left).toBe(planned.creditsNeeded)
      // The rerun needs the target to itself (PGlite's files are one process's at a time).
      await database.suspend()
      await database.resume()

      const last = sandbox.key()
      const rerun = await started(args(configFor(last))).ended
      expect(rerun.code).toBe(0)
      const after = await count()
      expect(after).toBeGreaterThan(afterInt)
      // Nothing the interrupted runs committed was bought again, and the rest is what was said left.
      expect(sandbox.charged(last)).toBe(after - afterInt)
      expect(sandbox.charged(last)).toBe(left)
      expect(await statuses()).toEqual(["interrupted", "interrupted", "succeeded"])
    } finally {
      await endLeftovers()
      await database.close()
    }
  })
})
