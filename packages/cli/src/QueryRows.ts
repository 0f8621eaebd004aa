/**
 * The rows of a config's SQL query (contacts.known_query, companies.domains_query), read from the
 * target's database for the source's read (the source's KnownRows.QueryRows). A page at a time,
 * in a stable order (every column, ascending), so a query of 100,000 rows is never held whole.
 */
import type { Database } from "@salesintel/postgres"
import { KnownRows } from "@salesintel/source"
import * as Chunk from "effect/Chunk"
import * as Effect from "effect/Effect"
import * as Option from "effect/Option"
import * as Stream from "effect/Stream"

const pageRows = 5_000

const refused = (sql: string) => (error: Database.DatabaseError) =>
  new KnownRows.KnownInputError({
    description: `the query "${sql}" could not be run on the target's database: ${error.message}`,
  })

const fieldsOf = (row: Database.Row): Readonly<Record<string, string | undefined>> =>
  Object.fromEntries(
    Object.entries(row).map(([name, value]) => [
      name.toLowerCase(),
      value === null || value === undefined ? undefined : String(value),
    ]),
  )

export const onDatabase = (db: Database.DatabaseService): KnownRows.QueryRowsService => ({
  rows: (sql) =>
    Stream.unwrap(
      Effect.gen(function* () {
        // One statement, wrapped: a trailing semicolon would end it early.
        const query = `SELECT * FROM (${sql.trim().replace(/;\s*$/, "")}) AS known`
        const head = yield* Effect.mapError(db.queryResult(`${query} LIMIT 0`), refused(sql))
        const order = head.columns.map((_, index) => index + 1).join(", ")
        return Stream.paginateChunkEffect(0, (offset) =>
          db.query(`${query} ORDER BY ${order} LIMIT ${pageRows} OFFSET ${offset}`).pipe(
            Effect.mapError(refused(sql)),
            Effect.map(
              (rows) =>
                [
                  Chunk.fromIterable(
                    rows.map((row, index) => ({ where: `row ${offset + index + 1}`, fields: fieldsOf(row) })),
                  ),
                  rows.length < pageRows ? Option.none() : Option.some(offset + pageRows),
                ] as const,
            ),
          ),
        )
      }),
    ),
})
