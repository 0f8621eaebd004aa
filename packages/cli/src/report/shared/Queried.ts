/**
 * What the report's data modules share: a database value as text (null stays null), and whether a
 * schema holds every relation a subject reads (a loader older than the subject did not create
 * them, and the subject then has nothing to show, not an error).
 */
import { Database } from "@salesintel/postgres"
import * as Effect from "effect/Effect"

export const text = (value: unknown): string | null =>
  value === null || value === undefined ? null : String(value)

/** Every relation of `names` is a table or view of `schema`. */
export const hasRelations = (schema: string, names: ReadonlyArray<string>) =>
  Effect.flatMap(Database.Database, (db) =>
    db.query(
      "SELECT count(*)::int AS n FROM information_schema.tables WHERE table_schema = $1 AND table_name = ANY($2::text[])",
      [schema, names],
    ),
  ).pipe(Effect.map(([row]) => Number(row?.n ?? 0) === names.length))
