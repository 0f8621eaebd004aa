/**
 * The PGlite directory's lock file: one holder at a time, the second named its pid; a holder
 * whose process is dead cannot keep it; released with the scope; a wait ends when it is free.
 */
import { spawnSync } from "node:child_process"
import { existsSync, mkdtempSync, readFileSync, writeFileSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import * as Cause from "effect/Cause"
import * as Deferred from "effect/Deferred"
import * as Effect from "effect/Effect"
import * as Exit from "effect/Exit"
import * as Fiber from "effect/Fiber"
import { describe, expect, it } from "vitest"
import { removedAfterAll } from "../../../command-line/src/testing/Directories.ts"
import * as Lease from "./Lease.ts"
import * as RunLock from "./RunLock.ts"

// The directories these tests make, removed when the file's tests end.
const made = removedAfterAll()

const directory = () => made(mkdtempSync(join(tmpdir(), "salesintel-lock-")))

describe("RunLock.directory", () => {
  it("holds the directory until the scope closes; a second holder fails naming the first", async () => {
    const dir = directory()
    const second = await Effect.runPromise(
      Effect.scoped(
        Effect.zipRight(
          RunLock.directory(dir, { owner: "first" }),
          Effect.exit(Effect.scoped(RunLock.directory(dir, { owner: "second" }))),
        ),
      ),
    )
    expect(Exit.isFailure(second)).toBe(true)
    expect(String(Exit.isFailure(second) && second.cause)).toContain(
      `the PGlite directory ${dir} is in use by another run (pid ${process.pid} (first), since`,
    )
    expect(existsSync(join(dir, RunLock.lockFileName))).toBe(false)
    await Effect.runPromise(Effect.scoped(RunLock.directory(dir, { owner: "third" })))
  })

  it("takes over from a holder whose process is dead", async () => {
    const dir = directory()
    // The pid of a process that has ended.
    const dead = spawnSync(process.execPath, [
      "-e",
      "process.stdout.write(String(process.pid))",
    ]).stdout.toString()
    writeFileSync(
      join(dir, RunLock.lockFileName),
      JSON.stringify({ pid: Number(dead), since: "2020-01-01T00:00:00.000Z", command: "killed" }),
    )
    await Effect.runPromise(
      Effect.scoped(
        Effect.zipRight(
          RunLock.directory(dir, { owner: "next" }),
          Effect.sync(() => {
            const holder = JSON.parse(readFileSync(join(dir, RunLock.lockFileName), "utf8"))
            expect(holder.pid).toBe(process.pid)
            expect(holder.command).toBe("next")
          }),
        ),
      ),
    )
  })

  it("waits for the holder when asked, and gives up after the timeout", async () => {
    const dir = directory()
    const outcome = await Effect.runPromise(
      Effect.gen(function* () {
        const release = yield* Deferred.make<void>()
        const held = yield* Deferred.make<void>()
        const holder = yield* Effect.fork(
          Effect.scoped(
            RunLock.directory(dir, { owner: "holder" }).pipe(
              Effect.zipRight(Deferred.succeed(held, undefined)),
              Effect.zipRight(Deferred.await(release)),
            ),
          ),
        )
        yield* Deferred.await(held)
        const timedOut = yield* Effect.exit(
          Effect.scoped(
            RunLock.directory(dir, { owner: "impatient", wait: { wait: true, interval: 20, timeout: 100 } }),
          ),
        )
        const waiter = yield* Effect.fork(
          Effect.scoped(
            RunLock.directory(dir, { owner: "waiter", wait: { wait: true, interval: 20, timeout: 5_000 } }),
          ),
        )
        yield* Effect.sleep(100)
        yield* Deferred.succeed(release, undefined)
        yield* Fiber.join(holder)
        return { timedOut, waited: yield* Effect.exit(Fiber.join(waiter)) }
      }),
    )
    expect(Exit.isFailure(outcome.timedOut)).toBe(true)
    // After a wait it does not advise --wait again: it says how long it waited.
    const message = Exit.isFailure(outcome.timedOut) ? Cause.squash(outcome.timedOut.cause) : undefined
    expect(message instanceof Error ? message.message : "").toMatch(
      /is still in use by another run \(pid \d+ \(holder\).*\) after waiting 100ms; try again/,
    )
    expect(Exit.isSuccess(outcome.waited)).toBe(true)
  })

  it("a wait ends early when it is cancelled (a signal while waiting)", async () => {
    const dir = directory()
    const started = Date.now()
    const stop = await Effect.runPromise(Deferred.make<void>())
    setTimeout(() => Effect.runFork(Deferred.succeed(stop, undefined)), 100)
    const exit = await Effect.runPromise(
      Effect.scoped(
        Effect.zipRight(
          RunLock.directory(dir, { owner: "holder" }),
          Effect.exit(
            Effect.scoped(
              RunLock.directory(dir, {
                owner: "waiter",
                wait: { wait: true, interval: 50, timeout: 10_000, cancel: Deferred.await(stop) },
              }),
            ),
          ),
        ),
      ),
    )
    expect(Exit.isFailure(exit)).toBe(true)
    expect(Date.now() - started).toBeLessThan(5_000)
  })
})

describe("RunLock.directory and a pipe's lease", () => {
  const leaseIn = (dir: string, expiresAt: Date) =>
    writeFileSync(
      join(dir, Lease.fileName),
      JSON.stringify({
        takenAt: "2026-01-01T00:00:00.000Z",
        expiresAt: expiresAt.toISOString(),
        takenBy: "export",
      }),
    )
  const take = (dir: string, lease?: Lease.Use) =>
    Effect.runPromiseExit(
      Effect.scoped(RunLock.directory(dir, { owner: "run", ...(lease === undefined ? {} : { lease }) })),
    )

  it("a run that respects an open lease fails naming it and leaves no lock behind; a load consumes it", async () => {
    const dir = directory()
    leaseIn(dir, new Date(Date.now() + 60_000))
    const refused = await take(dir, "respect")
    expect(String(Exit.isFailure(refused) && refused.cause)).toContain(
      "is in use by another run (a pipe: export",
    )
    expect(existsSync(join(dir, RunLock.lockFileName))).toBe(false)
    // A run that does not buy (sql, status) ignores it.
    expect(Exit.isSuccess(await take(dir))).toBe(true)
    expect(Exit.isSuccess(await take(dir, "consume"))).toBe(true)
    expect(existsSync(join(dir, Lease.fileName))).toBe(false)
    expect(Exit.isSuccess(await take(dir, "respect"))).toBe(true)
  })

  it("a lapsed lease reserves nothing", async () => {
    const dir = directory()
    leaseIn(dir, new Date(Date.now() - 1_000))
    expect(Exit.isSuccess(await take(dir, "respect"))).toBe(true)
  })

  it("a run that waits for an open lease starts once the load has consumed it", async () => {
    const dir = directory()
    leaseIn(dir, new Date(Date.now() + 60_000))
    const waiting = Effect.runPromiseExit(
      Effect.scoped(
        RunLock.directory(dir, { owner: "sync", lease: "respect", wait: { wait: true, interval: 20 } }),
      ),
    )
    await new Promise((resolve) => setTimeout(resolve, 100))
    Lease.consumeInDirectory(dir)
    expect(Exit.isSuccess(await waiting)).toBe(true)
  })
})
