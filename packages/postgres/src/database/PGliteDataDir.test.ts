/**
 * New PGlite databases are copies of the build's prepared data directory (no initdb at run time),
 * existing directories are opened as they are, and a creation cut short is started again.
 * A database's system identifier tells them apart: every copy has the prepared one, an initdb
 * makes a new one.
 */
import { existsSync, mkdirSync, mkdtempSync, readFileSync, writeFileSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import * as Effect from "effect/Effect"
import { describe, expect, it } from "vitest"
import { removedAfterAll } from "../../../command-line/src/testing/Directories.ts"
import { Database } from "./Database.ts"
import * as PGliteDatabase from "./PGliteDatabase.ts"
import * as PGliteDataDir from "./PGliteDataDir.ts"

// The directories these tests make, removed when the file's tests end.
const made = removedAfterAll()

const newDirectory = () => made(mkdtempSync(join(tmpdir(), "salesintel-pglite-datadir-")))

const systemIdentifier = Effect.flatMap(Database, (db) =>
  db.query("SELECT system_identifier::text AS id FROM pg_control_system()"),
).pipe(Effect.map(([row]) => String(row?.id)))

const run = <A, E>(
  effect: Effect.Effect<A, E, Database>,
  directory: string | undefined,
  options?: PGliteDatabase.LayerOptions,
) => Effect.runPromise(effect.pipe(Effect.provide(PGliteDatabase.layer(directory, options))))

describe("PGliteDataDir (a new database without initdb)", () => {
  const prepared = PGliteDataDir.prepared()

  it("the build made the prepared data directory for the installed PGlite", () => {
    expect(prepared).toBeDefined()
    expect(prepared?.pglite).toBe(PGliteDataDir.installedPGliteVersion())
    expect(readFileSync(join(prepared?.directory ?? "", "PG_VERSION"), "utf8").trim()).toMatch(/^\d+$/)
  })

  it("refuses a prepared directory of another PGlite version, or none", () => {
    const dist = join(prepared?.directory ?? "", "..")
    expect(PGliteDataDir.prepared(dist, "0.0.0-other")).toBeUndefined()
    expect(PGliteDataDir.prepared(newDirectory())).toBeUndefined()
  })

  it("creates a new directory's database as a copy of the prepared one, and it works", async () => {
    const directory = join(newDirectory(), "nested", "pglite")
    const rows = await run(
      Effect.gen(function* () {
        const db = yield* Database
        yield* db.exec("CREATE TABLE t (id int PRIMARY KEY)")
        yield* db.query("INSERT INTO t VALUES ($1)", [7])
        return { id: yield* systemIdentifier, rows: yield* db.query("SELECT id FROM t") }
      }),
      directory,
    )
    expect(rows).toEqual({ id: prepared?.systemIdentifier, rows: [{ id: 7 }] })
    expect(existsSync(join(directory, PGliteDataDir.initializingMarker))).toBe(false)
    // Reopened: the same database, its data kept.
    expect(
      await run(
        Effect.flatMap(Database, (db) => db.query("SELECT id FROM t")),
        directory,
      ),
    ).toEqual([{ id: 7 }])
  })

  it("loads an in-memory database from the prepared database's tar", async () => {
    const id = await Effect.runPromise(systemIdentifier.pipe(Effect.provide(PGliteDatabase.layer())))
    expect(id).toBe(prepared?.systemIdentifier)
  })

  it("opens an existing directory as it is (one made by initdb keeps its data and identity)", async () => {
    const directory = newDirectory()
    // Without a prepared directory PGlite runs initdb, as every version before this one did.
    const made = await run(
      Effect.gen(function* () {
        const db = yield* Database
        yield* db.exec("CREATE TABLE kept (note text); INSERT INTO kept VALUES ('from before')")
        return yield* systemIdentifier
      }),
      directory,
      { prepared: undefined },
    )
    expect(made).not.toBe(prepared?.systemIdentifier)
    const reopened = await run(
      Effect.gen(function* () {
        const db = yield* Database
        return { id: yield* systemIdentifier, rows: yield* db.query("SELECT note FROM kept") }
      }),
      directory,
    )
    expect(reopened).toEqual({ id: made, rows: [{ note: "from before" }] })
  }, 120_000)

  it("starts a creation cut short again, removing only Postgres's own files", async () => {
    const directory = newDirectory()
    // What a run killed while copying leaves: the marker, some of the files, maybe PG_VERSION.
    PGliteDataDir.markCreating(directory)
    writeFileSync(join(directory, "PG_VERSION"), "18\n")
    mkdirSync(join(directory, "base", "1"), { recursive: true })
    writeFileSync(join(directory, "base", "1", "half-copied"), "x")
    writeFileSync(join(directory, "notes.txt"), "the user's")
    const id = await run(systemIdentifier, directory)
    expect(id).toBe(prepared?.systemIdentifier)
    expect(existsSync(join(directory, "base", "1", "half-copied"))).toBe(false)
    expect(readFileSync(join(directory, "notes.txt"), "utf8")).toBe("the user's")
    expect(existsSync(join(directory, PGliteDataDir.initializingMarker))).toBe(false)
  })
})
