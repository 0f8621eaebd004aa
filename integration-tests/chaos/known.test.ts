/**
 * SIGKILL during the enrichment of known contacts (a CSV of emails). Under `salesintel sync` the
 * identities done go to the target's `_known_done` as records, committed with the checkpoint after
 * their contacts (packages/source/src/streams/contacts/KnownDone.ts): an identity is never marked
 * done without its contacts, so the rerun ends with the reference's tables and identities done,
 * and buys again at most what was paid for and not committed (the ledger's bound, harness.ts).
 */
import { rmSync, writeFileSync } from "node:fs"
import { dirname, join } from "node:path"
import { Dataset } from "@salesintel/sandbox"
import { afterAll, describe, expect, it } from "vitest"
import {
  chaosFile,
  charged,
  fingerprint,
  query,
  record,
  sigkillBoundLedger,
  sleep,
  sync,
  type Target,
  underway,
  writeJson,
} from "./harness.ts"

/** Emails of the sandbox's own contacts (its seed and size: harness.ts openSandbox), and two it has not. */
const emails = (count: number): ReadonlyArray<string> => {
  const dataset = Dataset.build({ seed: 42, contacts: 100_000, companies: 10_000 })
  const found = new Set<string>()
  for (let index = 0; found.size < count; index += 7) found.add(dataset.contact(index).email)
  return [...found, "nobody-one@nowhere-known.example", "nobody-two@nowhere-known.example"]
}

const csvPath = join(dirname(writeJson({})), "known.csv")
writeFileSync(csvPath, `email\n${emails(1_000).join("\n")}\n`)
afterAll(() => rmSync(dirname(csvPath), { recursive: true, force: true }))

// The client's pace lifted: an email is a free lookup of its own, and the run is to buy, not wait.
const file = chaosFile({ config: { contacts: { known_file: csvPath }, requests_per_minute: 1_000_000 } })

/** The identities done, as a digest of their keys: equal means the same identities done. */
const done = async (target: Target) => {
  const [row] = await query(
    target,
    "SELECT count(*)::int AS n, md5(coalesce(string_agg(key, '|' ORDER BY key), '')) AS digest FROM $schema._known_done",
  )
  return `${row?.n} identities, ${row?.digest}`
}

const killThenRerun = async (kind: Target["kind"], fraction: number) => {
  const { provider: sandbox, configPath, reference } = file
  const target = file.fresh(kind)
  sandbox.reset()
  const running = sync(target, configPath)
  await running.saw(underway)
  const deadline = Date.now() + 60_000
  while (charged(sandbox) < reference.credits * fraction && Date.now() < deadline) await sleep(2)
  running.child.kill("SIGKILL")
  const stopped = await running.done
  const chargedByFirst = charged(sandbox)
  const rerun = await sync(target, configPath).done
  expect(rerun.code, rerun.stderr).toBe(0)
  return { target, stopped, chargedByFirst, rebought: charged(sandbox) - reference.credits }
}

describe("SIGKILL while known contacts are enriched", () => {
  let referenceDone = ""
  it("the reference: every email looked up is done, its contacts bought once", async () => {
    const target = file.fresh("postgres")
    file.provider.reset()
    const finished = await sync(target, file.configPath).done
    expect(finished.code, finished.stderr).toBe(0)
    expect(await fingerprint(target)).toEqual(file.reference.tables)
    referenceDone = await done(target)
    expect(referenceDone).toMatch(/^1002 identities/)
    const [state] = await query(
      target,
      "SELECT state->>'emails' AS emails FROM $schema._state WHERE stream = 'contacts'",
    )
    expect(state?.emails).toBe("ledger")
  })

  it.each([
    { kind: "postgres" as const, fraction: 0.3 },
    { kind: "pglite" as const, fraction: 0.55 },
    { kind: "postgres" as const, fraction: 0.85 },
  ])(
    "killed at $fraction of the credits ($kind): the rerun ends with the reference's tables and identities done",
    async ({ kind, fraction }) => {
      const outcome = await killThenRerun(kind, fraction)
      record({
        case: `known contacts, SIGKILL (${kind}, at ${fraction})`,
        reference: file.reference.credits,
        "bought before kill": outcome.chargedByFirst,
        rebought: outcome.rebought,
        bound: sigkillBoundLedger(),
      })
      expect(outcome.stopped.signal).toBe("SIGKILL")
      expect(await fingerprint(outcome.target)).toEqual(file.reference.tables)
      expect(await done(outcome.target)).toBe(referenceDone)
      expect(outcome.rebought).toBeGreaterThanOrEqual(0)
      expect(outcome.rebought).toBeLessThanOrEqual(sigkillBoundLedger())
    },
  )
})
