import { describe, expect, it } from "@effect/vitest"
import * as Effect from "effect/Effect"
import * as Fiber from "effect/Fiber"
import * as Random from "effect/Random"
import * as TestClock from "effect/TestClock"
import { Client, Retry } from "./index.ts"
import { type Answer, clientLayer, config, envelope, json } from "./testing/FakeHttp.ts"

const ok = () => json(envelope([{ match_id: "m-1" }]))

/**
 * Runs one search against a fake answering `script[i]` on call i (the last entry repeats),
 * advancing the TestClock until it finishes. Jitter draws 0.5 each time, so waits are exact.
 */
const run = (
  script: ReadonlyArray<() => Answer>,
  retry: Record<string, number> = {},
  endpoint: "searchPeople" | "previewPeople" = "previewPeople",
) =>
  Effect.gen(function* () {
    const fake = clientLayer((_, index) => script[Math.min(index, script.length - 1)]!(), {
      retry: { initial_delay_ms: 1000, max_delay_ms: 8000, ...retry },
    })
    const fiber = yield* Effect.fork(
      Effect.gen(function* () {
        const client = yield* Client.SalesIntelClient
        return yield* client[endpoint]({}, { page: 1, pageSize: 50 })
      }).pipe(Effect.provide(fake.layer), Effect.withRandom(Random.fixed([0.5])), Effect.either),
    )
    yield* TestClock.adjust("1 hour")
    const result = yield* Fiber.join(fiber)
    const waits = fake.calls.slice(1).map((call, index) => call.atMillis - fake.calls[index]!.atMillis)
    return { result, attempts: fake.calls.length, waits }
  })

describe("Retry", () => {
  it.effect("retries 5xx with exponential backoff and full jitter, capped", () =>
    Effect.gen(function* () {
      const { result, attempts, waits } = yield* run([() => json({}, 500)], { max_attempts: 6 })
      expect(result._tag === "Left" && result.left._tag).toBe("ServerError")
      expect(attempts).toBe(6)
      // caps 1000, 2000, 4000, 8000, 8000 (max_delay_ms); jitter 0.5 of each
      expect(waits).toEqual([500, 1000, 2000, 4000, 4000])
    }),
  )

  it.effect("succeeds once the fault passes", () =>
    Effect.gen(function* () {
      const { result, attempts } = yield* run([() => json({}, 503), () => "network", ok])
      expect(result._tag).toBe("Right")
      expect(attempts).toBe(3)
    }),
  )

  it.effect("honours Retry-After over the backoff", () =>
    Effect.gen(function* () {
      const { result, waits } = yield* run([() => json({}, 429, { "retry-after": "12" }), ok])
      expect(result._tag).toBe("Right")
      expect(waits).toEqual([12_000])
    }),
  )

  it.effect("does not wait out a Retry-After longer than max_retry_after_ms", () =>
    Effect.gen(function* () {
      const { result, attempts } = yield* run([() => json({}, 429, { "retry-after": "3600" })], {
        max_retry_after_ms: 60_000,
      })
      expect(result._tag === "Left" && result.left._tag).toBe("RateLimited")
      expect(attempts).toBe(1)
    }),
  )

  it.effect("a 429 does not use up an attempt: retried while its waits stay within max_retry_after_ms", () =>
    Effect.gen(function* () {
      // Ten 429s without Retry-After, then the answer: past max_attempts 3, the run goes on.
      const script = [...Array.from({ length: 10 }, () => () => json({}, 429)), ok]
      const { result, attempts } = yield* run(script, { max_attempts: 3, max_delay_ms: 2_000 })
      expect(result._tag).toBe("Right")
      expect(attempts).toBe(11)
      // And for a credited request, which the provider did not charge for a 429.
      const credited = yield* run(script, { max_attempts: 3, max_delay_ms: 2_000 }, "searchPeople")
      expect(credited.result._tag).toBe("Right")
    }),
  )

  it.effect("429s stop being retried once their waits together pass max_retry_after_ms", () =>
    Effect.gen(function* () {
      const { result, attempts, waits } = yield* run([() => json({}, 429, { "retry-after": "10" })], {
        max_retry_after_ms: 60_000,
      })
      expect(result._tag === "Left" && result.left._tag).toBe("RateLimited")
      // 10 s each: six waits make 60 s, a seventh would pass it.
      expect(attempts).toBe(7)
      expect(waits).toEqual(Array.from({ length: 6 }, () => 10_000))
    }),
  )

  it.effect("5xx faults still count against max_attempts between 429s", () =>
    Effect.gen(function* () {
      const { result, attempts } = yield* run(
        [
          () => json({}, 500),
          () => json({}, 429),
          () => json({}, 500),
          () => json({}, 429),
          () => json({}, 500),
        ],
        { max_attempts: 3 },
      )
      expect(result._tag === "Left" && result.left._tag).toBe("ServerError")
      expect(attempts).toBe(5)
    }),
  )

  for (const status of [400, 401, 402, 403]) {
    it.effect(`never retries ${status}`, () =>
      Effect.gen(function* () {
        const { attempts } = yield* run([() => json({}, status)])
        expect(attempts).toBe(1)
      }),
    )
  }

  it.effect("never retries a body that does not match the schema", () =>
    Effect.gen(function* () {
      const { result, attempts } = yield* run([() => json({ search_results: "nope" })])
      expect(result._tag === "Left" && result.left._tag).toBe("Decode")
      expect(attempts).toBe(1)
    }),
  )

  it.effect("retries a truncated body and a timeout", () =>
    Effect.gen(function* () {
      const truncated = yield* run([() => new Response('{"search_res'), ok])
      expect(truncated.result._tag).toBe("Right")
      expect(truncated.attempts).toBe(2)
      const timedOut = yield* run([() => "hang", ok])
      expect(timedOut.result._tag).toBe("Right")
      expect(timedOut.attempts).toBe(2)
      // the default 30 s timeout, then a 500 ms wait (0.5 of the first 1000 ms step)
      expect(timedOut.waits).toEqual([30_500])
    }),
  )

  it.effect("a credited request retries 5xx but never a transport fault (it may have been charged)", () =>
    Effect.gen(function* () {
      const served = yield* run([() => json({}, 503), ok], {}, "searchPeople")
      expect(served.result._tag).toBe("Right")
      expect(served.attempts).toBe(2)
      const timedOut = yield* run([() => "hang", ok], {}, "searchPeople")
      expect(timedOut.result._tag === "Left" && timedOut.result.left._tag).toBe("Transport")
      expect(timedOut.attempts).toBe(1)
      const truncated = yield* run([() => new Response('{"search_res'), ok], {}, "searchPeople")
      expect(truncated.attempts).toBe(1)
    }),
  )

  it("computes the backoff cap per retry", () => {
    const settings = config({ retry: { initial_delay_ms: 200, max_delay_ms: 1000 } }).retry
    expect([0, 1, 2, 3, 4].map((n) => Retry.backoffCapMillis(settings, n))).toEqual([
      200, 400, 800, 1000, 1000,
    ])
  })

  it.effect("the default policy makes 6 attempts", () =>
    Effect.gen(function* () {
      const { attempts } = yield* run([() => json({}, 500)], {})
      expect(attempts).toBe(6)
    }),
  )
})
