/**
 * The Database over a Postgres server through `pg`: one client, COPY through pg-copy-streams.
 */
import { Readable } from "node:stream"
import { pipeline } from "node:stream/promises"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import pg from "pg"
import copyStreams from "pg-copy-streams"
import { Database, DatabaseError, type DatabaseService, type Result, type Row } from "./Database.ts"

// The error each client's connection ended with, from its "error" event.
const lostConnections = new WeakMap<pg.Client, Error>()
// Settles when each client's connection has ended (its "end" or "error" event).
const endings = new WeakMap<pg.Client, Promise<void>>()

/**
 * After a call failed on something that is not the server's own error (a broken pipe, a closed
 * socket), waits until the connection has ended, for at most a second: the server's reason (e.g.
 * it terminated the backend) may still be in flight on the socket behind the failed write.
 */
const settled = (client: pg.Client): Promise<void> =>
  Promise.race([
    endings.get(client) ?? Promise.resolve(),
    new Promise<void>((resolve) => setTimeout(resolve, 1_000).unref()),
  ])

/**
 * A server's error (it carries a SQLSTATE), not a broken pipe or socket. A system error's code can
 * look like a SQLSTATE too ("EPIPE" is five capitals), so one with a `syscall` is never taken for
 * the server's: a broken pipe mid-COPY was reported as "write EPIPE" instead of a lost connection.
 */
export const hasSqlState = (error: unknown): boolean =>
  error instanceof Error &&
  "code" in error &&
  typeof error.code === "string" &&
  /^[0-9A-Z]{5}$/.test(error.code) &&
  !("syscall" in error)

const lostConnection = (text: string) => new Error(`the connection to the database was lost (${text})`)

/** The error to report: the server's reason when it sent one, else the lost connection itself. */
const causeOf = (client: pg.Client, error: unknown): unknown => {
  const lost = lostConnections.get(client)
  // The connection's "error" event may carry the socket's own failure (a write's EPIPE) rather
  // than the server's reason: that is a lost connection too, and is said as one.
  if (lost !== undefined) return hasSqlState(lost) ? lost : lostConnection(lost.message)
  if (hasSqlState(error)) return error
  const text = error instanceof Error ? error.message : String(error)
  // A write that failed on a closed socket can beat the server's reason, which is then never read.
  return /EPIPE|ECONNRESET|Connection terminated|not queryable|ended unexpectedly/i.test(text)
    ? lostConnection(text)
    : error
}

/**
 * Each client's last call, settled either way: the next starts after it. An Effect interrupted
 * while its statement runs (a stop, a failure beside it) leaves that statement running in the
 * server, so the next call would be sent beside it, and pg would queue it (and warns that pg 9
 * will not). Taking turns here, the calls reach pg one at a time, whoever awaits them.
 */
const lastCalls = new WeakMap<pg.Client, Promise<unknown>>()

const inTurn = <A>(client: pg.Client, run: () => Promise<A>): Promise<A> => {
  const next = (lastCalls.get(client) ?? Promise.resolve()).then(run)
  lastCalls.set(
    client,
    next.catch(() => undefined),
  )
  return next
}

/**
 * Runs one call on the client, in its turn (inTurn). Once the connection is lost, pg fails the calls with "not
 * queryable" or a broken stream; the error that ended the connection (e.g. the server
 * terminating the backend) is the cause. Its event may come a moment after the call failed.
 */
const call = <A>(
  client: pg.Client,
  operation: string,
  run: () => Promise<A>,
): Effect.Effect<A, DatabaseError> =>
  Effect.tryPromise({
    try: async () => {
      try {
        return await inTurn(client, run)
      } catch (error) {
        if (!lostConnections.has(client) && !hasSqlState(error)) await settled(client)
        throw causeOf(client, error)
      }
    },
    catch: (cause) => new DatabaseError({ operation, cause }),
  })

/** Every value as the server's text: pg's own parsers would make a date a Date in the process's time zone. */
const asText: pg.CustomTypesConfig = {
  getTypeParser: () => (value: string) => value,
}

const make = (client: pg.Client): DatabaseService => ({
  kind: "pg",
  query: (sql, params = []) =>
    call(
      client,
      sql.slice(0, 80),
      async (): Promise<ReadonlyArray<Row>> => (await client.query(sql, [...params])).rows,
    ),
  queryResult: (sql) =>
    call(client, sql.slice(0, 80), async (): Promise<Result> => {
      const result = await client.query<Array<string | null>>({ text: sql, rowMode: "array", types: asText })
      const fields = result.fields ?? []
      return {
        columns: fields.map((field) => field.name),
        types: fields.map((field) => field.dataTypeID),
        rows: result.rows ?? [],
      }
    }),
  exec: (sql) =>
    call(client, sql.slice(0, 80), async () => {
      await client.query(sql)
    }),
  copyIn: (table, columns, data) =>
    call(client, `COPY into ${table}`, async () => {
      const copy = client.query(copyStreams.from(`COPY ${table} (${columns.join(", ")}) FROM STDIN`))
      // The server's error reaches the COPY stream; the pipeline may fail first on a broken pipe.
      let serverError: unknown
      copy.on("error", (error) => {
        if (serverError === undefined && hasSqlState(error)) serverError = error
      })
      try {
        await pipeline(Readable.from([data]), copy)
      } catch (error) {
        if (serverError === undefined && !hasSqlState(error)) await settled(client)
        throw serverError ?? causeOf(client, error)
      }
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
          endings.set(
            client,
            new Promise<void>((resolve) => {
              client.once("end", () => resolve())
              client.once("error", () => resolve())
            }),
          )
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
