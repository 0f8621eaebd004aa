/**
 * A sync stopped by a signal, then run again, ends with the reference's tables. SIGTERM and SIGINT
 * land what is in flight and commit it: the rerun buys nothing twice, and the run is recorded
 * `interrupted` with exit 143 / 130. SIGKILL leaves no chance to: the transactions keep tables and
 * state whole, and what the rerun buys again is measured against the bound the README states
 * (the pages in flight and the records since the last committed state).
 */
import { describe, expect, it } from "vitest"
import {
  bins,
  chaosFile,
  charged,
  type Finished,
  fingerprint,
  record,
  runs,
  sigkillBound,
  sleep,
  start,
  sync,
  type Target,
  targetArgs,
  underway,
} from "./harness.ts"

const file = chaosFile()

/**
 * Runs a sync, sends `signal` once the sandbox has charged `fraction` of the reference run's
 * credits (the moment is a point in its buying, which a time would not be: a run that went faster
 * than the reference had ended before 0.8 of the reference's time), then reruns it to the end.
 */
const interruptThenRerun = async (kind: Target["kind"], signal: NodeJS.Signals, fraction: number) => {
  const { provider: sandbox, configPath, reference } = file
  const target = file.fresh(kind)
  sandbox.reset()
  const running = sync(target, configPath)
  await running.saw(underway)
  const deadline = Date.now() + 60_000
  while (charged(sandbox) < reference.credits * fraction && Date.now() < deadline) await sleep(2)
  running.child.kill(signal)
  const stopped: Finished = await running.done
  const chargedByFirst = charged(sandbox)
  const rerun = await sync(target, configPath).done
  expect(rerun.code, rerun.stderr).toBe(0)
  const total = charged(sandbox)
  return { target, stopped, chargedByFirst, total, rebought: total - reference.credits }
}

describe("signals", () => {
  it.each([
    { signal: "SIGTERM" as const, code: 143, fraction: 0.4 },
    { signal: "SIGINT" as const, code: 130, fraction: 0.6 },
  ])(
    "$signal: lands what is in flight, records the run interrupted, exits $code; the rerun buys nothing twice",
    async ({ signal, code, fraction }) => {
      const outcome = await interruptThenRerun("postgres", signal, fraction)
      record({
        case: `${signal} mid-run`,
        exit: outcome.stopped.code ?? String(outcome.stopped.signal),
        charged: outcome.total,
        reference: file.reference.credits,
        rebought: outcome.rebought,
      })
      expect(outcome.stopped.code, outcome.stopped.stderr).toBe(code)
      expect(outcome.rebought).toBe(0)
      expect(await fingerprint(outcome.target)).toEqual(file.reference.tables)
      const [first] = await runs(outcome.target)
      expect(first?.status).toBe("interrupted")
    },
  )
})

describe("SIGKILL at spread-out moments", () => {
  // Eight moments across the reference run's purchases (fixed, so a failure can be replayed).
  const moments = [0.08, 0.2, 0.33, 0.45, 0.55, 0.68, 0.8, 0.92]
  it.each(moments.map((fraction, trial) => ({ fraction, trial })))(
    "trial $trial: killed at $fraction of the run's credits, the rerun ends with the reference's tables",
    async ({ fraction, trial }) => {
      const kind = trial % 4 === 3 ? "pglite" : "postgres"
      const outcome = await interruptThenRerun(kind, "SIGKILL", fraction)
      record({
        case: `SIGKILL ${trial} (${kind}, at ${fraction})`,
        charged: outcome.total,
        reference: file.reference.credits,
        "bought before kill": outcome.chargedByFirst,
        rebought: outcome.rebought,
        bound: sigkillBound,
      })
      expect(outcome.stopped.signal).toBe("SIGKILL")
      expect(await fingerprint(outcome.target)).toEqual(file.reference.tables)
      expect(outcome.rebought).toBeGreaterThanOrEqual(0)
      expect(outcome.rebought).toBeLessThanOrEqual(sigkillBound)
      // The killed run is not left `running`: the rerun marked it abandoned.
      const [first] = await runs(outcome.target)
      expect(first?.status).toBe("abandoned")
    },
  )
})

describe("what the runs record after a SIGKILL", () => {
  // The suite's budget is 20,000: a mark is written ahead in blocks of max(500, 20,000 / 50).
  const block = 500
  it.each(["postgres" as const, "pglite" as const])(
    "on %s: the runs' credits are at least what the sandbox charged, at most a block more a run",
    async (kind) => {
      const outcome = await interruptThenRerun(kind, "SIGKILL", 0.5)
      const listed = await start(bins.salesintel, [
        "status",
        "--json",
        "--limit",
        "100",
        ...targetArgs(outcome.target),
      ]).done
      expect(listed.code, listed.stderr).toBe(0)
      const list = JSON.parse(listed.stdout) as ReadonlyArray<{
        readonly status: string
        readonly credits: number
      }>
      const recorded = list.reduce((sum, run) => sum + run.credits, 0)
      record({ case: `SIGKILL then rerun (${kind}): runs' credits`, charged: outcome.total, recorded })
      expect(list.map((run) => run.status)).toEqual(["succeeded", "abandoned"])
      expect(recorded).toBeGreaterThanOrEqual(outcome.total)
      expect(recorded).toBeLessThanOrEqual(outcome.total + block * list.length)
    },
  )
})
