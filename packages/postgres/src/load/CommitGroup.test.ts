/**
 * The loader's group commit on every backend: a STATE commits at once when the writer is free;
 * those that arrive while it is busy commit together when it frees up (one merge per stream), or
 * once they cover a share of what was received (`groupShare`) or `groupLimit` records; an input that ends or fails with STATEs waiting commits
 * them, and never the records after the last one.
 */
import type { Message } from "@salesintel/airbyte"
import * as Deferred from "effect/Deferred"
import * as Effect from "effect/Effect"
import * as Either from "effect/Either"
import * as Fiber from "effect/Fiber"
import * as Option from "effect/Option"
import * as Queue from "effect/Queue"
import * as Ref from "effect/Ref"
import * as Schedule from "effect/Schedule"
import * as Stream from "effect/Stream"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { qualified } from "../database/Sql.ts"
import * as Ddl from "../migrate/Ddl.ts"
import { type Backend, backends, open } from "../testing/Backends.ts"
import { contact, contactMessages, record } from "../testing/Records.ts"
import * as Loader from "./Loader.ts"
import * as SavedState from "./SavedState.ts"

const all = await backends()

/** Ten contacts and their STATE `{ upto }`, the `page`-th such page (from 0). */
const page = (index: number) => contactMessages(10, 10, index * 10)

/**
 * A load fed by hand. Its first commit waits for `release` when `holdFirst`, so the writer is busy
 * while the test feeds more; `consumed` counts the messages the loader has taken in.
 */
const handFed = (schema: string, options: Loader.LoadOptions & { readonly holdFirst: boolean }) =>
  Effect.gen(function* () {
    const queue = yield* Queue.unbounded<Message.Message | "end" | "fail">()
    const consumed = yield* Ref.make(0)
    const commits = yield* Ref.make<ReadonlyArray<unknown>>([])
    const firstCommit = yield* Deferred.make<void>()
    const release = yield* Deferred.make<void>()
    const messages = Stream.fromQueue(queue).pipe(
      Stream.takeWhile((item) => item !== "end"),
      Stream.mapEffect((item) =>
        item === "fail" ? Effect.fail("the source died" as const) : Effect.succeed(item),
      ),
      Stream.tap(() => Ref.update(consumed, (n) => n + 1)),
    )
    const fiber = yield* Effect.fork(
      Loader.load(messages, {
        ...options,
        schema,
        beforeCommit: ({ state }) =>
          Effect.gen(function* () {
            const count = (yield* Ref.updateAndGet(commits, (list) => [
              ...list,
              state.state.stream.stream_state,
            ])).length
            yield* Deferred.succeed(firstCommit, undefined)
            if (count === 1 && options.holdFirst) yield* Deferred.await(release)
          }),
      }),
    )
    const feed = (items: ReadonlyArray<Message.Message | "end" | "fail">) => Queue.offerAll(queue, items)
    /** Waits (bounded) until the loader has taken in `count` messages. */
    const takenIn = (count: number) =>
      Effect.repeat(Ref.get(consumed), {
        until: (n) => n >= count,
        schedule: Schedule.spaced("5 millis").pipe(Schedule.upTo("10 seconds")),
      })
    return { feed, takenIn, consumed: Ref.get(consumed), fiber, commits, firstCommit, release }
  })

