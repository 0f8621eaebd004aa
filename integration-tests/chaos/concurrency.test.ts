/**
 * Two syncs of one config into one target at once: one run at a time per target. The second
 * fails at once naming the holder, or with --wait runs after the first and buys nothing the first
 * bought. Either way the provider charges exactly what one sync costs.
 */
import { describe, expect, it } from "vitest"
import { chaosFile, charged, fingerprint, record, sleep, sync } from "./harness.ts"

/** Resolves once the first run is buying (the sandbox has charged something). */
const buying = async () => {
  for (let tries = 0; tries < 600 && charged(file.provider) === 0; tries++) await sleep(25)
}

// 5 requests a second: the first run is still buying for seconds after the second starts.
const file = chaosFile({ config: { requests_per_minute: 300 } })

describe.each(["postgres", "pglite"] as const)("two syncs at once into one %s target", (kind) => {
  it("the second fails at once, naming the holder; the provider charges one sync", async () => {
    const { provider: sandbox, configPath, reference } = file
    const target = file.fresh(kind)
    sandbox.reset()
    const first = sync(target, configPath)
    // The first holds the target from its start; the second starts while it is buying.
    await buying()
    const second = await sync(target, configPath).done
    const firstDone = await first.done
    record({
      case: `two at once (${kind})`,
      "first exit": firstDone.code ?? "?",
      "second exit": second.code ?? "?",
      "second seconds": second.seconds.toFixed(1),
      charged: charged(sandbox),
      reference: reference.credits,
    })
    expect(firstDone.code, firstDone.stderr).toBe(0)
    expect(second.code).not.toBe(0)
    expect(second.stderr).toMatch(/held by|locked|another run/i)
    expect(second.seconds).toBeLessThan(10)
    expect(charged(sandbox)).toBe(reference.credits)
    expect(await fingerprint(target)).toEqual(reference.tables)
  })

  it("with --wait the second runs after the first and buys nothing twice", async () => {
    const { provider: sandbox, configPath, reference } = file
    const target = file.fresh(kind)
    sandbox.reset()
    const first = sync(target, configPath)
    await buying()
    const second = sync(target, configPath, ["--wait"])
    const [firstDone, secondDone] = await Promise.all([first.done, second.done])
    record({
      case: `two at once, --wait (${kind})`,
      "first exit": firstDone.code ?? "?",
      "second exit": secondDone.code ?? "?",
      charged: charged(sandbox),
      reference: reference.credits,
    })
    expect(firstDone.code, firstDone.stderr).toBe(0)
    expect(secondDone.code, secondDone.stderr).toBe(0)
    expect(charged(sandbox)).toBe(reference.credits)
    expect(await fingerprint(target)).toEqual(reference.tables)
  })
})
