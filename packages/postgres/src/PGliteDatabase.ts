/**
 * The Database on embedded PGlite, in process (COPY through PGlite's socket server is broken, see
 * toolchain-notes.md). Bulk data goes through `COPY ... FROM '/dev/blob'` with the `blob` option.
 */
import { mkdirSync } from "node:fs"
import { PGlite } from "@electric-sql/pglite"
import { Effect, Layer } from "effect"
import { Database, DatabaseError, type DatabaseService, type Row } from "./Database.ts"

/** The directory `salesintel-pg` uses when no database URL is given. */
export const defaultDirectory = "./.salesintel/pglite"

const make = (db: PGlite): DatabaseService => ({
  kind: "pglite",
  query: (sql, params = []) =>
    Effect.tryPromise({
      try: async (): Promise<ReadonlyArray<Row>> => (await db.query<Row>(sql, [...params])).rows,
      catch: (cause) => new DatabaseError({ operation: sql.slice(0, 80), cause }),
    }),
  exec: (sql) =>
    Effect.tryPromise({
      try: async () => {
        await db.exec(sql)
      },
      catch: (cause) => new DatabaseError({ operation: sql.slice(0, 80), cause }),
    }),
  copyIn: (table, columns, data) =>
    Effect.tryPromise({
      try: async () => {
        await db.query(`COPY ${table} (${columns.join(", ")}) FROM '/dev/blob'`, [], {
          blob: new Blob([data]),
        })
      },
      catch: (cause) => new DatabaseError({ operation: `COPY into ${table}`, cause }),
    }),
})

/**
 * A Database on a PGlite instance stored in `directory` (created if missing), or in memory when
 * `directory` is undefined. Closed with the scope.
 */
export const layer = (directory?: string): Layer.Layer<Database, DatabaseError> =>
  Layer.scoped(
    Database,
    Effect.acquireRelease(
      Effect.tryPromise({
        try: () => {
          if (directory !== undefined) mkdirSync(directory, { recursive: true })
          return PGlite.create(directory)
        },
        catch: (cause) => new DatabaseError({ operation: `open PGlite in ${directory ?? "memory"}`, cause }),
      }),
      (db) => Effect.promise(() => db.close().catch(() => undefined)),
    ).pipe(Effect.map(make)),
  )
