/** `salesintel sql` and `salesintel status`: read what a sync wrote, as aligned tables. */
import { Database, Runs, Sql } from "@salesintel/postgres"
import { Effect } from "effect"
import * as Table from "./Table.ts"

/**
 * Runs one statement with the sync's schema first on the search path, so `SELECT * FROM contacts`
 * works as well as `salesintel.contacts`.
 */
export const sql = (schema: string, statement: string) =>
  Effect.gen(function* () {
    const db = yield* Database.Database
    yield* db.exec(`SET search_path TO ${Sql.ident(schema)}, public`)
    const rows = yield* db.query(statement)
    const columns = rows.length > 0 ? Object.keys(rows[0] ?? {}) : []
    return Table.format(columns, rows)
  })

export const status = (schema: string, limit: number) =>
  Effect.map(Runs.list(schema, limit), (runs) =>
    Table.format(
      ["run", "started", "finished", "status", "records", "credits", "error"],
      runs.map((run) => {
        const streams = Object.values(run.streams ?? {})
        return {
          run: run.id,
          started: run.startedAt,
          finished: run.finishedAt,
          status: run.status,
          records: streams.reduce((sum, s) => sum + s.records, 0),
          credits: streams.reduce((sum, s) => sum + (s.credits ?? 0), 0),
          error: run.error,
        }
      }),
    ),
  )
