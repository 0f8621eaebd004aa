/**
 * `salesintel-pg load`'s run lifecycle, in process, on PGlite and a real Postgres: an input that
 * ends early empties nothing and fails the run; a bad line fails it after committing what came
 * before; a stop (a signal) keeps what committed and records `interrupted`; runs left `running`
 * are marked abandoned; a STATE of an unknown stream is refused; the run row's records follow each
 * commit; one run at a time per schema; and a dropped connection reports its own cause.
 */
import { Readable } from "node:stream"
import { Message } from "@salesintel/airbyte"
import * as Cause from "effect/Cause"
import * as Deferred from "effect/Deferred"
import * as Effect from "effect/Effect"
import * as Exit from "effect/Exit"
import * as ManagedRuntime from "effect/ManagedRuntime"
import * as Option from "effect/Option"
import pg from "pg"
import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest"
import * as PgDatabase from "./database/PgDatabase.ts"
import { qualified } from "./database/Sql.ts"
import { type LoadRunOptions, loadRun } from "./LoadRun.ts"
import * as Ddl from "./migrate/Ddl.ts"
import * as RunLock from "./runs/RunLock.ts"
import * as Runs from "./runs/Runs.ts"
import type * as StopSignal from "./runs/StopSignal.ts"
import { type Backend, backends, open } from "./testing/Backends.ts"
import { company, contact, contactMessages, record, state } from "./testing/Records.ts"

const lines = (messages: ReadonlyArray<Message.Message>) =>
  messages.map((m) => `${JSON.stringify(m)}\n`).join("")
const status = (stream: string, value: Message.StreamStatus) => Message.streamStatus(stream, value, 1)

