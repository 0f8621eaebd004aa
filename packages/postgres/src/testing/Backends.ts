/**
 * The databases the loader suite runs on: embedded PGlite always; a real Postgres from
 * DATABASE_URL, else the local server on 127.0.0.1:5432 when it answers; and one in a container
 * when a Docker engine answers (detected in milliseconds when there is none). Under CI=true a
 * real Postgres is required.
 */
import { mkdtempSync, rmSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import * as Effect from "effect/Effect"
import type * as Layer from "effect/Layer"
import * as ManagedRuntime from "effect/ManagedRuntime"
import pg from "pg"
import { Database, type DatabaseError } from "../database/Database.ts"
import * as PGliteDatabase from "../database/PGliteDatabase.ts"
import * as PgDatabase from "../database/PgDatabase.ts"
import { ident } from "../database/Sql.ts"
import { runTag } from "./RunTag.ts"

export interface Started {
  /** A connection string for child processes (undefined for PGlite: use `pgliteDir`). */
  readonly url?: string
  readonly pgliteDir?: string
  readonly layer: Layer.Layer<Database, DatabaseError>
  readonly stop: () => Promise<void>
}

export interface Backend {
  readonly name: string
  readonly start: () => Promise<Started>
}

const localUrl = "postgres://postgres@127.0.0.1:5432/test"

const answers = async (url: string): Promise<boolean> => {
  const client = new pg.Client({ connectionString: url, connectionTimeoutMillis: 2_000 })
  client.on("error", () => {})
  try {
    await client.connect()
    await client.end()
    return true
  } catch {
    return false
  }
}

const hasDocker = async (): Promise<boolean> => {
  const { getContainerRuntimeClient } = await import("testcontainers")
  return getContainerRuntimeClient().then(
    () => true,
    () => false,
  )
}

const pglite: Backend = {
  name: "pglite",
  start: async () => {
    // Tagged with the run (RunTag.ts) and removed when done: the run answers for its leftovers.
    const dir = mkdtempSync(join(tmpdir(), `salesintel-pglite-${runTag()}-`))
    return {
      pgliteDir: dir,
      layer: PGliteDatabase.layer(dir),
      stop: async () => rmSync(dir, { recursive: true, force: true }),
    }
  },
}

const server = (name: string, url: string): Backend => ({
  name,
  start: async () => ({ url, layer: PgDatabase.layer(url), stop: async () => {} }),
})

const container: Backend = {
  name: "postgres (testcontainers)",
  start: async () => {
    const { PostgreSqlContainer } = await import("@testcontainers/postgresql")
    const started = await new PostgreSqlContainer("postgres:15-alpine").start()
    const url = started.getConnectionUri()
    return {
      url,
      layer: PgDatabase.layer(url),
      stop: async () => {
        await started.stop()
      },
    }
  },
}

/** The backends to run the suite on (resolved once per test file). */
export const backends = async (): Promise<ReadonlyArray<Backend>> => {
  const url = process.env.DATABASE_URL || localUrl
  const real = (await answers(url)) ? [server("postgres", url)] : []
  if (real.length === 0 && process.env.CI === "true")
    throw new Error(`CI=true needs a real Postgres, but ${url} does not answer (set DATABASE_URL)`)
  if (real.length === 0) console.warn(`no Postgres at ${url}: the loader suite runs on PGlite only`)
  const docker = (await hasDocker()) ? [container] : []
  return [pglite, ...real, ...docker]
}

/** A runtime on the backend with a fresh schema, dropped by `close`. */
export const open = async (backend: Backend, schemaPrefix: string) => {
  const started = await backend.start()
  let runtime = ManagedRuntime.make(started.layer)
  let suspended = false
  // The run's tag in its name: the leftovers check (integration-tests/catalogue.ts) minds only these.
  const schema = `${schemaPrefix} ${runTag()} ${Math.random().toString(36).slice(2, 8)}`
  const run = <A, E>(effect: Effect.Effect<A, E, Database>): Promise<A> => runtime.runPromise(effect)
  const query = (sql: string, params: ReadonlyArray<unknown> = []) =>
    run(Effect.flatMap(Database, (db) => db.query(sql, params)))
  return {
    ...started,
    schema,
    run,
    query,
    /** Closes the connection (PGlite's files are one process's at a time) until `resume`. */
    suspend: async () => {
      suspended = true
      await runtime.dispose()
    },
    resume: async () => {
      runtime = ManagedRuntime.make(started.layer)
      suspended = false
    },
    /** Drops the schema (on a connection of its own when suspended) and closes; a failed drop fails. */
    close: async () => {
      if (suspended) runtime = ManagedRuntime.make(started.layer)
      try {
        await run(Effect.flatMap(Database, (db) => db.exec(`DROP SCHEMA IF EXISTS ${ident(schema)} CASCADE`)))
      } finally {
        await runtime.dispose()
        await started.stop()
      }
    },
  }
}

/**
 * The one backend for a case that does not test the loader's SQL (what the source buys, plans or
 * prints, whatever holds it): the real Postgres when one answers (a case takes about half its time
 * on PGlite), else PGlite. A case that tests the SQL runs on every backend (`backends`).
 */
export const oneBackend = async (): Promise<Backend> => {
  const all = await backends()
  return all.find((backend) => backend.name === "postgres") ?? all[0] ?? pglite
}
