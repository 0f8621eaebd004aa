/**
 * `salesintel sql` and `salesintel status`: read what a sync wrote, as aligned tables, CSV or JSON.
 * Both need a sync to have run: a schema (or `_sync_runs`) that is not there is said as such, not
 * as a "relation does not exist" from the middle of a query.
 */
import { Database, Runs, Sql } from "@salesintel/postgres"
import { Allowance } from "@salesintel/source"
import * as Data from "effect/Data"
import * as Effect from "effect/Effect"
import * as Csv from "./Csv.ts"
import * as Describe from "./Describe.ts"
import * as PsqlError from "./PsqlError.ts"
import * as Statements from "./Statements.ts"
import * as TextTable from "./TextTable.ts"
import * as TextValues from "./TextValues.ts"

/** The schema, or its run table, is not in the database: no sync has written there. */
export class NothingSynced extends Data.TaggedError("NothingSynced")<{ readonly description: string }> {
  override get message(): string {
    return this.description
  }
}

/** A statement the server refused: what it said, as psql prints it (PsqlError.ts). */
export class StatementFailed extends Data.TaggedError("StatementFailed")<{ readonly description: string }> {
  override get message(): string {
    return this.description
  }
}

export type Format = "table" | "csv" | "json"

export interface SqlOptions {
  readonly format?: Format
  /** Table format: cut longer values to this many characters (default: never cut). */
  readonly maxWidth?: number | undefined
  /** Let statements change data (default: every transaction is READ ONLY). */
  readonly write?: boolean | undefined
}

/** Postgres's SQLSTATE for a write refused by a READ ONLY transaction. */
const readOnlySqlTransaction = "25006"

/** Why `sql` refused a write, after the server's own words. */
export const readOnlyReason =
  "sql is read-only by default: the tables are the record of what was bought, so a row deleted here is bought again by the next sync that meets it, and a row changed here is overwritten by it (to keep personal fields out, name them in the config's exclude_fields). Pass --write to change data."

/**
 * `error` of `statement` as psql prints it, with the reason for a refused write when `sql` is
 * read-only; an error that is not the server's (a lost connection) keeps its own message. The
 * position is dropped for a meta-command: it points into the catalog query, not the user's text.
 */
const failed = (error: Database.DatabaseError, statement: string, options: SqlOptions) => {
  const server = Database.serverError(error)
  if (server === undefined) return error
  const meta = statement.startsWith("\\")
  const text = PsqlError.format(meta ? { ...server, position: undefined } : server, statement)
  const refused = server.code === readOnlySqlTransaction && options.write !== true
  return new StatementFailed({ description: `${text}${refused ? `${readOnlyReason}\n` : ""}`.trimEnd() })
}

const hasSchema = (schema: string) =>
  Effect.flatMap(Database.Database, (db) =>
    db.query("SELECT 1 FROM pg_namespace WHERE nspname = $1", [schema]),
  ).pipe(Effect.map((rows) => rows.length > 0))

const requireSchema = (schema: string) =>
  Effect.flatMap(hasSchema(schema), (exists) =>
    exists
      ? Effect.void
      : new NothingSynced({
          description: `there is no schema ${Sql.ident(schema)} in this database: run \`salesintel sync\` first, or give the --schema (and --pglite-dir or --database-url) a sync used`,
        }),
  )

/** A result (every value Postgres's text) as the format shows it; see TextValues. */
const render = (result: Database.Result, options: SqlOptions): string => {
  switch (options.format ?? "table") {
    case "csv":
      return Csv.format(result.columns, result.rows)
    case "json": {
      const values = result.rows.map((row) =>
        row.map((text, index) => TextValues.jsonValue(text, result.types[index])),
      )
      return `${JSON.stringify(TextTable.objects(result.columns, values))}\n`
    }
    case "table":
      return TextTable.format(result.columns, result.rows, {
        maxWidth: options.maxWidth,
        numeric: result.columns.map((_, index) => TextValues.isNumber(result.types[index])),
      })
  }
}

/** A describe command's result as the format shows it: in a table, psql's title centred above. */
const renderDescribed = (described: Describe.Described, options: SqlOptions): string => {
  const rendered = render(described.result, options)
  if ((options.format ?? "table") !== "table") return rendered
  const width = rendered.split("\n")[1]?.length ?? 0
  return `${" ".repeat(Math.max(0, Math.floor((width - described.title.length) / 2)))}${described.title}\n${rendered}`
}

/**
 * Runs each statement of `text` in turn, with the sync's schema first on the search path (so
 * `SELECT * FROM contacts` works as well as `salesintel.contacts`), and hands each result, rendered,
 * to `emit` before the next statement runs (as psql does: a failing statement leaves the results
 * before it printed). Tables are separated by an empty line, CSV blocks too; JSON is one array of
 * row objects per line. psql's describe commands (`\d`, `\d NAME`, Describe.ts) go among them.
 *
 * Unless `options.write`, every transaction of the session is READ ONLY (its default, so a
 * `BEGIN; DELETE ...; COMMIT` is refused too): the tables are the truth of what was bought, and a
 * row deleted by hand is bought again by the next sync. A failed statement is said as psql says it.
 */
