import { existsSync, mkdirSync, mkdtempSync, readdirSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import * as Effect from "effect/Effect"
import * as Exit from "effect/Exit"
import * as Layer from "effect/Layer"
import { describe, expect, it } from "vitest"
import { removedAfterAll } from "../../command-line/src/testing/Directories.ts"
import * as Target from "./Target.ts"

// The directories these tests make, removed when the file's tests end.
const made = removedAfterAll()

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

describe("Target checks", () => {
  it("accepts postgres URLs only, saying what is expected", () => {
    expect(Target.checkDatabaseUrl("postgres://u:p@h:5432/db")).toBeUndefined()
    expect(Target.checkDatabaseUrl("postgresql://h/db")).toBeUndefined()
    expect(Target.checkDatabaseUrl("not a url")).toMatch(/^expected a URL like postgres:\/\//)
    expect(Target.checkDatabaseUrl("http://h/db")).toBe(
      "expected a postgres:// or postgresql:// URL, not http://",
    )
  })

  it("accepts any schema name Postgres can hold", () => {
    expect(Target.checkSchema('My "odd" Schema')).toBeUndefined()
    expect(Target.checkSchema("")).toBe("expected a schema name, not an empty one")
    expect(Target.checkSchema("x".repeat(64))).toMatch(/at most 63 bytes/)
    expect(Target.checkSchema("a\u0000b")).toMatch(/control characters/)
  })

  it("opens an existing database only, creating nothing otherwise", async () => {
    const dir = made(mkdtempSync(join(tmpdir(), "salesintel-target-existing-")))
    mkdirSync(join(dir, "empty"))
    for (const [path, says] of [
      [join(dir, "missing"), /the directory does not exist; nothing was created/],
      [join(dir, "empty"), /holds no PGlite database; nothing was created/],
    ] as const) {
      const target = Target.resolve({
        databaseUrl: undefined,
        pgliteDir: path,
        env: {},
        lock: { owner: "t", existing: true },
      })
      const exit = await Effect.runPromiseExit(Effect.scoped(Layer.build(target.layer)))
      expect(Exit.isFailure(exit)).toBe(true)
      if (Exit.isFailure(exit)) expect(String(exit.cause)).toMatch(says)
    }
    expect(existsSync(join(dir, "missing"))).toBe(false)
    expect(readdirSync(join(dir, "empty"))).toEqual([])
  })

  it("refuses a DATABASE_URL that cannot be one before connecting, without its password", async () => {
    const target = Target.resolve({
      databaseUrl: undefined,
      pgliteDir: "./x",
      env: { DATABASE_URL: "mysql://me:s3cret@h/db" },
    })
    const exit = await Effect.runPromiseExit(Effect.scoped(Layer.build(target.layer)))
    expect(Exit.isFailure(exit)).toBe(true)
    if (Exit.isFailure(exit)) {
      expect(String(exit.cause)).toContain("DATABASE_URL mysql://me:***@h/db: expected a postgres://")
      expect(String(exit.cause)).not.toContain("s3cret")
    }
  })
})
