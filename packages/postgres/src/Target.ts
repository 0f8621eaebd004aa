/**
 * Which database a command works on, shared by `salesintel-pg` and `salesintel`: --database-url,
 * else DATABASE_URL, else embedded PGlite in a directory (./.salesintel/pglite by default), so a
 * first sync needs no setup at all. Also the command-line options that choose it.
 */
import { Options } from "@effect/cli"
import { type Layer, Option } from "effect"
import type * as Database from "./Database.ts"
import * as PGliteDatabase from "./PGliteDatabase.ts"
import * as PgDatabase from "./PgDatabase.ts"
import { defaultSchema } from "./Sql.ts"

export interface Target {
  /** For people: the server without its password, or the PGlite directory. */
  readonly description: string
  readonly layer: Layer.Layer<Database.Database, Database.DatabaseError>
}

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
}): Target => {
  const url = options.databaseUrl ?? options.env?.DATABASE_URL
  if (url !== undefined && url.length > 0)
    return { description: `Postgres at ${redactUrl(url)}`, layer: PgDatabase.layer(url) }
  return {
    description: `embedded PGlite in ${options.pgliteDir}`,
    layer: PGliteDatabase.layer(options.pgliteDir),
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
export const fromOptions = (databaseUrl: Option.Option<string>, pgliteDir: string): Target =>
  resolve({ databaseUrl: Option.getOrUndefined(databaseUrl), pgliteDir, env: process.env })