describe.each(all.map((backend): [string, Backend] => [backend.name, backend]))(
  "the loader's group commit on %s",
  (_, backend) => {
    let env: Awaited<ReturnType<typeof open>>
    beforeAll(async () => {
      env = await open(backend, "commit group")
    })
    afterAll(async () => {
      await env?.close()
    })
    const reset = async () => {
      await env.run(Ddl.ensure(env.schema))
      await env.query(
        `TRUNCATE ${["contacts", "contact_phones", "_state"].map((t) => qualified(env.schema, t)).join(", ")}`,
      )
    }
    const contacts = async () =>
      Number((await env.query(`SELECT count(*)::int AS n FROM ${qualified(env.schema, "contacts")}`))[0]?.n)
    const savedState = () =>
      Effect.map(SavedState.read(env.schema), (states) => states.map((entry) => entry.stream.stream_state))

    it("commits each STATE as it lands while the writer keeps up", async () => {
      await reset()
      const summary = await env.run(
        Effect.gen(function* () {
          const load = yield* handFed(env.schema, { holdFirst: false })
          for (let index = 0; index < 5; index++) {
            yield* load.feed(page(index))
            // The next page only once this one committed: a writer that keeps up.
            yield* Effect.repeat(Ref.get(load.commits), {
              until: (list) => list.length > index,
              schedule: Schedule.spaced("5 millis").pipe(Schedule.upTo("10 seconds")),
            })
          }
          yield* load.feed(["end"])
          const summary = yield* Fiber.join(load.fiber)
          expect(yield* Ref.get(load.commits)).toEqual([1, 2, 3, 4, 5].map((n) => ({ upto: n * 10 })))
          return summary
        }),
      )
      expect(summary).toMatchObject({ statesCommitted: 5, batches: 5, uncommittedRecords: 0 })
      expect(await contacts()).toBe(50)
    })

    it("commits the STATEs that arrived while the writer was busy together, one merge for all they cover", async () => {
      await reset()
      const summary = await env.run(
        Effect.gen(function* () {
          const load = yield* handFed(env.schema, { holdFirst: true, groupShare: 1 })
          yield* load.feed(page(0))
          yield* Deferred.await(load.firstCommit)
          yield* load.feed([1, 2, 3, 4, 5].flatMap(page))
          yield* load.takenIn(66)
          yield* Deferred.succeed(load.release, undefined)
          // Committed when the writer freed up, not when the input ended.
          yield* Effect.repeat(Ref.get(load.commits), {
            until: (list) => list.length === 2,
            schedule: Schedule.spaced("5 millis").pipe(Schedule.upTo("10 seconds")),
          })
          expect(yield* savedState()).toEqual([{ upto: 60 }])
          yield* load.feed(["end"])
          const summary = yield* Fiber.join(load.fiber)
          expect(yield* Ref.get(load.commits)).toEqual([{ upto: 10 }, { upto: 60 }])
          return summary
        }),
      )
      expect(summary).toMatchObject({ statesCommitted: 6, batches: 2, uncommittedRecords: 0 })
      expect(summary.streams.contacts).toMatchObject({ records: 60, statesCommitted: 6 })
      expect(await contacts()).toBe(60)
    })

    it("in a small load (under 50 times a group) each STATE commits on its own, the input waiting for the writer", async () => {
      await reset()
      const commits = await env.run(
        Effect.gen(function* () {
          const load = yield* handFed(env.schema, { holdFirst: true })
          yield* load.feed(page(0))
          yield* Deferred.await(load.firstCommit)
          yield* load.feed([1, 2, 3, 4, 5].flatMap(page))
          // Held back: a commit of page 1 waits to be written, the plan of page 2 to be handed over.
          yield* Effect.sleep("200 millis")
          expect(yield* load.consumed).toBeLessThan(66)
          yield* Deferred.succeed(load.release, undefined)
          yield* load.feed(["end"])
          yield* Fiber.join(load.fiber)
          return yield* Ref.get(load.commits)
        }),
      )
      expect(commits).toEqual([1, 2, 3, 4, 5, 6].map((n) => ({ upto: n * 10 })))
    })

    it("commits without waiting for the writer once the STATEs waiting cover groupLimit records", async () => {
      await reset()
      const commits = await env.run(
        Effect.gen(function* () {
          const load = yield* handFed(env.schema, { holdFirst: true, groupShare: 1, groupLimit: 25 })
          yield* load.feed(page(0))
          yield* Deferred.await(load.firstCommit)
          yield* load.feed([1, 2, 3, 4, 5].flatMap(page))
          yield* load.takenIn(66)
          yield* Deferred.succeed(load.release, undefined)
          yield* load.feed(["end"])
          yield* Fiber.join(load.fiber)
          return yield* Ref.get(load.commits)
        }),
      )
      // 20 records wait after two pages, 30 after three: those three commit; then the last two.
      expect(commits).toEqual([{ upto: 10 }, { upto: 40 }, { upto: 60 }])
      expect(await contacts()).toBe(60)
    })

    it("an input that ends or fails with STATEs waiting commits them, and not the records after the last", async () => {
      for (const ending of ["end", "fail"] as const) {
        await reset()
        const outcome = await env.run(
          Effect.gen(function* () {
            const load = yield* handFed(env.schema, { holdFirst: true, groupShare: 1 })
            yield* load.feed(page(0))
            yield* Deferred.await(load.firstCommit)
            yield* load.feed([
              ...page(1),
              ...page(2),
              record("contacts", contact(500)),
              record("contacts", contact(501)),
            ])
            yield* load.takenIn(35)
            yield* load.feed([ending])
            yield* Deferred.succeed(load.release, undefined)
            return yield* Effect.either(Fiber.join(load.fiber))
          }),
        )
        if (ending === "end")
          expect(Option.getOrUndefined(Either.getRight(outcome))).toMatchObject({
            statesCommitted: 3,
            uncommittedRecords: 2,
          })
        else expect(Option.getOrUndefined(Either.getLeft(outcome))).toBe("the source died")
        expect(await contacts()).toBe(30)
        expect(await env.run(savedState())).toEqual([{ upto: 30 }])
      }
    })
  },
)
