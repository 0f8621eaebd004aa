/**
 * A contact bought whose record did not decode, but whose key is known, is held like a contact
 * with a row (issue 44): its record is kept whole in `_rejected` with its key, and until it is
 * stale (`refresh_after_days`, from the day it was fetched) no sync, plan or pipe buys it again.
 * Through `salesintel sync` in process, the plan, and the pipe (`salesintel-pg state` in process,
 * the source's read, the loader), against the sandbox (credits as it counts them: its
 * `bad_field_rate` sends some contacts' paid records with `job_level` a number, the same contacts
 * on every request, their preview whole), on PGlite and a real Postgres.
 */

import { PackedIds } from "@salesintel/airbyte"
import { Loader } from "@salesintel/postgres"
import { Commands } from "@salesintel/source"
import { describe, expect, it } from "vitest"
import { backends } from "../packages/postgres/src/testing/Backends.ts"
import { sandboxForFile } from "./sandbox.ts"
import { targetOn } from "./target.ts"
import { apartIn, configOver, contactsCatalog, searchA, searchB, truthSandbox } from "./truth.ts"

const sandbox = sandboxForFile(truthSandbox)

const configOf = (key: string) =>
  configOver(sandbox.url, key, { searches: [searchA, searchB], refresh_after_days: 30 })
type Config = ReturnType<typeof configOf>

/** The pipe's catalog: the contacts, and the records their pages carry that do not decode. */
const withRejected = {
  streams: [
    ...contactsCatalog.streams,
    { stream: { name: "_rejected" }, sync_mode: "incremental", destination_sync_mode: "append" },
  ],
}

describe.each(await backends())("rejected contacts with a key are held, on $name", (backend) => {
  const target = targetOn(backend, "e2e rejected held", sandbox)
  const { fresh, table, count, charging } = target
  const rowsOf = target.rows
  const database = () => target.database
  /** `salesintel sync`, in process, which must succeed: what the sandbox charged. */
  const sync = async (json: Config) => {
    const { outcome, charged } = await target.sync(json)
    expect(outcome.status).toBe("succeeded")
    return charged
  }
  /** The credits the plan of the next sync says, from the target as `salesintel plan` reads it. */
  const planned = async (json: Config) => (await target.plan(json)).credits
  /** `salesintel-pg state`, in process. */
  const exportedState = async (): Promise<unknown> => {
    // The load after it is Loader.load in process, which takes no lock: no lease left for it.
    const ended = await target.command("salesintel-pg", ["state", "--lease-minutes", "0"], { env: {} })
    expect(ended.stderr).toBe("")
    expect(ended.code).toBe(0)
    return JSON.parse(ended.stdout)
  }
  /** The pipe: what `salesintel-pg state` prints as the source's --state, loaded; what was charged. */
  const pipe = async (json: Config) => {
    const state = await exportedState()
    const { result: summary, charged } = await charging(json, () =>
      database().run(
        Loader.load(Commands.read({ config: json, catalog: withRejected, state }), {
          schema: database().schema,
        }),
      ),
    )
    expect(summary.sourceErrors).toEqual([])
    return charged
  }
  /** The rejected contacts with their key, each once. */
  const rejectedKeys = () =>
    count(
      `SELECT count(DISTINCT key)::int AS n FROM ${table("_rejected")} WHERE stream = 'contacts' AND key IS NOT NULL`,
    )
  /** The first run's figures: every record paid for a row or a rejected record with its key. */
  const bought = async (charged: number) => {
    const rows = await rowsOf("contacts")
    const rejected = await rejectedKeys()
    expect(rejected).toBeGreaterThan(0)
    expect(rows + rejected).toBe(charged)
    expect(await rowsOf("_rejected")).toBe(rejected)
    expect(
      await count(
        `SELECT count(*)::int AS n FROM ${table("_rejected")} WHERE reason LIKE '%job_level%' AND record->>'match_id' = key`,
      ),
    ).toBe(rejected)
    return { rows, rejected }
  }

  it("through salesintel sync and the plan: bought once until stale, then due again like any contact", {
    timeout: 120_000,
  }, async () => {
    await fresh()
    const key = sandbox.key()
    sandbox.setFaults({ bad_field_rate: 0.05 }, key)
    const json = configOf(key)
    const first = await sync(json)
    const { rows, rejected } = await bought(first)

    // Held: the plan counts none of them, the next sync buys none of them.
    expect(await planned(json)).toBe(0)
    expect(await sync(json)).toBe(0)
    expect(await rowsOf("contacts")).toBe(rows)
    // The ledger is still the contacts table's index: the rejected keys are held by `_rejected`.
    expect(await apartIn(database().query, database().schema)).toEqual({ extraKeys: 0, missingKeys: 0 })

    // Fetched 100 days ago, past refresh_after_days 30: due again, and bought again, like any contact.
    await database().query(
      `UPDATE ${table("_rejected")} SET fetched_at = fetched_at - interval '100 days' WHERE stream = 'contacts'`,
    )
    expect(await planned(json)).toBe(rejected)
    expect(await sync(json)).toBe(rejected)
    // Rejected again (the same record: its row updated, fetched today), so held again.
    expect(await rejectedKeys()).toBe(rejected)
    expect(await planned(json)).toBe(0)
    expect(await sync(json)).toBe(0)
  })

  it("through the pipe: the state salesintel-pg state exports holds them", { timeout: 120_000 }, async () => {
    await fresh()
    const key = sandbox.key()
    sandbox.setFaults({ bad_field_rate: 0.05 }, key)
    const json = configOf(key)
    const first = await pipe(json)
    const { rows, rejected } = await bought(first)
    // The state the source sent holds them too (where a platform keeps the state, not the target).
    const [saved] = await database().query(
      `SELECT state->'known' AS known FROM ${table("_state")} WHERE stream = 'contacts'`,
    )
    const known = new Set(
      Object.values((saved?.known ?? {}) as Record<string, string | ReadonlyArray<string>>).flatMap((keys) =>
        typeof keys === "string" ? PackedIds.unpack(keys) : keys,
      ),
    )
    const keyed = await database().query(`SELECT key FROM ${table("_rejected")} WHERE key IS NOT NULL`)
    expect(keyed.filter((row) => !known.has(String(row.key)))).toEqual([])
    expect(await pipe(json)).toBe(0)
    expect(await rowsOf("contacts")).toBe(rows)
    expect(await apartIn(database().query, database().schema)).toEqual({ extraKeys: 0, missingKeys: 0 })
    // Stale: due again through the pipe too.
    await database().query(
      `UPDATE ${table("_rejected")} SET fetched_at = fetched_at - interval '100 days' WHERE stream = 'contacts'`,
    )
    expect(await pipe(json)).toBe(rejected)
    expect(await pipe(json)).toBe(0)
  })
})
