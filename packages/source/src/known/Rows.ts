/**
 * Rows of known records (contacts to enrich, company domains and names) from where a team keeps
 * them: a CSV or NDJSON file (File.ts), or a SQL query run on the target's database. The query
 * needs a database, which only `salesintel sync` has: it provides `QueryRows` (the source on its
 * own, in an Airbyte pipe, has none, and a config with a query is refused at check and read).
 *
 * Every source of rows is read twice: once to check every row (`checked`), before the first
 * credit, so a bad row 90,000 lines down refuses the run with nothing bought; then as the read
 * goes, a chunk at a time, so no source is ever held whole.
 */
import * as Context from "effect/Context"
import * as Data from "effect/Data"
import * as Effect from "effect/Effect"
import * as Either from "effect/Either"
import * as Option from "effect/Option"
import * as Stream from "effect/Stream"

/** A file or query of known records that cannot be read, or holds rows that are not what was expected. */
export class KnownInputError extends Data.TaggedError("KnownInputError")<{
  readonly description: string
}> {
  override get message(): string {
    return this.description
  }
}

/**
 * One row: where it is (`file.csv:12`, `query row 12`) and its fields by name, blanks as
 * undefined; or, for a line that does not parse, what was wrong with it.
 */
export interface Row {
  readonly where: string
  readonly fields: Readonly<Record<string, string | undefined>>
  readonly problem?: string | undefined
}

/** A row's fields decoded by `decode`, once the row parsed and names none but `allowed`. */
export const decodeRow =
  <A>(allowed: ReadonlyArray<string>, decode: (fields: Row["fields"]) => Either.Either<A, string>) =>
  (row: Row): Either.Either<A, string> => {
    if (row.problem !== undefined) return Either.left(row.problem)
    const unknown = Object.keys(row.fields).filter((name) => !allowed.includes(name))
    if (unknown.length > 0)
      return Either.left(
        `${unknown.map((name) => `"${name}"`).join(", ")} ${unknown.length === 1 ? "is not a field" : "are not fields"} here; expected ${allowed.join(", ")}`,
      )
    return decode(row.fields)
  }

export interface QueryRowsService {
  /** The query's rows, a page at a time, its column names as the fields' names. */
  readonly rows: (sql: string) => Stream.Stream<Row, KnownInputError>
}

export class QueryRows extends Context.Tag("@salesintel/source/QueryRows")<QueryRows, QueryRowsService>() {}

/** Why a config with a query cannot be read where there is no database (the Airbyte pipe). */
export const noDatabase = (field: string) =>
  `${field} runs a SQL query on the target's database, which only \`salesintel sync\` has; the source alone (an Airbyte pipe) cannot run it: give the rows as a file (contacts.known_file, companies.domains_file) instead`

/** A query's rows, from the database `salesintel sync` provides; refused where there is none. */
export const queryRows = (field: string, sql: string): Stream.Stream<Row, KnownInputError> =>
  Stream.unwrap(
    Effect.map(Effect.serviceOption(QueryRows), (service) =>
      Option.isSome(service)
        ? Stream.map(service.value.rows(sql), (row) => ({ ...row, where: `${field} ${row.where}` }))
        : Stream.fail(new KnownInputError({ description: noDatabase(field) })),
    ),
  )

/** The first rows named in a refusal; the rest are counted. */
const named = 20

/** Rows checked so far: all, those `counts` counts, the bad, and the first bad ones named. */
interface Checked {
  readonly count: number
  readonly counted: number
  readonly bad: number
  readonly lines: ReadonlyArray<string>
}

const nothingChecked: Checked = { count: 0, counted: 0, bad: 0, lines: [] }

/** Rows decoded at a time, and those of them counted in one call (a lookup each, when it asks a database). */
const checkedChunk = 500

/**
 * Every row of `rows` decoded with `decode`, before anything is bought: the source refused whole,
 * each bad row named by where it is and what was expected of it (the first 20, then a count).
 * `counts` says how many of a chunk's decoded values count (e.g. those due a lookup): it may ask
 * the destination's ledger, a chunk at a time.
 */
export const checked = <A, E = never>(
  what: string,
  rows: Stream.Stream<Row, KnownInputError>,
  decode: (row: Row) => Either.Either<A, string>,
  counts: (values: ReadonlyArray<A>) => Effect.Effect<number, E>,
): Effect.Effect<number, KnownInputError | E> =>
  Effect.flatMap(
    Stream.runFoldEffect(
      Stream.rechunk(rows, checkedChunk).pipe(Stream.chunks),
      nothingChecked,
      (acc, chunk) => {
        let next = acc
        const decodedValues: Array<A> = []
        for (const row of chunk) {
          const decoded = decode(row)
          next = { ...next, count: next.count + 1 }
          if (Either.isRight(decoded)) decodedValues.push(decoded.right)
          else
            next = {
              ...next,
              bad: next.bad + 1,
              lines:
                next.lines.length < named ? [...next.lines, `${row.where}: ${decoded.left}`] : next.lines,
            }
        }
        // Once a row is bad nothing is bought: the rest are only decoded, to name them.
        if (next.bad > 0) return Effect.succeed(next)
        return Effect.map(
          counts(decodedValues),
          (counted): Checked => ({ ...next, counted: next.counted + counted }),
        )
      },
    ),
    ({ count, counted, bad, lines }) =>
      bad === 0
        ? Effect.succeed(counted)
        : Effect.fail(
            new KnownInputError({
              description: `${what}: ${bad} of ${count} rows are refused, so nothing was bought: ${lines.join("; ")}${bad > lines.length ? ` (and ${bad - lines.length} more)` : ""}`,
            }),
          ),
  )
