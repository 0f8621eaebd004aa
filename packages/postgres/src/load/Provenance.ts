/**
 * Where the contacts held were bought from: each row's `search` (the configured search that
 * returned it; null for an email enrichment). What a full refresh is about to delete is told from
 * it before the refresh begins: the rows of searches and emails no longer configured.
 */
import * as Effect from "effect/Effect"
import { Database, type DatabaseError } from "../database/Database.ts"
import { qualified } from "../database/Sql.ts"
import { named } from "../schema/Tables.ts"

/**
 * How many contacts rows were bought by a search not in `searches`, or by an email not in
 * `emails` (compared without case): a full refresh configured so deletes them once it completes,
 * unless a configured search finds them again. 0 where the schema or its table does not exist yet.
 */
export const boughtElsewhere = (
  schema: string,
  searches: ReadonlyArray<string>,
  emails: ReadonlyArray<string>,
): Effect.Effect<number, DatabaseError, Database> =>
  Effect.flatMap(Database, (db) =>
    Effect.flatMap(
      db.query("SELECT to_regclass($1) IS NOT NULL AS present", [qualified(schema, named.contacts.name)]),
      ([exists]) =>
        exists?.present !== true
          ? Effect.succeed(0)
          : Effect.map(
              db.query(
                `SELECT count(*)::integer AS n FROM ${qualified(schema, named.contacts.name)}
                  WHERE CASE WHEN search IS NULL THEN lower(coalesce(email, '')) <> ALL($2::text[])
                             ELSE search <> ALL($1::text[]) END`,
                [[...searches], emails.map((email) => email.toLowerCase())],
              ),
              ([row]) => Number(row?.n ?? 0),
            ),
    ),
  )
