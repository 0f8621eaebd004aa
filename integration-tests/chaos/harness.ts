/**
 * The chaos suite's tools: the real commands run as child processes (as a user or a scheduler runs
 * them) against the sandbox, the run's target opened afterwards to compare its tables with a
 * reference sync of the same config, and the sandbox's own count of what it charged. Every case
 * prints one line of figures (credits charged against the reference, re-bought, exit code).
 */
import { type ChildProcess, spawn } from "node:child_process"
import { mkdtempSync, rmSync, writeFileSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import type { Readable } from "node:stream"
import { fileURLToPath } from "node:url"
import { Database, PGliteDatabase, Sql } from "@salesintel/postgres"
import { type Sandbox, startSandbox } from "@salesintel/sandbox"
import * as Effect from "effect/Effect"
import pg from "pg"
import { afterAll, beforeAll, expect } from "vitest"
import { runTag } from "../../packages/postgres/src/testing/RunTag.ts"

const root = fileURLToPath(new URL("../../", import.meta.url))
export const bins = {
  salesintel: join(root, "packages/cli/bin/salesintel.js"),
  source: join(root, "packages/source/bin/source-salesintel.js"),
  loader: join(root, "packages/postgres/bin/salesintel-pg.js"),
}

export const databaseUrl = process.env.DATABASE_URL || "postgres://postgres@127.0.0.1:5432/test"

/** Where a run writes: a schema of the local Postgres, or a PGlite directory. */
export type Target =
  | { readonly kind: "postgres"; readonly schema: string }
  | { readonly kind: "pglite"; readonly directory: string }

let targets = 0
export const freshTarget = (kind: Target["kind"]): Target => {
  targets++
  return kind === "postgres"
    ? { kind, schema: `chaos_${runTag()}_${targets}` }
    : { kind, directory: mkdtempSync(join(tmpdir(), `salesintel-chaos-${runTag()}-${targets}-`)) }
}

export const targetArgs = (target: Target): ReadonlyArray<string> =>
  target.kind === "postgres"
    ? ["--database-url", databaseUrl, "--schema", target.schema]
    : ["--pglite-dir", target.directory]

/** Runs SQL on a target (for PGlite, only while no command holds its directory). */
export const query = async (
  target: Target,
  sql: string,
  params: ReadonlyArray<unknown> = [],
): Promise<ReadonlyArray<Record<string, unknown>>> => {
  const schema = target.kind === "postgres" ? target.schema : Sql.defaultSchema
  const statement = sql.replaceAll("$schema", Sql.ident(schema))
  if (target.kind === "postgres") {
    const client = new pg.Client({ connectionString: databaseUrl })
    await client.connect()
    try {
      return (await client.query(statement, [...params])).rows
    } finally {
      await client.end()
    }
  }
  return Effect.runPromise(
    Effect.flatMap(Database.Database, (db) => db.query(statement, params)).pipe(
      Effect.provide(PGliteDatabase.layer(target.directory)),
      Effect.scoped,
    ),
  )
}

export const dropTarget = async (target: Target): Promise<void> => {
  if (target.kind === "postgres") await query(target, "DROP SCHEMA IF EXISTS $schema CASCADE")
  else rmSync(target.directory, { recursive: true, force: true })
}

/** Each data table's row count and a digest of its keys and typed columns: equal means same data. */
export const fingerprint = async (target: Target): Promise<Record<string, string>> => {
  const tables: Record<string, string> = {
    contacts: "match_id, email, job_level, job_department, company_id, search",
    contact_phones: "match_id, position, value",
    companies: "company_id, company_name, size",
    company_technologies: "company_id, position, product",
    taxonomy_categories: "category",
    taxonomy_products: "product, vendor_key",
  }
  const result: Record<string, string> = {}
  for (const [table, columns] of Object.entries(tables)) {
    const [row] = await query(
      target,
      `SELECT count(*)::int AS n, md5(coalesce(string_agg(row_text, '|' ORDER BY row_text), '')) AS digest
       FROM (SELECT ROW(${columns})::text AS row_text FROM $schema.${Sql.ident(table)}) t`,
    )
    result[table] = `${row?.n} rows, ${row?.digest}`
  }
  return result
}

export const runs = (target: Target) =>
  query(target, "SELECT id, status, error, streams::text AS streams FROM $schema._sync_runs ORDER BY id")

export interface Finished {
  readonly code: number | null
  readonly signal: NodeJS.Signals | null
  readonly stdout: string
  readonly stderr: string
  readonly seconds: number
}

export interface Running {
  readonly child: ChildProcess
  readonly done: Promise<Finished>
  /** Resolves once the command's stderr or stdout has shown `text`. */
  readonly saw: (text: string | RegExp) => Promise<void>
}

/** Starts a command (node with the command file's own flags comes from its shebang). */
export const start = (
  bin: string,
  args: ReadonlyArray<string>,
  options: {
    readonly env?: Readonly<Record<string, string>>
    /** Another process's stdout to read, as a shell's pipe gives it (the default: none). */
    readonly stdin?: Readable
  } = {},
): Running => {
  const started = performance.now()
  const child = spawn(bin, [...args], {
    stdio: [options.stdin ?? "ignore", "pipe", "pipe"],
    env: { ...process.env, ...options.env },
  })
  let stdout = ""
  let stderr = ""
  const waiters: Array<{ readonly text: string | RegExp; readonly resolve: () => void }> = []
  const check = () => {
    for (const waiter of [...waiters]) {
      const seen =
        typeof waiter.text === "string"
          ? stdout.includes(waiter.text) || stderr.includes(waiter.text)
          : waiter.text.test(stdout) || waiter.text.test(stderr)
      if (seen) {
        waiters.splice(waiters.indexOf(waiter), 1)
        waiter.resolve()
      }
    }
  }
  child.stdout?.on("data", (chunk: Buffer) => {
    stdout += chunk.toString("utf8")
    check()
  })
  child.stderr?.on("data", (chunk: Buffer) => {
    stderr += chunk.toString("utf8")
    check()
  })
  const done = new Promise<Finished>((resolve) => {
    child.on("close", (code, signal) =>
      resolve({ code, signal, stdout, stderr, seconds: (performance.now() - started) / 1000 }),
    )
  })
  const saw = (text: string | RegExp) =>
    new Promise<void>((resolve, reject) => {
      waiters.push({ text, resolve })
      check()
      void done.then(() => reject(new Error(`the command ended without showing ${text}:\n${stderr}`)))
    })
  return { child, done, saw }
}

export const writeJson = (value: unknown): string => {
  const path = join(mkdtempSync(join(tmpdir(), "salesintel-chaos-file-")), "file.json")
  writeFileSync(path, JSON.stringify(value))
  return path
}

/** `salesintel sync` of `config` into `target`, with any extra arguments. */
export const sync = (target: Target, configPath: string, extra: ReadonlyArray<string> = []) =>
  start(bins.salesintel, ["sync", "--config", configPath, ...targetArgs(target), ...extra])

export const sleep = (millis: number) => new Promise((resolve) => setTimeout(resolve, millis))

/** The sandbox the suite buys from, with a little latency so that a run lasts long enough to hurt. */
export const openSandbox = (
  latencyMs = 15,
  options: { readonly contacts?: number; readonly requestsPerMinute?: number } = {},
): Promise<Sandbox> =>
  startSandbox({
    seed: 42,
    contacts: options.contacts ?? 100_000,
    companies: 10_000,
    faults: {
      latency_ms: latencyMs,
      ...(options.requestsPerMinute === undefined ? {} : { requests_per_minute: options.requestsPerMinute }),
    },
  })

/**
 * What a run killed without warning (SIGKILL) may buy again on its rerun: what was paid for and
 * not yet committed. The pages the pager holds (in flight, or landed and waiting for their turn in
 * page order: at most `concurrency`, 3 in the suite's config, of 50 records; the pages in flight
 * follow the latency, and the cap is what bounds them whatever it is), the page being mapped, the
 * one waiting for its checkpoint and the one in the loader's open transaction. The first run now
 * buys throughout (a search with nothing bought is read directly), so that pipeline is full
 * whenever the kill comes: concurrency + 3 pages. The streams are read at once (source/src/read/Read.ts:
 * the credited in turn, the free beside them), merged into one stream: its queue holds a page for
 * the reader, and the stream feeding it holds the next until there is room (a page is handed over
 * whole, one chunk, since the read stopped splitting pages into a chunk per record):
 * concurrency + 5 pages (measured: 400 at most; 350 while the merge handed records over one by
 * one, 300 before the streams were merged). And the companies begin
 * once the contacts have reserved their last page, so their batch, bought while the contacts' last
 * pages land, may be paid for and not committed beside them: its 25 domains, one batch.
 */
export const suiteConcurrency = 3
export const suiteCompanies = 25
export const sigkillBound = (suiteConcurrency + 5) * 50 + suiteCompanies

/**
 * Through the pipe (the source on its own, where the bought set is in the state), the set is
 * checkpointed after every page while it holds fewer than 2,500 contacts, then once 1/50 of what
 * it holds has been bought since the last checkpoint (read/Checkpoints.ts): there the three
 * pieces on their way to a commit are three such intervals. `salesintel sync` keeps the set in the
 * ledger instead (written with the records), where a checkpoint is small whatever is held and comes
 * after every page; the loader commits checkpoints as it frees up, those that arrived meanwhile
 * together, and lets at most 500 records wait behind them (packages/postgres/src/load/CommitGroup.ts,
 * `groupLimit`): the group being written, the one handed to the writer and the one forming come to
 * at most 1,500 whatever the holdings, and to a page each while the loader keeps up.
 * holdings.test.ts measures both. A search read through partitions holds no more pages than one
 * read directly: the partitions that read ahead share its `concurrency` (components/PagedQuery.ts).
 */
export const checkpointInterval = (contactsHeld: number, pageSize = 50) =>
  pageSize * Math.max(1, Math.ceil(Math.floor(contactsHeld / 50) / pageSize))
export const groupLimit = 500
/** The ledger's bound: the pager's pages, the page being mapped and the two the merge holds, and the groups. */
export const sigkillBoundLedger = () => (suiteConcurrency + 3) * 50 + 3 * groupLimit

export const charged = (sandbox: Sandbox, key = "sandbox-full"): number =>
  sandbox.accounts()[key]?.credits_charged ?? 0

/** The suite's config: a contacts search of ~1,500, 25 companies, part of the taxonomy. */
export const chaosConfig = (sandbox: Sandbox, overrides: Record<string, unknown> = {}) => ({
  api_key: "sandbox-full",
  base_url: sandbox.url,
  credit_budget: 20_000,
  contacts: { searches: [{ name: "it-vps", filters: { job_departments: ["it_is"], job_levels: ["vp"] } }] },
  companies: { domains: sandbox.dataset.companies.slice(0, suiteCompanies).map((company) => company.domain) },
  taxonomy: { products: ["cloud", "data"] },
  concurrency: suiteConcurrency,
  ...overrides,
})

/** One line of figures per case, gathered and printed as a table when the file ends. */
export const figures: Array<Record<string, string | number>> = []
export const record = (row: Record<string, string | number>) => {
  figures.push(row)
  console.log(
    Object.entries(row)
      .map(([key, value]) => `${key}=${value}`)
      .join("  "),
  )
}

/** A run is under way (and recorded) once its first stream is read. */
export const underway = /taxonomy_categories: \d+ records/

export interface Reference {
  credits: number
  seconds: number
  tables: Record<string, string>
}

/**
 * A test file's sandbox, config and (unless `reference: false`) a reference sync of that config
 * into a fresh Postgres schema, made before its tests; every target it hands out is dropped after.
 */
export const chaosFile = (
  options: {
    readonly latencyMs?: number
    readonly config?: Record<string, unknown>
    readonly reference?: boolean
  } = {},
) => {
  const created: Array<Target> = []
  const file = {
    sandbox: undefined as Sandbox | undefined,
    configPath: "",
    reference: { credits: 0, seconds: 0, tables: {} } as Reference,
    get provider(): Sandbox {
      if (file.sandbox === undefined) throw new Error("the sandbox starts before the file's tests")
      return file.sandbox
    },
    fresh: (kind: Target["kind"] = "postgres"): Target => {
      const target = freshTarget(kind)
      created.push(target)
      return target
    },
  }
  beforeAll(async () => {
    file.sandbox = await openSandbox(options.latencyMs)
    file.configPath = writeJson(chaosConfig(file.sandbox, options.config))
    if (options.reference === false) return
    file.sandbox.reset()
    const finished = await sync(file.fresh(), file.configPath).done
    expect(finished.code, finished.stderr).toBe(0)
    const target = created.at(-1)
    if (target === undefined) throw new Error("no reference target")
    file.reference = {
      credits: charged(file.sandbox),
      seconds: finished.seconds,
      tables: await fingerprint(target),
    }
  })
  afterAll(async () => {
    for (const target of created) await dropTarget(target)
    await file.sandbox?.close()
  })
  return file
}
