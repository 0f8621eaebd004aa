import { PGliteDatabase } from "@salesintel/postgres"
import * as Option from "effect/Option"
import { describe, expect, it } from "vitest"
import * as TargetNote from "./TargetNote.ts"

const pgliteDir = PGliteDatabase.defaultDirectory

describe("TargetNote.unnamed", () => {
  it("names the embedded database a command falls back to", () => {
    expect(TargetNote.unnamed({ databaseUrl: Option.none(), pgliteDir, env: {} }, "writing to")).toBe(
      "no --database-url: writing to the embedded PGlite database at ./.salesintel/pglite",
    )
  })

  it("names the server of DATABASE_URL, without its password", () => {
    const env = { DATABASE_URL: "postgres://me:s3cret@db.example/warehouse" }
    const said = TargetNote.unnamed(
      { databaseUrl: Option.none(), pgliteDir, env },
      "reading the saved state of",
    )
    expect(said).toBe(
      "no --database-url: reading the saved state of Postgres at postgres://me:***@db.example/warehouse (from DATABASE_URL)",
    )
  })

  it("says nothing when the command line named the database", () => {
    const url = Option.some("postgres://me@db.example/warehouse")
    expect(TargetNote.unnamed({ databaseUrl: url, pgliteDir, env: {} }, "writing to")).toBeUndefined()
    expect(
      TargetNote.unnamed({ databaseUrl: Option.none(), pgliteDir: "./mine", env: {} }, "writing to"),
    ).toBeUndefined()
  })
})
