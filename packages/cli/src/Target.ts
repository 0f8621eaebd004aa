/**
 * Which database a command works on: --database-url, else DATABASE_URL, else embedded PGlite in
 * a directory (./.salesintel/pglite by default), so a first sync needs no setup at all.
 */
import { type Database, PGliteDatabase, PgDatabase } from "@salesintel/postgres"
import type { Layer } from "effect"

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
