/**
 * Which database a command works on, shared by `salesintel-pg` and `salesintel`: --database-url,
 * else DATABASE_URL, else embedded PGlite in a directory (./.salesintel/pglite by default), so a
 * first sync needs no setup at all. Also the command-line options that choose it.
 */
import { mkdirSync } from "node:fs"
import { Options } from "@effect/cli"
import { Effect, Layer, Option } from "effect"
import * as Database from "./Database.ts"
import * as PGliteDatabase from "./PGliteDatabase.ts"
import * as PgDatabase from "./PgDatabase.ts"
import * as RunLock from "./RunLock.ts"
import { defaultSchema } from "./Sql.ts"

export interface Target {
  /** For people: the server without its password, or the PGlite directory. */
  readonly description: string
  /**
   * The connection. On PGlite it holds the directory's lock file first (PGlite's files are one
   * process's at a time: a second process would corrupt them): another command fails at once
   * naming the holder, or waits when `lock.wait` says so. A server's lock is per schema, taken by
   * the run itself (RunLock.schema).
   */
  readonly layer: Layer.Layer<Database.Database, Database.DatabaseError | RunLock.RunLocked>
}

/** Who holds the lock (shown to a second run) and whether a second run waits for it. */
export interface LockOptions {
  readonly owner: string
  readonly wait?: RunLock.Wait
}

const lockedPGlite = (directory: string, lock: LockOptions) =>
  Layer.unwrapScoped(
    Effect.gen(function* () {
      yield* Effect.try({
        try: () => mkdirSync(directory, { recursive: true }),
        catch: (cause) => new Database.DatabaseError({ operation: `create ${directory}`, cause }),
      })
      yield* RunLock.directory(directory, lock)
      return PGliteDatabase.layer(directory)
    }),
  )

/** The URL with any password replaced, safe to print. */
export const redactUrl = (url: string): string => {
  try {
    const parsed = new URL(url)
    if (parsed.password !== "") parsed.password = "***"
    return parsed.toString()
  } catch {
    return "(an unparseable database URL)"
  }
}

export const resolve = (options: {
  readonly databaseUrl: string | undefined
  readonly pgliteDir: string
  readonly env?: Readonly<Record<string, string | undefined>>
  readonly lock?: LockOptions
}): Target => {
  const url = options.databaseUrl ?? options.env?.DATABASE_URL
  if (url !== undefined && url.length > 0)
    return { description: `Postgres at ${redactUrl(url)}`, layer: PgDatabase.layer(url) }
  return {
    description: `embedded PGlite in ${options.pgliteDir}`,
    layer: lockedPGlite(options.pgliteDir, options.lock ?? { owner: "salesintel" }),
  }
}

/** The options every command that touches the database takes. */
export const options = {
  databaseUrl: Options.text("database-url").pipe(
    Options.optional,
    Options.withDescription("postgres://... of a server (default: $DATABASE_URL, else embedded PGlite)"),
  ),
  pgliteDir: Options.directory("pglite-dir").pipe(
    Options.withDefault(PGliteDatabase.defaultDirectory),
    Options.withDescription("where embedded PGlite keeps its files when no database URL is given"),
  ),
  schema: Options.text("schema").pipe(
    Options.withDefault(defaultSchema),
    Options.withDescription("the schema the tables live in"),
  ),
}

/** The target of parsed options, with the process environment's DATABASE_URL as the fallback. */
export const fromOptions = (
  databaseUrl: Option.Option<string>,
  pgliteDir: string,
  lock: LockOptions = { owner: "salesintel" },
): Target => resolve({ databaseUrl: Option.getOrUndefined(databaseUrl), pgliteDir, env: process.env, lock })

/** `--wait`: a run waits (up to an hour) for the run holding its target, instead of failing at once. */
export const waitOption = Options.boolean("wait").pipe(
  Options.withDescription(
    "wait (up to an hour) for another run on the same target to end, instead of failing",
  ),
)
