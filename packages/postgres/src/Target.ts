/**
 * Which database a command works on, shared by `salesintel-pg` and `salesintel`: --database-url,
 * else DATABASE_URL, else embedded PGlite in a directory (./.salesintel/pglite by default), so a
 * first sync needs no setup at all. Also the command-line options that choose it.
 */
import { existsSync, mkdirSync } from "node:fs"
import { join } from "node:path"
import { Options } from "@effect/cli"
import { CommandLine } from "@salesintel/command-line"
import * as Data from "effect/Data"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Option from "effect/Option"
import * as Database from "./database/Database.ts"
import * as PGliteDatabase from "./database/PGliteDatabase.ts"
import * as PgDatabase from "./database/PgDatabase.ts"
import { defaultSchema } from "./database/Sql.ts"
import type * as Lease from "./runs/Lease.ts"
import * as RunLock from "./runs/RunLock.ts"

export interface Target {
  /** For people: the server without its password, or the PGlite directory. */
  readonly description: string
  /**
   * The connection. On PGlite it holds the directory's lock file first (PGlite's files are one
   * process's at a time: a second process would corrupt them): another command fails at once
   * naming the holder, or waits when `lock.wait` says so. A server's lock is per schema, taken by
   * the run itself (RunLock.schema).
   */
  readonly layer: Layer.Layer<Database.Database, Database.DatabaseError | RunLock.RunLocked | NoDatabase>
  /**
   * A new connection to the same server, to record how a run ended after its own connection was
   * lost (so the run row says why, instead of the next run marking it abandoned). None on PGlite:
   * its files are this process's already.
   */
  readonly reconnect?: Layer.Layer<Database.Database, Database.DatabaseError>
  /**
   * The embedded database's directory; undefined for a server. Files beside the database live
   * there: a pipe's lease (Lease.ts), a run's credits written ahead (CreditsAhead.ts).
   */
  readonly pgliteDirectory?: string
}

/** No database where one must exist (`existing`), or a DATABASE_URL that cannot be one. */
export class NoDatabase extends Data.TaggedError("NoDatabase")<{ readonly description: string }> {
  override get message(): string {
    return this.description
  }
}

/** Who holds the lock (shown to a second run) and whether a second run waits for it. */
export interface LockOptions {
  readonly owner: string
  readonly wait?: RunLock.Wait
  /** What the run does with a pipe's lease (Lease.ts): a sync respects it, a load consumes it. */
  readonly lease?: Lease.Use
  /**
   * Only open a database that exists (`sql`, `status`): a PGlite directory that is missing or
   * holds no database is an error, and nothing is created. A sync creates it (the default).
   */
  readonly existing?: boolean
}

/** Why a URL cannot be a database's, or undefined when it can. */
export const checkDatabaseUrl = (url: string): string | undefined => {
  let parsed: URL
  try {
    parsed = new URL(url)
  } catch {
    return "expected a URL like postgres://user:password@host:5432/database"
  }
  if (parsed.protocol !== "postgres:" && parsed.protocol !== "postgresql:")
    return `expected a postgres:// or postgresql:// URL, not ${parsed.protocol}//`
  return undefined
}

/** Why a name cannot be the schema's, or undefined when it can. */
export const checkSchema = (name: string): string | undefined => {
  if (name.length === 0) return "expected a schema name, not an empty one"
  // biome-ignore lint/suspicious/noControlCharactersInRegex: control characters are what is refused
  if (/[\x00-\x1f]/.test(name)) return "expected a schema name without control characters"
  if (Buffer.byteLength(name) > 63) return "expected a schema name of at most 63 bytes (Postgres's limit)"
  return undefined
}

/** A database that `existing` open found missing. */
const missing = (what: string) =>
  new NoDatabase({
    description: `${what}; nothing was created (run \`salesintel sync\` first, or give the --pglite-dir or --database-url it used)`,
  })

const lockedPGlite = (directory: string, lock: LockOptions) =>
  Layer.unwrapScoped(
    Effect.gen(function* () {
      if (lock.existing === true) {
        if (!existsSync(directory))
          return yield* missing(`no embedded database in ${directory}: the directory does not exist`)
        // PGlite (initdb) writes PG_VERSION first: without it the directory holds no database.
        if (!existsSync(join(directory, "PG_VERSION")))
          return yield* missing(
            `no embedded database in ${directory}: the directory holds no PGlite database`,
          )
      } else
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
  if (url !== undefined && url.length > 0) {
    // --database-url is checked when parsed; DATABASE_URL here, before any connection attempt.
    const problem = checkDatabaseUrl(url)
    return {
      description: `Postgres at ${redactUrl(url)}`,
      layer:
        problem === undefined
          ? PgDatabase.layer(url)
          : Layer.fail(new NoDatabase({ description: `DATABASE_URL ${redactUrl(url)}: ${problem}` })),
      ...(problem === undefined ? { reconnect: PgDatabase.layer(url) } : {}),
    }
  }
  return {
    description: `embedded PGlite in ${options.pgliteDir}`,
    pgliteDirectory: options.pgliteDir,
    layer: lockedPGlite(options.pgliteDir, options.lock ?? { owner: "salesintel" }),
  }
}

/** The options every command that touches the database takes, with their help. */
export const options = {
  databaseUrl: CommandLine.flag(
    CommandLine.checkedText("database-url", checkDatabaseUrl, redactUrl).pipe(Options.optional),
    {
      name: "--database-url URL",
      text: "a Postgres server, postgres://user:password@host:5432/database; its password is never printed",
      default: "$DATABASE_URL, else embedded PGlite in --pglite-dir",
    },
  ),
  pgliteDir: CommandLine.flag(
    Options.directory("pglite-dir").pipe(Options.withDefault(PGliteDatabase.defaultDirectory)),
    {
      name: "--pglite-dir DIR",
      text: "where embedded PGlite keeps its files when no database URL is given",
      default: PGliteDatabase.defaultDirectory,
    },
  ),
  schema: CommandLine.flag(
    CommandLine.checkedText("schema", checkSchema).pipe(Options.withDefault(defaultSchema)),
    {
      name: "--schema NAME",
      text: "the Postgres schema the tables live in",
      default: defaultSchema,
    },
  ),
}

/**
 * The target of a command's parsed options: DATABASE_URL from the invocation's environment as the
 * fallback, a relative --pglite-dir in its working directory.
 */
export const fromOptions = (
  io: CommandLine.IoService,
  databaseUrl: Option.Option<string>,
  pgliteDir: string,
  lock: LockOptions = { owner: "salesintel" },
): Target =>
  resolve({
    databaseUrl: Option.getOrUndefined(databaseUrl),
    pgliteDir: CommandLine.pathIn(io, pgliteDir),
    env: io.env,
    lock,
  })

/** `--wait`: a run waits (up to an hour) for the run holding its target, instead of failing at once. */
export const waitOption = CommandLine.flag(Options.boolean("wait"), {
  name: "--wait",
  text: "wait (up to an hour) for another run on the same target to end, instead of failing at once",
})
