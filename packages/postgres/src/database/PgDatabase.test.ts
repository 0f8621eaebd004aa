import { describe, expect, it } from "@effect/vitest"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import { Database } from "./Database.ts"
import { hasSqlState, layer } from "./PgDatabase.ts"

/** An error as Node's net module raises it for a write on a closed socket. */
const brokenPipe = () =>
  Object.assign(new Error("write EPIPE"), { code: "EPIPE", errno: -32, syscall: "write" })

describe("PgDatabase", () => {
  it("takes a server's error by its SQLSTATE, and never a socket's five-letter code for one", () => {
    expect(
      hasSqlState(Object.assign(new Error("terminating connection"), { code: "57P01", severity: "FATAL" })),
    ).toBe(true)
    expect(hasSqlState(brokenPipe())).toBe(false)
    expect(
      hasSqlState(Object.assign(new Error("read ECONNRESET"), { code: "ECONNRESET", syscall: "read" })),
    ).toBe(false)
    expect(hasSqlState(new Error("no code"))).toBe(false)
  })
})

const localUrl = process.env.DATABASE_URL || "postgres://postgres@127.0.0.1:5432/test"
const serverAnswers = await Effect.runPromise(
  Effect.scoped(Effect.as(Layer.build(layer(localUrl)), true)).pipe(Effect.orElseSucceed(() => false)),
)

describe.skipIf(!serverAnswers)("PgDatabase on the local server", () => {
  it("sends no call while another is running on its client, even one whose caller was interrupted", async () => {
    const warnings: Array<string> = []
    const onWarning = (warning: Error) => warnings.push(warning.message)
    process.on("warning", onWarning)
    try {
      const started = Date.now()
      const rows = await Effect.runPromise(
        Effect.scoped(
          Effect.gen(function* () {
            const db = yield* Effect.provide(Database, yield* Layer.build(layer(localUrl)))
            // A stop interrupts a caller while its statement runs: the statement goes on in the server,
            // and so does the next one's (a rollback, say), interrupted too.
            yield* Effect.timeout(db.exec("SELECT pg_sleep(0.2)"), 20).pipe(Effect.ignore)
            yield* Effect.timeout(db.exec("SELECT pg_sleep(0.1)"), 20).pipe(Effect.ignore)
            return yield* db.query("SELECT 1 AS one")
          }),
        ),
      )
      expect(rows).toEqual([{ one: 1 }])
      // The last waited for the two before it to end on the server.
      expect(Date.now() - started).toBeGreaterThanOrEqual(290)
      await new Promise((resolve) => setTimeout(resolve, 10))
      expect(warnings.filter((text) => text.includes("already executing a query"))).toEqual([])
    } finally {
      process.off("warning", onWarning)
    }
  })
})
