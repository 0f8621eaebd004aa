/**
 * PGliteDatabase runs PGlite in a worker thread: what crosses the thread boundary (parameters,
 * parsed rows, COPY data, Postgres errors with their detail) arrives whole, it stays one session,
 * and the thread ends with the layer's scope.
 */
import { mkdtempSync, readdirSync, statSync, writeFileSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import * as Effect from "effect/Effect"
import { describe, expect, it } from "vitest"
import { removedAfterAll } from "../../../command-line/src/testing/Directories.ts"
import { Database, DatabaseError } from "./Database.ts"
import * as PGliteDatabase from "./PGliteDatabase.ts"

// The directories these tests make, removed when the file's tests end.
const made = removedAfterAll()

/** Megabytes of the WAL segment files in a data directory's pg_wal. */
const walMb = (directory: string): number =>
  readdirSync(join(directory, "pg_wal"))
    .filter((name) => /^[0-9A-F]{24}$/.test(name))
    .reduce((bytes, name) => bytes + statSync(join(directory, "pg_wal", name)).size, 0) /
  2 ** 20

describe("PGliteDatabase (PGlite in a worker thread)", () => {
  it("carries parameters, rows, COPY data and Postgres errors (message and detail) across the thread", async () => {
    const program = Effect.gen(function* () {
      const db = yield* Database
      // A temp table: only visible if every call runs in the same session.
      yield* db.exec("CREATE TEMP TABLE t (id int PRIMARY KEY, doc jsonb, tags text[])")
      // A view into a larger buffer, as a batch passes it: it must survive the trip intact.
      const backing = Buffer.from(`1\t{"a": "é\\\\t"}\t{x,"y z"}\n2\t{}\t{}\nrest`, "utf8")
      const data = backing.subarray(0, backing.length - 4)
      yield* db.copyIn("t", ["id", "doc", "tags"], data)
      expect(data.toString("utf8")).toBe(`1\t{"a": "é\\\\t"}\t{x,"y z"}\n2\t{}\t{}\n`)
      const rows = yield* db.query("SELECT id, doc, tags FROM t WHERE id = ANY($1::int[]) ORDER BY id", [
        [1, 2],
      ])
      const duplicate = yield* Effect.flip(db.query("INSERT INTO t (id) VALUES ($1)", [1]))
      const badCopy = yield* Effect.flip(db.copyIn("t", ["id"], Buffer.from("x\n")))
      const [after] = yield* db.query("SELECT count(*)::int AS n FROM t")
      return { rows, duplicate, badCopy, after }
    })
    const { rows, duplicate, badCopy, after } = await Effect.runPromise(
      program.pipe(Effect.provide(PGliteDatabase.layer())),
    )
    expect(rows).toEqual([
      { id: 1, doc: { a: "é\t" }, tags: ["x", "y z"] },
      { id: 2, doc: {}, tags: [] },
    ])
    expect(duplicate).toBeInstanceOf(DatabaseError)
    expect(duplicate.operation).toBe("INSERT INTO t (id) VALUES ($1)")
    expect(duplicate.message).toContain('duplicate key value violates unique constraint "t_pkey"')
    expect(duplicate.message).toContain("(Key (id)=(1) already exists.)")
    expect(badCopy.operation).toBe("COPY into t")
    expect(badCopy.message).toContain('invalid input syntax for type integer: "x"')
    expect(after).toEqual({ n: 2 })
  })

  it("ends the worker thread when the scope closes, and when opening fails", async () => {
    const dir = made(mkdtempSync(join(tmpdir(), "salesintel-pglite-worker-")))
    await Effect.runPromise(
      Effect.flatMap(Database, (db) => db.query("SELECT 1")).pipe(Effect.provide(PGliteDatabase.layer(dir))),
    )
    expect(PGliteDatabase.runningWorkers()).toBe(0)
    // A data directory PGlite cannot start on: the open fails as a DatabaseError, no thread left.
    const broken = made(mkdtempSync(join(tmpdir(), "salesintel-pglite-broken-")))
    writeFileSync(join(broken, "PG_VERSION"), "not a version\n")
    const failure = await Effect.runPromise(
      Effect.flip(
        Effect.flatMap(Database, (db) => db.query("SELECT 1")).pipe(
          Effect.provide(PGliteDatabase.layer(broken)),
        ),
      ),
    )
    expect(failure).toBeInstanceOf(DatabaseError)
    expect(failure.operation).toBe(`open PGlite in ${broken}`)
    expect(PGliteDatabase.runningWorkers()).toBe(0)
  })

  it("checkpoints as WAL grows and keeps pg_wal small, and what was written survives a reopen", {
    timeout: 180_000,
  }, async () => {
    const dir = made(mkdtempSync(join(tmpdir(), "salesintel-pglite-wal-")))
    // ~165 MB of WAL in statements of ~17 MB: single-user Postgres never checkpoints by itself,
    // and after one it kept up to max_wal_size (1 GB) of old segments for reuse.
    const { walWhileOpen, written } = await Effect.runPromise(
      Effect.gen(function* () {
        const db = yield* Database
        yield* db.exec("CREATE TABLE t (id int PRIMARY KEY, pad text)")
        for (let round = 0; round < 10; round++)
          yield* db.exec(
            `INSERT INTO t SELECT g, repeat('x', 200) FROM generate_series(${round * 50_000 + 1}, ${(round + 1) * 50_000}) g`,
          )
        // One request more: the worker's check after the last insert has run before it is answered.
        const [row] = yield* db.query("SELECT count(*)::int AS n FROM t")
        return { walWhileOpen: walMb(dir), written: row }
      }).pipe(Effect.provide(PGliteDatabase.layer(dir))),
    )
    const walClosed = walMb(dir)
    const reopened = await Effect.runPromise(
      Effect.flatMap(Database, (db) =>
        db.query("SELECT count(*)::int AS n, min(id) AS lo, max(id) AS hi FROM t"),
      ).pipe(Effect.provide(PGliteDatabase.layer(dir))),
    )
    expect(written).toEqual({ n: 500_000 })
    // A checkpoint once 64 MB of WAL is written (checked after each request, so up to one
    // statement's 17 MB more), two 16 MB segments kept after each: at most 8 segments.
    expect(walWhileOpen).toBeLessThanOrEqual(128)
    expect(walClosed).toBeLessThanOrEqual(48)
    expect(reopened).toEqual([{ n: 500_000, lo: 1, hi: 500_000 }])
  })

  it("refuses a request when the directory's disk has less room than it needs, naming the directory", async () => {
    const dir = made(mkdtempSync(join(tmpdir(), "salesintel-pglite-disk-")))
    // A reserve no disk has: what a full disk looks like to the guard.
    const reserve = { copy: Number.MAX_SAFE_INTEGER, other: 1 }
    const { copied, selected } = await Effect.runPromise(
      Effect.gen(function* () {
        const db = yield* Database
        yield* db.exec("CREATE TABLE t (id int)")
        const copied = yield* Effect.flip(db.copyIn("t", ["id"], Buffer.from("1\n")))
        const selected = yield* db.query("SELECT count(*)::int AS n FROM t")
        return { copied, selected }
      }).pipe(Effect.provide(PGliteDatabase.layer(dir, { reserve }))),
    )
    expect(copied.message).toContain(`the disk holding the PGlite directory ${dir} is full`)
    expect(copied.message).toMatch(/MB free, \d+ MB needed to write safely/)
    expect(selected).toEqual([{ n: 0 }])
    expect(PGliteDatabase.runningWorkers()).toBe(0)
  })
})
