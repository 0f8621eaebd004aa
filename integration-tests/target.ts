/**
 * A test file's target on one backend (a schema of its own, tagged with the run and dropped at the
 * end) and the commands its cases run there as a user would, each with what the sandbox charged:
 * `salesintel sync` and `salesintel plan` in process, and any bin in process on the target. PGlite's
 * files are one holder's at a time, so the test's own connection steps aside while a bin runs.
 */
import { Plan, Sync } from "@salesintel/cli"
import { Sql } from "@salesintel/postgres"
import { HeldKeys } from "@salesintel/source"
import * as Effect from "effect/Effect"
import { afterAll, beforeAll, expect } from "vitest"
import type * as InProcess from "../packages/command-line/src/testing/InProcess.ts"
import { type Backend, open } from "../packages/postgres/src/testing/Backends.ts"
import { type Bin, runInProcess } from "./bins.ts"
import type { FileSandbox } from "./sandbox.ts"

/** A config as the tests write it: the key is what the sandbox counts the charges of. */
interface Keyed {
  readonly api_key: string
}

export const targetOn = (backend: Backend, schemaPrefix: string, sandbox: FileSandbox) => {
  let database: Awaited<ReturnType<typeof open>>
  beforeAll(async () => {
    database = await open(backend, schemaPrefix)
    // The database starts here (PGlite takes a second or more to boot), not in the first case's time.
    await database.query("SELECT 1")
  })
  afterAll(async () => {
    await database?.close()
  })
  const table = (name: string) => Sql.qualified(database.schema, name)
  const count = async (sql: string) => Number((await database.query(sql))[0]?.n ?? 0)
  /** What the sandbox charges `json`'s key while `run` runs. */
  const charging = async <A>(json: Keyed, run: () => Promise<A>) => {
    const before = sandbox.charged(json.api_key)
    const result = await run()
    return { result, charged: sandbox.charged(json.api_key) - before }
  }
  /** `salesintel sync` in process, as it ends: its outcome, what it printed, what was charged. */
  const syncAsIs = async (json: Keyed, options: Partial<Sync.SyncOptions> = {}) => {
    const lines: Array<string> = []
    const { result: outcome, charged } = await charging(json, () =>
      database.run(
        Sync.sync({
          config: json,
          schema: database.schema,
          progress: { isTTY: false, write: (text: string) => lines.push(text) > 0 },
          ...options,
        }),
      ),
    )
    return { outcome, charged, printed: lines.join("") }
  }
  /** The target's flags for a bin. */
  const flags = () => [
    ...(database.url === undefined
      ? ["--pglite-dir", String(database.pgliteDir)]
      : ["--database-url", database.url]),
    "--schema",
    database.schema,
  ]
  return {
    get database() {
      return database
    },
    fresh: () => database.query(`DROP SCHEMA IF EXISTS ${Sql.ident(database.schema)} CASCADE`),
    table,
    count,
    /** The rows of a table of the target. */
    rows: (name: string) => count(`SELECT count(*)::int AS n FROM ${table(name)}`),
    charging,
    syncAsIs,
    /** A sync that must end without error, its summary's credits what the sandbox charged. */
    sync: async (json: Keyed, options: Partial<Sync.SyncOptions> = {}) => {
      const synced = await syncAsIs(json, options)
      expect(synced.outcome.error).toBeUndefined()
      expect(synced.outcome.creditsSpent).toBe(synced.charged)
      return synced
    },
    /** The plan of the next sync as `salesintel plan` makes it from the target: free requests only. */
    plan: async (json: Keyed, fullRefresh?: ReadonlyArray<string>, now: number = Date.now()) => {
      const { state, held, spentThisPeriod, suppressed } = await database.run(
        Plan.savedIn(database.schema, Plan.heldKeysWanted(json), { config: json, now }),
      )
      const made = Plan.makePlan({
        config: json,
        state,
        suppressed,
        mode: "exact",
        now,
        spentThisPeriod,
        ...(fullRefresh === undefined ? {} : { fullRefresh }),
      })
      const { result, charged } = await charging(json, () =>
        Effect.runPromise(Effect.provideService(made, HeldKeys.HeldKeys, held)),
      )
      expect(charged).toBe(0)
      return result
    },
    flags,
    /** `bin args` in process on the target (its flags added). */
    command: async (bin: Bin, args: ReadonlyArray<string>, invocation: InProcess.Invocation = {}) => {
      const onPGlite = database.url === undefined
      if (onPGlite) await database.suspend()
      try {
        return await runInProcess(bin, [...args, ...flags()], invocation)
      } finally {
        if (onPGlite) await database.resume()
      }
    },
  }
}
