/**
 * What `sync` and `plan` say on stderr when no database was named on their command line: a sync
 * that spent credits into ./.salesintel/pglite because --database-url was forgotten looked, until
 * then, like a sync into the warehouse.
 */
import { PGliteDatabase, Target } from "@salesintel/postgres"
import * as Option from "effect/Option"

export interface Named {
  readonly databaseUrl: Option.Option<string>
  readonly pgliteDir: string
  /** Where DATABASE_URL is looked up (the invocation's environment in the CLI). */
  readonly env: Readonly<Record<string, string | undefined>>
}

/**
 * The line to say (`doing`: "writing to", "reading the saved state of"), or undefined when the
 * command line named the database (--database-url, or a --pglite-dir of its own).
 */
export const unnamed = (target: Named, doing: string): string | undefined => {
  if (Option.isSome(target.databaseUrl)) return undefined
  const url = target.env.DATABASE_URL
  if (url !== undefined && url.length > 0)
    return `no --database-url: ${doing} Postgres at ${Target.redactUrl(url)} (from DATABASE_URL)`
  if (target.pgliteDir !== PGliteDatabase.defaultDirectory) return undefined
  return `no --database-url: ${doing} the embedded PGlite database at ${target.pgliteDir}`
}
