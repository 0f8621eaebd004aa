/**
 * The smoke set: the three commands as a user's shell runs them (the command files themselves,
 * with their shebang's node flags and variables, on whatever Node is first on PATH), for what only
 * a process shows: exit codes, a pipe between two commands, PGlite's worker thread in a process of
 * its own. `.ci/run` runs it on the second Node line, beside the unit tests; everything here is also
 * checked more closely, in process, by the other files.
 */
import { spawn } from "node:child_process"
import { mkdtempSync, rmSync, writeFileSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { fileURLToPath } from "node:url"
import { Sql } from "@salesintel/postgres"
import pg from "pg"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { backends } from "../packages/postgres/src/testing/Backends.ts"
import { runTag } from "../packages/postgres/src/testing/RunTag.ts"
import { fastPace, sandboxForFile } from "./sandbox.ts"

const root = fileURLToPath(new URL("../", import.meta.url))
const commands = {
  salesintel: join(root, "packages/cli/bin/salesintel.js"),
  "source-salesintel": join(root, "packages/source/bin/source-salesintel.js"),
  "salesintel-pg": join(root, "packages/postgres/bin/salesintel-pg.js"),
} as const

interface Ended {
  readonly code: number | null
  readonly stdout: string
  readonly stderr: string
}

/** A command run as its file (the shebang picks node), its output collected. */
const run = (command: keyof typeof commands, args: ReadonlyArray<string>): Promise<Ended> =>
  new Promise((resolve, reject) => {
    const child = spawn(commands[command], args, {
      stdio: ["ignore", "pipe", "pipe"],
      env: { ...process.env, DATABASE_URL: "" },
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
    child.on("close", (code) => resolve({ code, stdout, stderr }))
  })

// The search below finds 56 contacts here: what a smoke test needs, each a row to load.
const sandbox = sandboxForFile({ seed: 42, contacts: 5_000, companies: 500 })
let directory: string
beforeAll(() => {
  directory = mkdtempSync(join(tmpdir(), `salesintel-smoke-${runTag()}-`))
})
afterAll(() => {
  if (directory !== undefined) rmSync(directory, { recursive: true, force: true })
})

const writeJson = (name: string, value: unknown) => {
  const path = join(directory, name)
  writeFileSync(path, JSON.stringify(value))
  return path
}
/** A config buying with `key`, a key of its own for each command that asks the sandbox. */
const config = (key: string) =>
  writeJson(`config-${key}.json`, {
    api_key: key,
    base_url: sandbox.url,
    credit_budget: 2_000,
    requests_per_minute: fastPace,
    contacts: { searches: [{ name: "it-vps", filters: { job_departments: ["it_is"], job_levels: ["vp"] } }] },
  })

// The pipe needs a server (the loader's other backend); PGlite alone skips it.
const server = (await backends()).find((backend) => backend.name !== "pglite")

describe("the commands as processes (smoke)", () => {
  // Three steps over one PGlite directory (each a process that opens it): sync, sql, plan.
  let pglite = ""
  let key = ""
  it("sync into PGlite: exit code and figures", async () => {
    pglite = join(directory, "pglite")
    key = sandbox.key()
    const synced = await run("salesintel", ["sync", "--config", config(key), "--pglite-dir", pglite])
    expect(synced.code, synced.stderr).toBe(0)
    expect(synced.stdout).toMatch(/^sync succeeded/)
    expect(synced.stdout).toContain(`credits spent: ${sandbox.charged(key)} of 2000`)
    expect(sandbox.charged(key)).toBeGreaterThan(0)
  })

  it("sql over it: the contacts the sync bought", async () => {
    expect(pglite).not.toBe("")
    // --version beside the sql (the shorter step): it reads nothing the sql reads or writes.
    const [version, counted] = await Promise.all([
      run("salesintel", ["--version"]),
      run("salesintel", ["sql", "--pglite-dir", pglite, "--format", "csv", "select count(*) from contacts"]),
    ])
    expect(version.code).toBe(0)
    expect(version.stdout).toMatch(/\d+\.\d+\.\d+/)
    expect(counted.code, counted.stderr).toBe(0)
    expect(counted.stdout.split(/\r?\n/)[1]).toBe(String(sandbox.charged(key)))
  })

  it("plan over it: nothing left to buy, and nothing charged", async () => {
    expect(pglite).not.toBe("")
    const planKey = sandbox.key()
    const planned = await run("salesintel", [
      "plan",
      "--config",
      config(planKey),
      "--pglite-dir",
      pglite,
      "--json",
    ])
    expect(planned.code, planned.stderr).toBe(0)
    expect(JSON.parse(planned.stdout).credits).toBe(0)
    expect(sandbox.charged(planKey)).toBe(0)
  })

  it.skipIf(server === undefined)(
    "source-salesintel read | salesintel-pg load: one pipe, both exit 0",
    async () => {
      const url = process.env.DATABASE_URL || "postgres://postgres@127.0.0.1:5432/test"
      const schema = `smoke ${runTag()}`
      const catalog = writeJson("catalog.json", {
        streams: [
          { stream: { name: "contacts" }, sync_mode: "incremental", destination_sync_mode: "append_dedup" },
        ],
      })
      const key = sandbox.key()
      const source = spawn(
        commands["source-salesintel"],
        ["read", "--config", config(key), "--catalog", catalog],
        {
          stdio: ["ignore", "pipe", "inherit"],
        },
      )
      const loader = spawn(
        commands["salesintel-pg"],
        ["load", "--database-url", url, "--schema", schema, "--catalog", catalog],
        // Its STATE echo and summary are not read here: not kept, so never a full pipe.
        { stdio: [source.stdout, "ignore", "ignore"] },
      )
      // As a shell's pipe: the two commands hold its ends, this process lets go of its own.
      source.stdout?.destroy()
      const exited = (child: ReturnType<typeof spawn>) =>
        new Promise<number | null>((resolve) => child.on("close", (code) => resolve(code)))
      const [sourceCode, loaderCode] = await Promise.all([exited(source), exited(loader)])
      const client = new pg.Client({ connectionString: url })
      await client.connect()
      try {
        expect([sourceCode, loaderCode]).toEqual([0, 0])
        const { rows } = await client.query(
          `SELECT count(*)::int AS n FROM ${Sql.qualified(schema, "contacts")}`,
        )
        expect(rows[0]?.n).toBe(sandbox.charged(key))
      } finally {
        await client.query(`DROP SCHEMA IF EXISTS ${Sql.ident(schema)} CASCADE`)
        await client.end()
      }
    },
  )
})
