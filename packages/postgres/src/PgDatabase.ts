/**
 * The Database over a Postgres server through `pg`: one client, COPY through pg-copy-streams.
 */
import { Readable } from "node:stream"
import { pipeline } from "node:stream/promises"
import { Effect, Layer } from "effect"
import pg from "pg"
import copyStreams from "pg-copy-streams"
import { Database, DatabaseError, type DatabaseService, type Row } from "./Database.ts"

/**
 * What a query failed on: once the connection is lost, pg fails every query with "not queryable";
 * the error that ended the connection (e.g. the server terminating the backend) is the cause.
 */
const causeOf = (client: pg.Client, cause: unknown): unknown => lostConnections.get(client) ?? cause

// The error each client's connection ended with, from its "error" event.
const lostConnections = new WeakMap<pg.Client, Error>()

const make = (client: pg.Client): DatabaseService => ({
  kind: "pg",
  query: (sql, params = []) =>
    Effect.tryPromise({
      try: async (): Promise<ReadonlyArray<Row>> => (await client.query(sql, [...params])).rows,
      catch: (cause) => new DatabaseError({ operation: sql.slice(0, 80), cause: causeOf(client, cause) }),
    }),
  exec: (sql) =>
    Effect.tryPromise({
      try: async () => {
        await client.query(sql)
      },
      catch: (cause) => new DatabaseError({ operation: sql.slice(0, 80), cause: causeOf(client, cause) }),
    }),
  copyIn: (table, columns, data) =>
    Effect.tryPromise({
      try: () =>
        pipeline(
          Readable.from([data]),
          client.query(copyStreams.from(`COPY ${table} (${columns.join(", ")}) FROM STDIN`)),
        ),
      catch: (cause) => new DatabaseError({ operation: `COPY into ${table}`, cause: causeOf(client, cause) }),
    }),
})

/** A Database on the server at `url` (a postgres:// connection string), closed with the scope. */
export const layer = (url: string): Layer.Layer<Database, DatabaseError> =>
  Layer.scoped(
    Database,
    Effect.acquireRelease(
      Effect.tryPromise({
        try: async () => {
          const client = new pg.Client({ connectionString: url })
          // A server-side error on an idle client must not crash the process; queries report it.
          client.on("error", (error) => {
            if (!lostConnections.has(client)) lostConnections.set(client, error)
          })
          await client.connect()
          // Room for a whole batch in the session's temporary (staging) tables: with the default
          // 8 MB a batch of contacts spills to disk, and the upsert that reads it back runs a
          // third slower (measured). It only takes effect before the session's first temporary
          // table, hence here. Server memory, used only as needed.
          await client.query("SET temp_buffers = '64MB'")
          return client
        },
        catch: (cause) => new DatabaseError({ operation: "connect", cause }),
      }),
      (client) => Effect.promise(() => client.end().catch(() => undefined)),
    ).pipe(Effect.map(make)),
  )
