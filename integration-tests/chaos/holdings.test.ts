/**
 * SIGKILL when the user already holds many contacts. `salesintel sync` keeps the bought set in the
 * database's ledger, written in the transaction of the records it covers, so its checkpoint is
 * small whatever is held and comes after every page; the loader commits checkpoints as it frees
 * up, several together when it falls behind (at most 500 records waiting). What a kill can make
 * the rerun buy again is the pages in flight and what waits for the loader (harness.ts,
 * sigkillBoundLedger), not a share of the holdings: at the provider's rate limit, where the loader
 * keeps up, the same bound as a first sync's. Measured where a bought set kept in the state would
 * have had more at risk (about 24,000 contacts held, then a second search of about 20,000 new ones
 * killed at 90% of it).
 */

import { Plan } from "@salesintel/cli"
import type { Sandbox } from "@salesintel/sandbox"
import * as Effect from "effect/Effect"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import {
  charged,
  checkpointInterval,
  dropTarget,
  fingerprint,
  freshTarget,
  openSandbox,
  query,
  record,
  runs,
  sigkillBound,
  sigkillBoundLedger,
  sleep,
  suiteConcurrency,
  sync,
  type Target,
  writeJson,
} from "./harness.ts"

let sandbox: Sandbox
const targets: Array<Target> = []
beforeAll(async () => {
  // The provider's rate limit lifted, so that reads run at the speed where a kill hurts most.
  sandbox = await openSandbox(15, { contacts: 200_000, requestsPerMinute: 0 })
})
afterAll(async () => {
  for (const target of targets) await dropTarget(target)
  await sandbox?.close()
})

const held = { name: "it", filters: { job_departments: ["it_is"] } }
const added = { name: "ops", filters: { job_departments: ["ops"] } }
/** The client's limit lifted (where the provider's is), or the provider's 1,800 a minute. */
const configOf = (searches: ReadonlyArray<unknown>, rateLimited = false) => ({
  api_key: "sandbox-full",
  base_url: sandbox.url,
  credit_budget: 1_000_000,
  ...(rateLimited ? {} : { requests_per_minute: 1_000_000 }),
  concurrency: suiteConcurrency,
  contacts: { searches },
})

/**
 * Holds the first search's contacts, then kills a sync of both searches once the sandbox has
 * charged 90% of the second's, and reruns it: what the rerun bought again, and what was held.
 */
const holdThenKill = async (target: Target, rateLimited: boolean) => {
  sandbox.reset()
  const first = await sync(target, writeJson(configOf([held]))).done
  expect(first.code, first.stderr).toBe(0)
  const holding = charged(sandbox)
  expect(holding).toBeGreaterThan(20_000)
  const config = configOf([held, added], rateLimited)
  const due =
    (await Effect.runPromise(Plan.makePlan({ config, state: [], mode: "quick" }))).contacts?.searches[1]
      ?.due ?? 0
  expect(due).toBeGreaterThan(15_000)
  const configPath = writeJson(config)
  sandbox.reset()
  if (rateLimited) sandbox.setFaults({ latency_ms: 15, requests_per_minute: 1_800 })
  const running = sync(target, configPath)
  const deadline = Date.now() + 120_000
  while (charged(sandbox) < due * 0.9 && Date.now() < deadline) await sleep(2)
  running.child.kill("SIGKILL")
  const killed = await running.done
  const boughtBeforeKill = charged(sandbox)
  expect(killed.signal).toBe("SIGKILL")
  const rerun = await sync(target, configPath).done
  expect(rerun.code, rerun.stderr).toBe(0)
  // Whole: every contact of both searches once, and the killed run marked abandoned.
  expect((await fingerprint(target)).contacts).toMatch(new RegExp(`^${holding + due} rows`))
  expect((await runs(target)).map((run) => run.status)).toEqual(["succeeded", "abandoned", "succeeded"])
  return { holding, due, boughtBeforeKill, rebought: charged(sandbox) - due }
}

describe("SIGKILL with a large bought set", () => {
  it("the rerun re-buys no more than the pages in flight and three groups waiting for the loader", async () => {
    const target = freshTarget("postgres")
    targets.push(target)
    const { holding, due, boughtBeforeKill, rebought } = await holdThenKill(target, false)
    // A search of ~20,000 is read through partitions (the provider pages 10,000 deep at most),
    // which share the pages in flight: the bound is the same as for a search read directly.
    const bound = sigkillBoundLedger()
    const pipeBound = suiteConcurrency * 50 + 3 * checkpointInterval(holding + boughtBeforeKill)
    record({
      case: "SIGKILL at 90% of a search, ~24,000 contacts held, no rate limit",
      held: holding,
      "bought before kill": boughtBeforeKill,
      rebought,
      bound,
      "the pipe's bound at this size": pipeBound,
    })
    // At this size a set kept in the state would have had more at risk than the ledger's bound.
    expect(pipeBound).toBeGreaterThan(bound)
    expect(rebought).toBeGreaterThanOrEqual(0)
    expect(rebought).toBeLessThanOrEqual(bound)
    // The ids are in the ledger, one row for each contact held, and the state says so in a few bytes.
    const [ledger] = await query(
      target,
      `SELECT count(*)::int AS n FROM $schema._bought WHERE stream = 'contacts'`,
    )
    expect(ledger?.n).toBe(holding + due)
    const [saved] = await query(
      target,
      `SELECT state->>'known' AS known, length(state::text) AS bytes FROM $schema._state WHERE stream = 'contacts'`,
    )
    expect(saved?.known).toBe("ledger")
    expect(Number(saved?.bytes)).toBeLessThan(64 * 1024)
  }, 600_000)

  it("at the provider's rate limit the loader keeps up: the bound of a first sync, whatever is held", async () => {
    const target = freshTarget("postgres")
    targets.push(target)
    const { holding, boughtBeforeKill, rebought } = await holdThenKill(target, true)
    record({
      case: "SIGKILL at 90% of a search, ~24,000 contacts held, 1,800 requests a minute",
      held: holding,
      "bought before kill": boughtBeforeKill,
      rebought,
      bound: sigkillBound,
    })
    expect(rebought).toBeGreaterThanOrEqual(0)
    expect(rebought).toBeLessThanOrEqual(sigkillBound)
  }, 600_000)
})
