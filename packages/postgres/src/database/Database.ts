/**
 * The one database connection the loader works through, a server (PgDatabase) or embedded
 * PGlite (PGliteDatabase). It is a single session on purpose: the staging tables are temporary
 * (session-local) and a load's transaction spans many statements.
 */
import * as Context from "effect/Context"
import * as Data from "effect/Data"
import * as Effect from "effect/Effect"

export class DatabaseError extends Data.TaggedError("DatabaseError")<{
  readonly operation: string
  readonly cause: unknown
}> {
  override get message(): string {
    const cause = this.cause
    const text = cause instanceof Error ? cause.message : String(cause)
    const detail =
      typeof cause === "object" && cause !== null && "detail" in cause && typeof cause.detail === "string"
        ? ` (${cause.detail})`
        : ""
    return `database error during ${this.operation}: ${text}${detail}`
  }
}

/**
 * What Postgres said about a statement it refused (the fields of its ErrorResponse), as psql
 * prints them. `position` counts characters of the statement from 1; `internalPosition` of
 * `internalQuery` (a query a function ran); `where` is psql's CONTEXT.
 */
export interface ServerError {
  readonly severity: string
  readonly code: string
  readonly message: string
  readonly detail?: string | undefined
  readonly hint?: string | undefined
  readonly position?: number | undefined
  readonly internalPosition?: number | undefined
  readonly internalQuery?: string | undefined
  readonly where?: string | undefined
}

/**
 * The server's own error behind `error`, on either backend (pg's DatabaseError carries the fields
 * itself, PGliteDatabase's PGliteError in `fields`); undefined when the failure is not the
 * server's (a lost connection, a full disk).
 */
export const serverError = (error: DatabaseError): ServerError | undefined => {
  const cause = error.cause
  if (!(cause instanceof Error)) return undefined
  const own: Readonly<Record<string, unknown>> = { ...cause }
  const fields: Readonly<Record<string, unknown>> =
    typeof own.fields === "object" && own.fields !== null ? { ...own.fields } : own
  const text = (name: string) => (typeof fields[name] === "string" ? fields[name] : undefined)
  const whole = (name: string) => {
    const value = Number(text(name))
    return Number.isInteger(value) && value > 0 ? value : undefined
  }
  const code = text("code")
  // A system error (EPIPE) has a code too, but no severity: only the server sends one.
  const severity = text("severity")
  if (code === undefined || severity === undefined) return undefined
  return {
    severity,
    code,
    message: cause.message,
    detail: text("detail"),
    hint: text("hint"),
    position: whole("position"),
    internalPosition: whole("internalPosition"),
    internalQuery: text("internalQuery"),
    where: text("where"),
  }
}

export type Row = Readonly<Record<string, unknown>>

/**
 * A result as psql shows it: every column in order, even those that share a name (`count(*),
 * count(distinct x)` are two `count` columns), each row as the array of its values, each value
 * Postgres's own text (or null), as the server wrote it: never a JavaScript Date (which shows a
 * date in the process's time zone) or a value parsed into another shape.
 */
export interface Result {
  readonly columns: ReadonlyArray<string>
  /** Each column's type, as its OID (pg_type.oid): 16 boolean, 23 integer, 1082 date... */
  readonly types: ReadonlyArray<number>
  readonly rows: ReadonlyArray<ReadonlyArray<string | null>>
}

export interface DatabaseService {
  /** "pg" for a server, "pglite" for embedded PGlite. */
  readonly kind: "pg" | "pglite"
  /** One statement with $1.. parameters. */
  readonly query: (
    sql: string,
    params?: ReadonlyArray<unknown>,
  ) => Effect.Effect<ReadonlyArray<Row>, DatabaseError>
  /** One statement, no parameters, its whole result as text: what `salesintel sql` shows. */
  readonly queryResult: (sql: string) => Effect.Effect<Result, DatabaseError>
  /** Several statements, no parameters (DDL). */
  readonly exec: (sql: string) => Effect.Effect<void, DatabaseError>
  /**
   * Bulk-loads COPY text-format data (UTF-8 bytes, see CopyText.ts and Batch.ts) into `table` (already quoted) and its
   * `columns` (already quoted): COPY FROM STDIN on a server, COPY FROM '/dev/blob' on PGlite.
   */
  readonly copyIn: (
    table: string,
    columns: ReadonlyArray<string>,
    data: Uint8Array<ArrayBuffer>,
  ) => Effect.Effect<void, DatabaseError>
}

export class Database extends Context.Tag("@salesintel/postgres/Database")<Database, DatabaseService>() {}

/** Runs `effect` in a transaction: COMMIT when it succeeds, ROLLBACK when it fails or is interrupted. */
export const transaction = <A, E, R>(
  effect: Effect.Effect<A, E, R>,
): Effect.Effect<A, E | DatabaseError, R | Database> =>
  Effect.flatMap(Database, (db) =>
    Effect.uninterruptibleMask((restore) =>
      db.exec("BEGIN").pipe(
        Effect.zipRight(Effect.exit(restore(effect))),
        Effect.flatMap(
          (exit): Effect.Effect<A, E | DatabaseError> =>
            exit._tag === "Success"
              ? Effect.as(db.exec("COMMIT"), exit.value)
              : Effect.zipRight(Effect.ignore(db.exec("ROLLBACK")), exit),
        ),
      ),
    ),
  )
