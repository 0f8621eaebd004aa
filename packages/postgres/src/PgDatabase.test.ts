import { describe, expect, it } from "@effect/vitest"
import { hasSqlState } from "./PgDatabase.ts"

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
