/**
 * What only a process shows of the three bins, the rest being command-line.test.ts's, in
 * process: the exit code a command sets becomes the process's (2 for a usage error, 1 for a
 * failure, in each bin's own wiring), the one line on stderr and an empty stdout, and
 * `salesintel-pg load` on a real terminal (util-linux's `script`), where it shows a count instead
 * of echoing STATE messages (into one backend: what it shows is the same whatever it loads into).
 */
import { spawn, spawnSync } from "node:child_process"
import { mkdtempSync, rmSync, writeFileSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { describe, expect, it } from "vitest"
import { oneBackend, open } from "../packages/postgres/src/testing/Backends.ts"
import { contactMessages } from "../packages/postgres/src/testing/Records.ts"
import { type Bin, binFiles, type Ended } from "./bins.ts"

/** `bin args` as a process of its own, with no database named in its environment. */
const run = (bin: Bin, args: ReadonlyArray<string>, cwd: string) =>
  new Promise<Ended>((resolve, reject) => {
    const child = spawn(process.execPath, [binFiles[bin], ...args], {
      cwd,
      stdio: ["ignore", "pipe", "pipe"],
      env: { ...process.env, DATABASE_URL: "", SALESINTEL_API_KEY: "" },
    })
    let stdout = ""
    let stderr = ""
    child.stdout.on("data", (chunk) => {
      stdout += chunk
    })
    child.stderr.on("data", (chunk) => {
      stderr += chunk
    })
    child.on("error", reject)
    child.on("close", (code) => resolve({ code: code ?? -1, stdout, stderr }))
  })

// util-linux's `script` runs a command with a terminal as its stdout (as a person would).
const hasScript = spawnSync("script", ["--version"]).status === 0

// Each run starts a whole node process: they run side by side, with room for a busy machine.
const slow = { timeout: 120_000 }

describe("the bins as processes", () => {
  it("exit 2 on a usage error and 1 on a failure, saying so in one line on stderr", slow, async () => {
    const cwd = mkdtempSync(join(tmpdir(), "salesintel-cli-process-"))
    try {
      const [cli, source, loader, failed] = await Promise.all([
        run("salesintel", ["sql", "--format", "xml", "select 1"], cwd),
        run("source-salesintel", ["read"], cwd),
        run("salesintel-pg", ["nosuch"], cwd),
        run("salesintel-pg", ["state", "--pglite-dir", "typo"], cwd),
      ])
      for (const [ended, bin] of [
        [cli, "salesintel"],
        [source, "source-salesintel"],
        [loader, "salesintel-pg"],
      ] as const) {
        expect([ended.code, ended.stdout]).toEqual([2, ""])
        expect(ended.stderr).toMatch(new RegExp(`^${bin}[^\\n]*: [^\\n]+\\n$`))
      }
      expect([failed.code, failed.stdout]).toEqual([1, ""])
      expect(failed.stderr).toMatch(/^salesintel-pg: no embedded database in typo: .*nothing was created/)
    } finally {
      rmSync(cwd, { recursive: true, force: true })
    }
  })

  it.skipIf(!hasScript)(
    "salesintel-pg load on a terminal shows a count, not the STATE messages",
    slow,
    async () => {
      const dir = mkdtempSync(join(tmpdir(), "salesintel-pg-tty-"))
      // What the terminal shows is the loader's, whatever it loads into: Postgres when it answers
      // (a process opening PGlite takes seconds).
      const database = await open(await oneBackend(), "tty load")
      try {
        const input = join(dir, "messages.jsonl")
        writeFileSync(
          input,
          contactMessages(6, 2)
            .map((message) => `${JSON.stringify(message)}\n`)
            .join(""),
        )
        // The schema's name has spaces, no quote: quoted for the shell.
        const target = `${database.url === undefined ? `--pglite-dir ${database.pgliteDir ?? ""}` : `--database-url ${database.url}`} --schema '${database.schema}'`
        const command = `${process.execPath} ${binFiles["salesintel-pg"]} load ${target} < ${input}`
        const tty = spawnSync("script", ["-qec", command, "/dev/null"], {
          encoding: "utf8",
          timeout: 100_000,
          // The target is the one named on the command line alone.
          env: { ...process.env, DATABASE_URL: "" },
        })
        expect(tty.status, tty.stdout).toBe(0)
        expect(tty.stdout).toContain(
          "load succeeded (run 1): 6 records, 3 STATE messages committed (not echoed",
        )
        expect(tty.stdout).not.toContain('"type":"STATE"')
      } finally {
        rmSync(dir, { recursive: true, force: true })
        await database.close()
      }
    },
  )
})
