/**
 * `salesintel-pg load` as a process (`dist/bin.js`, built by `npm test`), on PGlite and a real
 * Postgres: a second load into the same target fails at once naming the holder; SIGINT mid-input
 * keeps what committed, records the run interrupted and exits 130. Between the two, an input that
 * ends early (here: empty) empties no overwrite table and ends in exit code 1: run in process, as
 * nothing in it is a process's (how exit code 1 leaves the bin's process is
 * integration-tests/command-line.process.test.ts's).
 */
import { type ChildProcess, spawn } from "node:child_process"
import { mkdtempSync, rmSync, writeFileSync } from "node:fs"
import { tmpdir } from "node:os"
import { dirname, join } from "node:path"
import { fileURLToPath } from "node:url"
import * as NodeContext from "@effect/platform-node/NodeContext"
import * as Effect from "effect/Effect"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { runInProcess } from "../../command-line/src/testing/InProcess.ts"
import { qualified } from "./database/Sql.ts"
import { main } from "./Main.ts"
import { type Backend, backends, open } from "./testing/Backends.ts"
import { contactMessages } from "./testing/Records.ts"

const bin = join(dirname(fileURLToPath(import.meta.url)), "..", "dist", "bin.js")

interface Ended {
  readonly code: number | null
  readonly stdout: string
  readonly stderr: string
}

const started = (args: ReadonlyArray<string>) => {
  const child: ChildProcess = spawn(process.execPath, [bin, "load", ...args], {
    stdio: ["pipe", "pipe", "pipe"],
  })
  let stdout = ""
  let stderr = ""
  child.stdout?.on("data", (chunk) => {
    stdout += chunk
  })
  child.stderr?.on("data", (chunk) => {
    stderr += chunk
  })
  const ended = new Promise<Ended>((resolve) => child.on("exit", (code) => resolve({ code, stdout, stderr })))
  /** Waits (bounded) until `states` STATE lines have come out: committed. */
  const committed = async (states: number) => {
    const deadline = Date.now() + 30_000
    while (stdout.split("\n").filter((line) => line.includes('"STATE"')).length < states) {
      if (Date.now() > deadline) throw new Error(`no ${states} commits in 30 s: ${stderr}`)
      await new Promise((resolve) => setTimeout(resolve, 25))
    }
  }
  return { child, ended, committed }
}

const lines = (messages: ReadonlyArray<unknown>) => messages.map((m) => `${JSON.stringify(m)}\n`).join("")

describe.each((await backends()).map((backend): [string, Backend] => [backend.name, backend]))(
  "salesintel-pg load, the process, on %s",
  (_, backend) => {
    let env: Awaited<ReturnType<typeof open>>
    let dir: string
    let catalog: string
    beforeAll(async () => {
      env = await open(backend, "load bin")
      dir = mkdtempSync(join(tmpdir(), "salesintel-load-bin-"))
      catalog = join(dir, "catalog.json")
      writeFileSync(
        catalog,
        JSON.stringify({
          streams: [
            { stream: { name: "contacts" }, sync_mode: "full_refresh", destination_sync_mode: "overwrite" },
          ],
        }),
      )
    })
    afterAll(async () => {
      await env?.close()
      if (dir !== undefined) rmSync(dir, { recursive: true, force: true })
    })

    const target = () =>
      env.url === undefined ? ["--pglite-dir", env.pgliteDir ?? ""] : ["--database-url", env.url]
    const args = (...more: ReadonlyArray<string>) => [...target(), "--schema", env.schema, ...more]

    it("one load at a time; an early end empties nothing; SIGINT keeps what committed", {
      timeout: 120_000,
    }, async () => {
      await env.suspend()
      // The first load holds the target while its input stays open.
      const first = started(args("--catalog", catalog, "--batch-size", "5"))
      first.child.stdin?.write(lines(contactMessages(10, 5)))
      await first.committed(2)
      const second = await started(args()).ended
      expect(second.code).toBe(1)
      expect(second.stderr).toContain("is in use by another run")
      first.child.stdin?.end()
      expect((await first.ended).code).toBe(0)

      // Empty input, overwrite catalog: nothing emptied, exit 1 (in process: the target is free).
      const emptied = await runInProcess(
        Effect.provide(main, NodeContext.layer),
        ["load", ...args("--catalog", catalog)],
        { stdin: "" },
      )
      expect(emptied.code).toBe(1)
      expect(emptied.stderr).toContain("the input ended before contacts completed")

      // SIGINT after two commits: exit 130, the commits stay, the rest is not read.
      const interrupted = started(args("--batch-size", "5"))
      interrupted.child.stdin?.write(lines(contactMessages(10, 5, 100)))
      await interrupted.committed(2)
      interrupted.child.kill("SIGINT")
      const ended = await interrupted.ended
      expect(ended.code).toBe(130)
      expect(ended.stderr).toContain('"status":"interrupted"')

      // The children are done: the target is ours again (PGlite's files are one process's at a time).
      await env.resume()
      const [count] = await env.query(`SELECT count(*)::int AS n FROM ${qualified(env.schema, "contacts")}`)
      expect(count?.n).toBe(20)
      const runs = await env.query(`SELECT status FROM ${qualified(env.schema, "_sync_runs")} ORDER BY id`)
      expect(runs.map((r) => r.status)).toEqual(["succeeded", "failed", "interrupted"])
    })
  },
)