export const sqlEach = <E, R>(
  schema: string,
  text: string,
  options: SqlOptions,
  emit: (output: string) => Effect.Effect<void, E, R>,
) =>
  Effect.gen(function* () {
    const db = yield* Database.Database
    yield* requireSchema(schema)
    yield* db.exec(`SET search_path TO ${Sql.ident(schema)}, public`)
    const separator = options.format === "json" ? "" : "\n"
    const each = Effect.forEach(
      Statements.split(text),
      (statement, index) => {
        const output = statement.startsWith("\\")
          ? Effect.map(Describe.run(statement), (described) => renderDescribed(described, options))
          : // Every column, even those that share a name (`count(*), count(distinct x)`): as psql shows them.
            Effect.map(db.queryResult(statement), (result) => render(result, options))
        return Effect.catchTag(output, "DatabaseError", (error) =>
          Effect.fail(failed(error, statement, options)),
        ).pipe(Effect.flatMap((rendered) => emit(`${index > 0 ? separator : ""}${rendered}`)))
      },
      { discard: true },
    )
    if (options.write === true) return yield* each
    yield* db.exec("SET SESSION CHARACTERISTICS AS TRANSACTION READ ONLY")
    // The session may go on (the demo's): it is read-only no longer than the statements. A user's
    // failed, unfinished transaction makes the reset fail; the connection then ends with it.
    yield* Effect.ensuring(each, Effect.ignore(db.exec("RESET default_transaction_read_only")))
  })

/** `sqlEach`, the results joined into one text. */
export const sql = (schema: string, text: string, options: SqlOptions = {}) =>
  Effect.gen(function* () {
    const outputs: Array<string> = []
    yield* sqlEach(schema, text, options, (output) => Effect.sync(() => outputs.push(output)))
    return outputs.join("")
  })

/** A run with its figures per stream, as `status --json` prints it. */
export interface RunStatus {
  readonly run: number
  readonly status: string
  readonly startedAt: string
  readonly finishedAt: string | null
  readonly records: number
  readonly credits: number
  readonly streams: Readonly<Record<string, { readonly records: number; readonly credits: number }>>
  readonly error: string | null
}

/** The latest `limit` runs, newest first. */
export const runs = (schema: string, limit: number) =>
  Effect.gen(function* () {
    const db = yield* Database.Database
    const [table] = yield* db.query("SELECT to_regclass($1) IS NOT NULL AS present", [
      `${Sql.ident(schema)}._sync_runs`,
    ])
    if (table?.present !== true)
      return yield* new NothingSynced({
        description: `no sync has run in schema ${Sql.ident(schema)} of this database (it has no _sync_runs table): run \`salesintel sync\` first, or give the --schema (and --pglite-dir or --database-url) a sync used`,
      })
    const list = yield* Runs.list(schema, limit)
    return list.map((run): RunStatus => {
      const streams = Object.fromEntries(
        Object.entries(run.streams ?? {}).map(([name, figures]) => [
          name,
          { records: figures.records, credits: figures.credits ?? 0 },
        ]),
      )
      const figures = Object.values(streams)
      return {
        run: run.id,
        status: run.status,
        startedAt: run.startedAt.toISOString(),
        finishedAt: run.finishedAt === null ? null : run.finishedAt.toISOString(),
        records: figures.reduce((sum, s) => sum + s.records, 0),
        // The run's own count (Runs.Run.credits): a killed run's mark, past what it committed.
        credits: run.credits ?? figures.reduce((sum, s) => sum + s.credits, 0),
        streams,
        error: run.error,
      }
    })
  })

/**
 * The runs as a table: one line per run and stream (records and credits committed for it), a run
 * without stream figures on one line of its own; the run's error on its first line.
 */
export const statusTable = (list: ReadonlyArray<RunStatus>): string =>
  TextTable.format(
    ["run", "started", "finished", "status", "stream", "records", "credits", "error"],
    list.flatMap((run) => {
      const streams = Object.entries(run.streams)
      // Credits the run spent beyond what it committed (a killed run's mark): a line of their own.
      const beyond = run.credits - streams.reduce((sum, [, figures]) => sum + figures.credits, 0)
      const all =
        beyond > 0 ? [...streams, ["(not committed)", { records: 0, credits: beyond }] as const] : streams
      const lines = all.length === 0 ? [["", { records: 0, credits: 0 }] as const] : all
      return lines.map(([stream, figures], index) => [
        run.run,
        run.startedAt,
        run.finishedAt,
        run.status,
        stream,
        figures.records,
        figures.credits,
        index === 0 ? (run.error ?? "") : "",
      ])
    }),
  )

/**
 * `salesintel status`: the latest runs as a table, or as JSON (an array of RunStatus). Given where
 * a config's credit allowance stands (`allowance`), a line above the table says it, and the JSON is
 * an object: `{"allowance": {...}, "runs": [...]}`.
 */
export const status = (
  schema: string,
  limit: number,
  options: { readonly json?: boolean; readonly allowance?: Allowance.Standing | undefined } = {},
) =>
  Effect.map(runs(schema, limit), (list) => {
    const { allowance } = options
    if (options.json === true)
      return `${JSON.stringify(allowance === undefined ? list : { allowance: Allowance.toJson(allowance), runs: list }, null, 2)}\n`
    return `${allowance === undefined ? "" : `${Allowance.describe(allowance)}\n`}${statusTable(list)}`
  })
