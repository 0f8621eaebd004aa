import { describe, expect, it } from "@effect/vitest"
import * as Effect from "effect/Effect"
import * as Option from "effect/Option"
import * as Ref from "effect/Ref"
import { PaymentRequired, Transport } from "./ApiError.ts"
import { RetrySettings } from "./Connection.ts"
import * as CreditBudget from "./CreditBudget.ts"
import * as CreditedRequest from "./CreditedRequest.ts"

const retry = RetrySettings.make({ max_attempts: 3, initial_delay_ms: 1, max_delay_ms: 1 })
const timeout = new Transport({ endpoint: "people.search", reason: "timeout", description: "no answer" })

/** A request answering `script[i]` on attempt i: a record count delivered, or an error. */
const scripted = (script: ReadonlyArray<number | Transport | PaymentRequired>) =>
  Effect.map(Ref.make(0), (attempts) => ({
    attempts: Ref.get(attempts),
    request: (_credits: number) =>
      Effect.flatMap(
        Ref.getAndUpdate(attempts, (n) => n + 1),
        (n) => {
          const answer = script[Math.min(n, script.length - 1)]!
          return typeof answer === "number" ? Effect.succeed(answer) : Effect.fail(answer)
        },
      ),
  }))

describe("CreditedRequest", () => {
  it.live("an unknown outcome is forfeited, and the retry takes a new reservation", () =>
    Effect.gen(function* () {
      const budget = yield* CreditBudget.make(100)
      const fake = yield* scripted([timeout, 30])
      const result = yield* CreditedRequest.send({
        budget,
        reserve: budget.reserve(40),
        request: fake.request,
        charged: (records) => records,
        retry,
      })
      expect(Option.map(result, (delivered) => delivered.value)).toEqual(Option.some(30))
      expect(yield* fake.attempts).toBe(2)
      const snapshot = yield* budget.snapshot
      // 40 possibly charged by the timed-out attempt, 30 delivered.
      expect([snapshot.spent, snapshot.uncertain, snapshot.reserved]).toEqual([70, 40, 0])
    }),
  )

  it.live("no retry when the budget cannot cover a new reservation", () =>
    Effect.gen(function* () {
      const budget = yield* CreditBudget.make(50)
      const fake = yield* scripted([timeout, 30])
      const result = yield* CreditedRequest.send({
        budget,
        reserve: budget.reserve(40),
        request: fake.request,
        charged: (records) => records,
        retry,
      })
      expect(Option.isNone(result)).toBe(true)
      expect(yield* fake.attempts).toBe(1)
      expect((yield* budget.snapshot).spent).toBe(40)
    }),
  )

  it.live("a definite refusal (402) is released, not retried", () =>
    Effect.gen(function* () {
      const budget = yield* CreditBudget.make(100)
      const fake = yield* scripted([new PaymentRequired({ endpoint: "people.search" })])
      const result = yield* Effect.either(
        CreditedRequest.send({
          budget,
          reserve: budget.reserve(40),
          request: fake.request,
          charged: (records) => records,
          retry,
        }),
      )
      expect(result._tag).toBe("Left")
      expect(yield* fake.attempts).toBe(1)
      const snapshot = yield* budget.snapshot
      expect([snapshot.spent, snapshot.reserved, snapshot.available]).toEqual([0, 0, 100])
    }),
  )
})
