/**
 * Storage that fails under a sync into embedded PGlite, on a filesystem of the test's own (a tmpfs
 * mounted for it: the suite runs as root in CI; where mounting is not allowed the cases are
 * skipped, and say why). Postgres in WebAssembly does not fail when it cannot write its log: it
 * spins for ever. So a disk that fills during a sync must end the run within seconds with one line
 * naming the directory and the cause, having committed what it had, and a rerun once there is room
 * buys back no more than a kill would; a read-only directory is refused at once, in one line.
 */
import { execFileSync } from "node:child_process"
import { mkdirSync, mkdtempSync, rmSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { afterAll, describe, expect, it } from "vitest"
import {
  chaosFile,
  charged,
  fingerprint,
  record,
  runs,
  sigkillBound,
  sleep,
  sync,
  type Target,
} from "./harness.ts"

const file = chaosFile()

const mounted: Array<string> = []
/** A tmpfs of `megabytes` at a fresh directory, or undefined where mounting is not allowed. */
const mountTmpfs = (megabytes: number): string | undefined => {
  const at = mkdtempSync(join(tmpdir(), "salesintel-storage-"))
  try {
    execFileSync("mount", ["-t", "tmpfs", "-o", `size=${megabytes}m`, "tmpfs", at], { stdio: "ignore" })
    mounted.push(at)
    return at
  } catch {
    rmSync(at, { recursive: true, force: true })
    return undefined
  }
}
const canMount = (() => {
  const at = mountTmpfs(1)
  if (at === undefined) return false
  execFileSync("umount", [at])
  mounted.pop()
  rmSync(at, { recursive: true, force: true })
  return true
})()
if (!canMount) console.warn("storage chaos cases skipped: this user may not mount a tmpfs")

afterAll(() => {
  for (const at of mounted) {
    try {
      execFileSync("umount", [at])
      rmSync(at, { recursive: true, force: true })
    } catch {}
  }
})

/** Fills the filesystem at `at` until `leaveMegabytes` are free (a file of zeros). */
const fillUntil = (at: string, leaveMegabytes: number) => {
  const free = Number(execFileSync("df", ["--output=avail", "-B1M", at]).toString().split("\n")[1])
  const fill = Math.max(0, free - leaveMegabytes)
  execFileSync("fallocate", ["-l", `${fill}M`, join(at, "filler")])
}

describe.skipIf(!canMount)("storage that fails under a sync into PGlite", () => {
  it("a disk that fills mid-sync ends the run within seconds, naming the directory; the rerun finishes", async () => {
    const { provider: sandbox, configPath, reference } = file
    const disk = mountTmpfs(400)
    if (disk === undefined) throw new Error("mount failed")
    const target: Target = { kind: "pglite", directory: join(disk, "pglite") }
    sandbox.reset()
    const running = sync(target, configPath)
    // Once the contacts are being bought, the disk fills (40 MB left: below what a batch needs).
    const deadline = Date.now() + 60_000
    while (charged(sandbox) < reference.credits * 0.3 && Date.now() < deadline) await sleep(2)
    fillUntil(disk, 40)
    const filledAt = Date.now()
    const stopped = await running.done
    const seconds = (Date.now() - filledAt) / 1_000
    const chargedByRun = charged(sandbox)
    rmSync(join(disk, "filler"))
    const said = stopped.stdout + stopped.stderr
    const rerun = await sync(target, configPath).done
    const rebought = charged(sandbox) - reference.credits
    record({
      case: "disk full mid-sync (PGlite)",
      exit: stopped.code ?? "?",
      "seconds after the fill": seconds.toFixed(1),
      "charged by the run": chargedByRun,
      rebought,
    })
    expect(stopped.code, said).toBe(1)
    expect(seconds).toBeLessThan(15)
    expect(said).toContain(`the disk holding the PGlite directory ${target.directory} is full`)
    expect(said).not.toMatch(/\n\s+at /)
    expect(rerun.code, rerun.stderr).toBe(0)
    expect(await fingerprint(target)).toEqual(reference.tables)
    expect(rebought).toBeLessThanOrEqual(sigkillBound)
    expect((await runs(target)).map((run) => run.status)).toEqual(["failed", "succeeded"])
  })

  it("a read-only directory is refused at once, in one line naming it; nothing is bought", async () => {
    const { provider: sandbox, configPath } = file
    const disk = mountTmpfs(8)
    if (disk === undefined) throw new Error("mount failed")
    const directory = join(disk, "pglite")
    mkdirSync(directory)
    execFileSync("mount", ["-o", "remount,ro", disk])
    sandbox.reset()
    const finished = await sync({ kind: "pglite", directory }, configPath).done
    record({ case: "read-only PGlite directory", exit: finished.code ?? "?", charged: charged(sandbox) })
    expect(finished.code).toBe(1)
    expect(finished.stderr).toContain(directory)
    expect(finished.stderr).toMatch(/read-only file system/)
    expect(finished.stderr).not.toMatch(/\n\s+at /)
    expect(charged(sandbox)).toBe(0)
  })
})