describe.each((await backends()).map((backend): [string, Backend] => [backend.name, backend]))(
  "salesintel-pg load's run on %s",
  (_, backend) => {
    let env: Awaited<ReturnType<typeof open>>
    beforeAll(async () => {
      env = await open(backend, "load run")
    })
    afterAll(async () => {
      await env?.close()
    })
    beforeEach(async () => {
      await env.query(`DROP SCHEMA IF EXISTS "${env.schema.replaceAll('"', '""')}" CASCADE`)
    })

    const options = (more: Partial<LoadRunOptions> = {}): LoadRunOptions => ({
      schema: env.schema,
      syncModes: { contacts: "overwrite" },
      batchSize: 7,
      onSourceMessage: () => Effect.void,
      onStateCommitted: () => Effect.void,
      lock: { owner: `load run test ${process.pid}` },
      ...more,
    })
    const load = (input: Readable | string, more: Partial<LoadRunOptions> = {}) =>
      env.run(Effect.exit(loadRun(typeof input === "string" ? Readable.from([input]) : input, options(more))))
    const contacts = async () =>
      Number((await env.query(`SELECT count(*)::int AS n FROM ${qualified(env.schema, "contacts")}`))[0]?.n)
    const runs = () =>
      env.query(
        `SELECT id::int AS id, status, streams::text AS streams, error FROM ${qualified(env.schema, "_sync_runs")} ORDER BY id`,
      )

    it("a load through the pipe records the changes it finds with its run", { timeout: 60_000 }, async () => {
      const input = (products: ReadonlyArray<string>, title: string) =>
        lines([
          record("companies", company(7, products)),
          state("companies", { done: 1 }),
          record("contacts", contact(1, { job_title: title })),
          state("contacts", { done: 1 }),
        ])
      expect(Exit.isSuccess(await load(input(["A"], "IT Manager")))).toBe(true)
      const second = await load(input(["B"], "IT Director"))
      if (!Exit.isSuccess(second)) throw new Error("the second load failed")
      const runId = second.value.runId
      const found = await env.query(
        `SELECT product, change, run_id::int AS run_id FROM ${qualified(env.schema, "technology_changes")} ORDER BY product`,
      )
      expect(found.map((row) => ({ ...row }))).toEqual([
        { product: "A", change: "dropped", run_id: runId },
        { product: "B", change: "adopted", run_id: runId },
      ])
      const jobs = await env.query(
        `SELECT from_job_title, to_job_title, run_id::int AS run_id FROM ${qualified(env.schema, "job_changes")}`,
      )
      expect(jobs.map((row) => ({ ...row }))).toEqual([
        { from_job_title: "IT Manager", to_job_title: "IT Director", run_id: runId },
      ])
    })

    it("append_dedup: an input cut while a stream runs (its source killed) fails, after committing what it had", async () => {
      const cut = lines([
        status("contacts", "STARTED"),
        status("contacts", "RUNNING"),
        ...contactMessages(25, 10),
      ])
      const exit = await load(cut.slice(0, cut.lastIndexOf("\n", cut.length - 2) + 1), {
        syncModes: { contacts: "append_dedup" },
      })
      expect(Exit.isSuccess(exit) && exit.value.status).toBe("failed")
      expect(Exit.isSuccess(exit) && exit.value.summary.endedEarly).toEqual(["contacts"])
      expect(Exit.isSuccess(exit) && exit.value.error).toMatch(/contacts had not reported its end/)
      expect(await contacts()).toBe(20)
      expect((await runs()).map((row) => row.status)).toEqual(["failed"])
      // Cut in the middle of a line (a source killed while writing a large block): the same, and said.
      const midLine = await load(cut.slice(0, cut.length - 30), { syncModes: { contacts: "append_dedup" } })
      expect(Exit.isSuccess(midLine) && midLine.value.status).toBe("failed")
      expect(Exit.isSuccess(midLine) && midLine.value.error).toMatch(
        /the input ended in the middle of message \d+ .*contacts had not reported its end/,
      )
      // The same input whole (COMPLETE at its end) succeeds; so does one with no statuses at all.
      const whole = await load(lines([...contactMessages(25, 10), status("contacts", "COMPLETE")]), {
        syncModes: { contacts: "append_dedup" },
      })
      expect(Exit.isSuccess(whole) && whole.value.status).toBe("succeeded")
      const bare = await load(lines(contactMessages(5, 10)), { syncModes: { contacts: "append_dedup" } })
      expect(Exit.isSuccess(bare) && bare.value.status).toBe("succeeded")
    })

    it("an input that ends early empties nothing, and the run fails", { timeout: 60_000 }, async () => {
      const full = await load(lines(contactMessages(30, 10)))
      expect(Exit.isSuccess(full) && full.value.status).toBe("succeeded")
      expect(await contacts()).toBe(30)
      // Empty; records after the last STATE; statuses without COMPLETE; a source error.
      const early = [
        "",
        lines(contactMessages(25, 10, 100).slice(0, -1)),
        lines([status("contacts", "STARTED"), ...contactMessages(20, 10, 200)]),
        lines([...contactMessages(10, 10, 300), Message.traceError("system_error", "the source died", 1)]),
      ]
      for (const input of early) {
        const exit = await load(input)
        expect(Exit.isSuccess(exit) && exit.value.status).toBe("failed")
        expect(Exit.isSuccess(exit) && exit.value.summary.overwritesIncomplete).toEqual(["contacts"])
      }
      // Nothing was emptied: the 30 and every record committed with a state since.
      expect(await contacts()).toBe(30 + 20 + 20 + 10)
      // A stream that reported COMPLETE finishes the overwrite: the rows from before it began (the
      // first 30) go; those the unfinished attempts committed since are part of it and stay.
      const complete = await load(
        lines([status("contacts", "STARTED"), ...contactMessages(5, 5, 400), status("contacts", "COMPLETE")]),
      )
      expect(Exit.isSuccess(complete) && complete.value.status).toBe("succeeded")
      expect(await contacts()).toBe(5 + 20 + 20 + 10)
      expect((await runs()).map((r) => r.status)).toEqual([
        "succeeded",
        "failed",
        "failed",
        "failed",
        "failed",
        "succeeded",
      ])
    })

    it("a bad line fails the load after committing everything up to the last STATE before it", async () => {
      const exit = await load(
        `${lines(contactMessages(23, 10))}not json\n${lines(contactMessages(5, 5, 50))}`,
      )
      expect(Exit.isFailure(exit)).toBe(true)
      expect(String(Exit.isFailure(exit) && exit.cause)).toContain("not JSON")
      expect(await contacts()).toBe(23)
      const [run] = await runs()
      expect(run?.status).toBe("failed")
      expect(JSON.parse(String(run?.streams))).toEqual({ contacts: { records: 23 } })
    })

    it("a STATE of a stream the registry does not know is refused", async () => {
      const exit = await load(lines([...contactMessages(3, 3), state("no_such_stream", { a: 1 })]))
      expect(String(Exit.isFailure(exit) && exit.cause)).toContain(
        'a state of unknown stream "no_such_stream"',
      )
      expect(await contacts()).toBe(3)
    })

    it("a stop keeps what committed and records the run interrupted; a run left running is abandoned", async () => {
      await env.run(Ddl.ensure(env.schema))
      const abandoned = await env.run(Runs.start(env.schema))
      const stop = await Effect.runPromise(Deferred.make<StopSignal.Signal>())
      async function* input() {
        yield lines(contactMessages(20, 10))
        yield lines(contactMessages(5, 10, 100))
        await Effect.runPromise(Deferred.succeed(stop, "SIGTERM"))
        await new Promise((resolve) => setTimeout(resolve, 200))
        yield lines(contactMessages(20, 10, 200))
      }
      const exit = await load(Readable.from(input()), { stop })
      expect(Exit.isSuccess(exit) && exit.value.status).toBe("interrupted")
      expect(Exit.isSuccess(exit) && exit.value.signal).toBe("SIGTERM")
      // Cut short: the overwrite is not finished, whatever states came.
      expect(Exit.isSuccess(exit) && exit.value.summary.overwritesIncomplete).toEqual(["contacts"])
      expect(await contacts()).toBe(20)
      const rows = await runs()
      expect(Exit.isSuccess(exit) && exit.value.abandoned).toEqual([abandoned])
      expect(rows[0]?.status).toBe("abandoned")
      expect(rows.at(-1)?.status).toBe("interrupted")
      expect(JSON.parse(String(rows.at(-1)?.streams))).toEqual({ contacts: { records: 20 } })
    })

    it.runIf(backend.name === "postgres")(
      "one run per schema: a second fails naming the holder, or waits",
      { timeout: 30_000 },
      async () => {
        const other = ManagedRuntime.make(PgDatabase.layer(env.url ?? ""))
        const release = await Effect.runPromise(Deferred.make<void>())
        const held = await Effect.runPromise(Deferred.make<void>())
        const holder = other.runPromise(
          Effect.scoped(
            RunLock.schema(env.schema, { owner: "the holder" }).pipe(
              Effect.zipRight(Deferred.succeed(held, undefined)),
              Effect.zipRight(Deferred.await(release)),
            ),
          ),
        )
        await Effect.runPromise(Deferred.await(held))
        const refused = await load(lines(contactMessages(3, 3)))
        expect(String(Exit.isFailure(refused) && refused.cause)).toMatch(
          /is in use by another run \(Postgres backend pid \d+, application "the holder pid \d+"/,
        )
        setTimeout(() => Effect.runFork(Deferred.succeed(release, undefined)), 300)
        const waited = await load(lines(contactMessages(3, 3)), {
          lock: { owner: "waiter", wait: { wait: true, interval: 50, timeout: 10_000 } },
        })
        expect(Exit.isSuccess(waited) && waited.value.status).toBe("succeeded")
        await holder
        await other.dispose()
      },
    )

    it.runIf(backend.name === "postgres")(
      "a dropped connection reports its cause, not the failed bookkeeping after it",
      { timeout: 30_000 },
      async () => {
        const owner = `dropped ${Math.random().toString(36).slice(2)}`
        async function* input() {
          yield lines(contactMessages(10, 10))
          await new Promise((resolve) => setTimeout(resolve, 300))
          const admin = new pg.Client({ connectionString: env.url })
          await admin.connect()
          await admin.query(
            "SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE application_name = $1 || ' pid ' || $2::text",
            [owner, String(process.pid)],
          )
          await admin.end()
          yield lines(contactMessages(10, 10, 100))
        }
        const exit = await load(Readable.from(input()), { lock: { owner }, syncModes: {} })
        expect(Exit.isFailure(exit)).toBe(true)
        const error = Exit.isFailure(exit)
          ? Option.getOrUndefined(Cause.failureOption(exit.cause))
          : undefined
        expect(error?._tag).toBe("DatabaseError")
        expect(error?._tag === "DatabaseError" && error.operation).not.toContain("_sync_runs")
        expect(error?.message).toMatch(/terminat|connection to the database was lost/i)
        await env.suspend()
        await env.resume()
        expect(await contacts()).toBe(10)
      },
    )
  },
)
