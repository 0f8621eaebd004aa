/**
 * A load killed mid-way (SIGKILL, between or during batches) leaves the tables and `_state` in
 * agreement, and a load resumed from that state ends with the same tables as a clean one. The
 * child is the real bin (`dist/bin.js`, built by `npm test`) reading JSONL on a pipe that is given
 * the first 600 of the 1,010 messages and never ends: the kill always comes before the end of the
 * input, however fast or slow the child, so the input need be no longer than that.
 */
import { spawn } from "node:child_process"
import { dirname, join } from "node:path"
import { fileURLToPath } from "node:url"
import * as Effect from "effect/Effect"
import * as Stream from "effect/Stream"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { Database } from "../database/Database.ts"
import { ident, qualified } from "../database/Sql.ts"
import { type Backend, backends, open } from "../testing/Backends.ts"
import { contactMessages } from "../testing/Records.ts"
import * as Loader from "./Loader.ts"
import * as SavedState from "./SavedState.ts"

const bin = join(dirname(fileURLToPath(import.meta.url)), "..", "..", "dist", "bin.js")
const total = 1_000
/** Messages written to the child (5 commits' worth): past the third commit, short of the end. */
const given = 600
const every = 100
const all = await backends()

/** Runs the bin on `input` (its stdin left open) and SIGKILLs it once `commits` states have committed. */
const loadUntilKilled = (args: ReadonlyArray<string>, input: string, commits: number) =>
  new Promise<number>((resolve, reject) => {
    const child = spawn(process.execPath, [bin, "load", ...args, "--batch-size", "70"], {
      stdio: ["pipe", "pipe", "pipe"],
    })
    // A write cut off by the kill is no failure here.
    child.stdin.on("error", () => {})
    child.stdin.write(input)
    let seen = 0
    let stderr = ""
    child.stderr?.on("data", (chunk) => {
      stderr += chunk
    })
    child.stdout?.on("data", (chunk: Buffer) => {
      seen += chunk
        .toString("utf8")
        .split("\n")
        .filter((line) => line.includes('"STATE"')).length
      if (seen >= commits) child.kill("SIGKILL")
    })
    child.on("exit", (code, signal) =>
      signal === "SIGKILL" ? resolve(seen) : reject(new Error(`not killed (exit ${code}): ${stderr}`)),
    )
  })

describe.each(all.map((backend): [string, Backend] => [backend.name, backend]))(
  "a killed load on %s",
  (_, backend) => {
    let env: Awaited<ReturnType<typeof open>>
    beforeAll(async () => {
      env = await open(backend, "killed load")
    })
    afterAll(async () => {
      await env?.run(
        Effect.flatMap(Database, (db) =>
          db.exec(`DROP SCHEMA IF EXISTS ${ident(`${env.schema} clean`)} CASCADE`),
        ),
      )
      await env?.close()
    })

    it("commits nothing half-way, and resumes to the same tables as a clean load", {
      timeout: 120_000,
    }, async () => {
      const messages = contactMessages(total, every)
      const input = messages
        .slice(0, given)
        .map((message) => `${JSON.stringify(message)}\n`)
        .join("")
      const target =
        env.url === undefined ? ["--pglite-dir", env.pgliteDir ?? ""] : ["--database-url", env.url]
      // The child needs the database to itself (PGlite is one process's); reopened below.
      await env.suspend()
      await loadUntilKilled([...target, "--schema", env.schema], input, 3)
      await env.resume()

      const [saved] = await env.run(SavedState.read(env.schema))
      const upto = (saved?.stream.stream_state as { upto: number } | undefined)?.upto ?? 0
      expect(upto).toBeGreaterThanOrEqual(3 * every)
      expect(upto).toBeLessThan(total)
      const count = async (schema: string, name: string) =>
        Number((await env.query(`SELECT count(*)::int AS n FROM ${qualified(schema, name)}`))[0]?.n)
      // The tables hold exactly what the committed state covers.
      expect(await count(env.schema, "contacts")).toBe(upto)
      expect(await count(env.schema, "contact_phones")).toBe(2 * upto)
      const [run] = await env.query(`SELECT status, finished_at FROM ${qualified(env.schema, "_sync_runs")}`)
      expect(run).toEqual({ status: "running", finished_at: null })

      // Resume as the source would from that state (re-sending a few records is harmless too).
      await env.run(
        Loader.load(Stream.fromIterable(contactMessages(total - upto + 50, every, upto - 50)), {
          schema: env.schema,
        }),
      )
      const clean = `${env.schema} clean`
      await env.run(Loader.load(Stream.fromIterable(messages), { schema: clean }))
      const snapshot = async (schema: string) => ({
        contacts: await env.query(
          `SELECT match_id, display_name, job_level, company_id::text AS company_id, _raw::text AS raw FROM ${qualified(schema, "contacts")} ORDER BY match_id`,
        ),
        phones: await env.query(
          `SELECT match_id, position, type, value FROM ${qualified(schema, "contact_phones")} ORDER BY match_id, position`,
        ),
      })
      const resumed = await snapshot(env.schema)
      expect(resumed.contacts).toHaveLength(total)
      expect(resumed).toEqual(await snapshot(clean))
    })
  },
)
