import { describe, expect, it } from "vitest"
import * as Target from "./Target.ts"

describe("Target.resolve", () => {
  it("uses --database-url first, then DATABASE_URL, and never prints a password", () => {
    const explicit = Target.resolve({
      databaseUrl: "postgres://me:s3cret@db.example:5432/warehouse",
      pgliteDir: "./x",
      env: { DATABASE_URL: "postgres://other@h/db" },
    })
    expect(explicit.description).toBe("Postgres at postgres://me:***@db.example:5432/warehouse")
    expect(explicit.description).not.toContain("s3cret")
    const fromEnv = Target.resolve({
      databaseUrl: undefined,
      pgliteDir: "./x",
      env: { DATABASE_URL: "postgres://u@h/db" },
    })
    expect(fromEnv.description).toBe("Postgres at postgres://u@h/db")
  })

  it("falls back to embedded PGlite in the given directory", () => {
    expect(
      Target.resolve({ databaseUrl: undefined, pgliteDir: "./.salesintel/pglite", env: {} }).description,
    ).toBe("embedded PGlite in ./.salesintel/pglite")
    expect(Target.resolve({ databaseUrl: "", pgliteDir: "./d", env: {} }).description).toBe(
      "embedded PGlite in ./d",
    )
  })
})
