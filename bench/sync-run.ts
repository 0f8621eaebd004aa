/**
 * One `salesintel sync` as a user runs it (the command's file with the node flags of its
 * shebang), under `/usr/bin/time -v`, into a fresh schema of the local Postgres or a fresh PGlite
 * directory: wall time, peak RSS, contacts, and what the target then holds on disk. Shared by
 * sync-memory and pglite-scale.
 */
import { spawnSync } from "node:child_process"
import { mkdtempSync, readdirSync, rmSync, statSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import pg from "pg"
import { commandLine } from "./command.ts"
import { post } from "./sandbox.ts"

export const url = process.env.DATABASE_URL || "postgres://postgres@127.0.0.1:5432/test"
export const time = "/usr/bin/time"

const withClient = async <A>(run: (client: pg.Client) => Promise<A>): Promise<A> => {
  const client = new pg.Client({ connectionString: url })
  await client.connect()
  try {
    return await run(client)
  } finally {
    await client.end()
  }
}

const dropSchema = (schema: string) =>
  withClient((client) => client.query(`DROP SCHEMA IF EXISTS ${schema} CASCADE`))

/** The bytes of every table of `schema` with its indexes and TOAST (pg_total_relation_size). */
const schemaBytes = (schema: string): Promise<number> =>
  withClient(async (client) => {
    const result = await client.query<{ bytes: string | null }>(
      `SELECT sum(pg_total_relation_size(c.oid))::text AS bytes FROM pg_class c
       JOIN pg_namespace n ON n.oid = c.relnamespace WHERE n.nspname = $1 AND c.relkind IN ('r', 'm')`,
      [schema],
    )
    return Number(result.rows[0]?.bytes ?? 0)
  })

/** The bytes of the files under `path` (a bounded walk: a data directory's few levels). */
export const directoryBytes = (path: string, depth = 0): number => {
  if (depth > 8) throw new Error(`${path} is nested deeper than a data directory`)
  let bytes = 0
  for (const entry of readdirSync(path, { withFileTypes: true })) {
    const child = join(path, entry.name)
    bytes += entry.isDirectory() ? directoryBytes(child, depth + 1) : statSync(child).size
  }
  return bytes
}

export interface Run {
  readonly seconds: number
  readonly peakRssMb: number
  /** User and system CPU of the command (not of a Postgres server). */
  readonly cpuSeconds: number
  readonly contacts: number
  /** Postgres: the schema's tables (pg_total_relation_size). PGlite: the whole directory. */
  readonly diskMb: number
  /** PGlite only: the directory's pg_wal (0 for Postgres). */
  readonly walMb: number
}

const mb = (bytes: number) => bytes / 2 ** 20

/** What the target holds once the sync has ended. */
const measureDisk = async (target: string, schema: string, pgliteDb: string) =>
  target === "postgres"
    ? { diskMb: mb(await schemaBytes(schema)), walMb: 0 }
    : { diskMb: mb(directoryBytes(pgliteDb)), walMb: mb(directoryBytes(join(pgliteDb, "pg_wal"))) }

/** One sync into a fresh target (a dropped schema, or a new PGlite directory), sandbox reset first. */
export const syncOnce = async (
  bin: string,
  sandboxUrl: string,
  configPath: string,
  target: string,
  schema: string,
): Promise<Run> => {
  await post(`${sandboxUrl}/_sandbox/reset`)
  const pgliteDir = mkdtempSync(join(tmpdir(), "salesintel-bench-memory-pglite-"))
  const pgliteDb = join(pgliteDir, "db")
  try {
    if (target === "postgres") await dropSchema(schema)
    const command = [
      process.execPath,
      ...commandLine(bin).flags,
      bin,
      "sync",
      "--config",
      configPath,
      ...(target === "postgres" ? ["--database-url", url, "--schema", schema] : ["--pglite-dir", pgliteDb]),
    ]
    const started = performance.now()
    const result = spawnSync(time, ["-v", ...command], {
      encoding: "utf8",
      maxBuffer: 64 * 1024 * 1024,
      // DATABASE_URL would send the PGlite runs to the server.
      env: { ...process.env, ...commandLine(bin).env, DATABASE_URL: "" },
    })
    const seconds = (performance.now() - started) / 1000
    if (result.status !== 0)
      throw new Error(`sync failed (${result.status}):\n${result.stdout}\n${result.stderr.slice(-4000)}`)
    const rss = /Maximum resident set size \(kbytes\): (\d+)/.exec(result.stderr)
    const contacts = /contacts\s+(\d+) records/.exec(result.stdout)
    const cpu = (label: string) =>
      Number(new RegExp(`${label} time \\(seconds\\): ([\\d.]+)`).exec(result.stderr)?.[1])
    return {
      seconds,
      cpuSeconds: cpu("User") + cpu("System"),
      peakRssMb: rss?.[1] === undefined ? Number.NaN : Number(rss[1]) / 1024,
      contacts: Number(contacts?.[1] ?? 0),
      ...(await measureDisk(target, schema, pgliteDb)),
    }
  } finally {
    rmSync(pgliteDir, { recursive: true, force: true })
    if (target === "postgres") await dropSchema(schema)
  }
}

/** The config of one job_departments=sale search against the sandbox at `sandboxUrl`. */
export const salesSearchConfig = (sandboxUrl: string, requestsPerMinute: number) => ({
  api_key: "sandbox-full",
  base_url: sandboxUrl,
  credit_budget: 10_000_000,
  requests_per_minute: requestsPerMinute,
  contacts: { searches: [{ name: "sales", filters: { job_departments: ["sale"] } }] },
})
