/**
 * salesintel: sync (the source into Postgres or embedded PGlite, in one process), sql (queries,
 * as a table, CSV or JSON), status (recent runs, per stream). Progress and log lines go to stderr;
 * results to stdout. A sync is one run per target at a time (a second fails naming the holder, or
 * waits with --wait); SIGINT/SIGTERM stop it gracefully (what committed stays, run `interrupted`,
 * exit 130/143), a second signal exits at once. Help, usage errors (exit 2) and the options every
 * command takes are CommandLine's: a new command is one more entry in `commands` below. `main` is
 * the whole command on an Io (arguments, environment, streams, exit code): bin.ts runs it on the
 * process, tests in process.
 */
import { Args, HelpDoc, Options } from "@effect/cli"
import { Streams } from "@salesintel/airbyte"
import { CommandLine } from "@salesintel/command-line"
import { Runs, Target } from "@salesintel/postgres"
import * as Console from "effect/Console"
import * as Effect from "effect/Effect"
import * as FiberRef from "effect/FiberRef"
import * as Option from "effect/Option"
import * as ConfigFile from "./ConfigFile.ts"
import * as Forget from "./Forget.ts"
import * as PeriodSpending from "./PeriodSpending.ts"
import * as Plan from "./Plan.ts"
import * as Query from "./Query.ts"
import * as Report from "./Report.ts"
import * as Statements from "./Statements.ts"
import * as Sync from "./Sync.ts"
import * as TargetNote from "./TargetNote.ts"

const { databaseUrl, pgliteDir, schema } = Target.options
const targetFlags = { databaseUrl, pgliteDir, schema }

/** Any failure: its message on stderr and exit code 1 (never a stack trace for a user error). */
const reportFailure = <A, E extends { readonly message: string }, R>(effect: Effect.Effect<A, E, R>) =>
  Effect.catchAll(effect, (error) =>
    Effect.zipRight(CommandLine.writeStderr(`salesintel: ${error.message}\n`), CommandLine.setExitCode(1)),
  )

const readConfig = (path: string) =>
  Effect.mapError(ConfigFile.load(path), (description) => new Sync.SyncConfigError({ description }))

/** A comma-separated list, repeatable: `--x a,b --x c`. */
const list = (texts: ReadonlyArray<string>) =>
  texts.flatMap((text) =>
    text
      .split(",")
      .map((s) => s.trim())
      .filter((s) => s.length > 0),
  )

const streamNames = Streams.names.join(", ")

const sync = CommandLine.command(
  {
    name: "sync",
    summary: "sync the configured streams into Postgres (or embedded PGlite)",
    description: [
      "Reads the source with the config and loads what it buys, in one process and one run. Incremental wherever a stream supports it: the state saved with the data means the next sync buys only what is new (or older than refresh_after_days). The config is checked before anything is opened: an invalid one creates no database. Progress and the source's log lines go to stderr, the outcome per stream to stdout.",
      "One sync at a time per target (a second fails naming the holder, or waits with --wait). SIGINT or SIGTERM stops it gracefully: what is in flight lands and commits, the run is recorded `interrupted` and the next sync resumes from its last checkpoint. A run that ends at its credit_budget says `sync stopped at the budget`, is recorded `stopped_at_budget` and exits 0 (the rest is due on the next sync); stopped at the budget or by a signal, it says the credits left as `salesintel plan` counts them. With a credit_allowance in the config, a run spends at most what the period (a UTC day, week or month) has left, counted from the target's runs (killed ones included); one the allowance stops ends the same way and says when it renews. A full refresh says how many rows it deleted.",
    ],
    examples: [
      "salesintel sync --config my-config.json",
      "salesintel sync --config my-config.json --database-url postgres://me@localhost/warehouse --streams contacts",
      "salesintel sync --config my-config.json --full-refresh companies",
    ],
  },
  {
    config: CommandLine.flag(Options.file("config"), {
      name: "--config FILE",
      text: "the source's JSON config: api_key (or api_key_file, a file holding the key; else $SALESINTEL_API_KEY), credit_budget and what to read (see docs/configuration.md)",
    }),
    ...targetFlags,
    streams: CommandLine.flag(Options.text("streams").pipe(Options.repeated), {
      name: "--streams LIST",
      text: `the streams to sync, comma-separated or repeated (${streamNames})`,
      default: "every stream the config has something for",
    }),
    fullRefresh: CommandLine.flag(Options.text("full-refresh").pipe(Options.repeated), {
      name: "--full-refresh LIST",
      text: "read these streams in full this run instead of incrementally, and once each completes delete its rows from earlier syncs (overwrite). This BUYS EVERY RECORD AGAIN, within credit_budget: name each stream, on each run you want it. Their state is kept: an interrupted full refresh resumes, and the next plain sync stays incremental",
    }),
    resetState: CommandLine.flag(Options.text("reset-state").pipe(Options.repeated), {
      name: "--reset-state LIST",
      text: "delete these streams' saved state first, so they start afresh (and re-buy) but keep their rows",
    }),
    wait: Target.waitOption,
  },
  ({ config, databaseUrl, schema, pgliteDir, streams, fullRefresh, resetState, wait }) =>
    reportFailure(
      Effect.gen(function* () {
        const io = yield* CommandLine.Io
        const lock = { owner: "salesintel sync", wait: { wait }, lease: "respect" } as const
        const target = Target.fromOptions(io, databaseUrl, pgliteDir, lock)
        const logFormat = yield* FiberRef.get(CommandLine.currentLogFormat)
        const stop = yield* Runs.StopSignal.listen
        const { config: configJson, keySource } = yield* readConfig(config)
        const options: Sync.SyncOptions = {
          config: configJson,
          keySource,
          schema,
          streams: streams.length > 0 ? list(streams) : undefined,
          fullRefresh: list(fullRefresh),
          resetState: list(resetState),
          // With --log-format json every line on stderr is a JSON object, progress lines included.
          progress: logFormat === "json" ? CommandLine.jsonLines(io.stderr, "progress") : io.stderr,
          logFormat,
          stop,
          lock,
          reconnect: target.reconnect,
          creditsAheadFile:
            target.pgliteDirectory === undefined
              ? undefined
              : Runs.CreditsAhead.fileFor(target.pgliteDirectory, schema),
        }
        // Before the database is opened: an invalid config, or a key the provider refuses, must
        // not create one.
        yield* Sync.check(options)
        yield* Sync.checkProvider(options.config, keySource)
        const unnamed = TargetNote.unnamed({ databaseUrl, pgliteDir, env: io.env }, "writing to")
        if (unnamed !== undefined) yield* CommandLine.logLine("INFO", unnamed, unnamed)
        const outcome = yield* Sync.sync(options).pipe(
          // A --wait for PGlite's directory lock ends on a signal too.
          Effect.provide(
            Target.fromOptions(io, databaseUrl, pgliteDir, Runs.Lifecycle.stoppable(lock, stop)).layer,
          ),
        )
        yield* Console.log(Sync.describe(outcome, target.description).trimEnd())
        if (outcome.signal !== undefined)
          yield* CommandLine.setExitCode(Runs.StopSignal.exitCode(outcome.signal))
        else if (outcome.status === "failed") yield* CommandLine.setExitCode(1)
      }).pipe(Effect.scoped),
    ),
)

/** The lock of a command that only reads: it opens no database it would create, and waits with --wait. */
const existing = (owner: string, wait: boolean) => ({ owner, existing: true, wait: { wait } })

const sql = CommandLine.command(
  {
    name: "sql",
    summary: "run SQL on the synced tables and print the results (table, CSV or JSON)",
    description: [
      "Runs each statement of SQL in turn (separate them with semicolons), with the schema first on the search path, so `contacts` means `salesintel.contacts`. Values are never cut unless --max-width is given; NULL is shown as NULL and the empty string as nothing. The database must exist: a missing PGlite directory or schema is reported, and nothing is created.",
      "Read-only unless --write: the tables are the record of what was bought, and a row deleted by hand is bought again by the next sync that meets it. A statement the database refuses is printed as psql prints it (ERROR, the line with a caret under the position, DETAIL, HINT), exit 1. psql's \\d (the schema's relations), \\dt (tables), \\dv (views) and \\d NAME (a table's or view's columns) work too, each on a line of its own or ended by a semicolon.",
    ],
    examples: [
      `salesintel sql "SELECT * FROM contacts_by_department_level ORDER BY contacts DESC"`,
      `salesintel sql --format csv "SELECT * FROM contacts" > contacts.csv`,
      `salesintel sql --format json "SELECT count(*) FROM contacts; SELECT count(*) FROM companies"`,
      `salesintel sql '\\d contacts'`,
      `salesintel sql --write "DELETE FROM contacts WHERE email = 'left@example.com'"`,
    ],
  },
  {
    statement: CommandLine.flag(
      Args.text({ name: "sql" }).pipe(
        // An option the parser did not know lands here as the statement: say so, not run it.
        Args.mapEffect((text) => {
          if (/^--?[A-Za-z][\w-]*(=\S*)?$/.test(text))
            return Effect.fail(HelpDoc.p(`unknown option ${text.split("=")[0]}`))
          // Nothing to run is a mistake in the command line, not a success that prints nothing.
          if (Statements.split(text).length === 0)
            return Effect.fail(HelpDoc.p("SQL: expected one or more statements, got none"))
          return Effect.succeed(text)
        }),
      ),
      {
        name: "SQL",
        text: "one or more SQL statements, separated by semicolons (quote it for the shell)",
      },
    ),
    ...targetFlags,
    wait: Target.waitOption,
    format: CommandLine.flag(
      CommandLine.choice("format", ["table", "csv", "json"]).pipe(Options.withDefault("table")),
      {
        name: "--format FORMAT",
        text: "table (aligned, for people), csv (RFC 4180, a header line; NULL an empty field, '' a quoted one) or json (an array of row objects per statement, one per line)",
        default: "table",
      },
    ),
    maxWidth: CommandLine.flag(
      CommandLine.wholeNumber("max-width", 2, "a width in characters").pipe(Options.optional),
      {
        name: "--max-width N",
        text: "table format: cut values longer than N characters (with …)",
        default: "never cut",
      },
    ),
    write: CommandLine.flag(Options.boolean("write"), {
      name: "--write",
      text: "let the statements change data (INSERT, UPDATE, DELETE, DDL); without it every transaction is READ ONLY. A row deleted here is bought again by the next sync that meets it",
    }),
  },
  ({ statement, databaseUrl, schema, pgliteDir, wait, format, maxWidth, write }) =>
    reportFailure(
      Effect.flatMap(CommandLine.Io, (io) =>
        Query.sqlEach(
          schema,
          statement,
          { format, maxWidth: Option.getOrUndefined(maxWidth), write },
          (output) => Effect.sync(() => io.stdout.write(output)),
        ).pipe(
          Effect.provide(
            Target.fromOptions(io, databaseUrl, pgliteDir, existing("salesintel sql", wait)).layer,
          ),
        ),
      ),
    ),
)

const status = CommandLine.command(
  {
    name: "status",
    summary: "show the recent sync runs: status, and records and credits per stream",
    description: [
      "One line per run and stream, the newest run (the highest number) first: when the run started and finished, how it ended (succeeded, stopped_at_budget: it ended at its credit budget and the rest is due on the next sync; failed, interrupted, abandoned, or running), and the records and credits it committed for each stream; a run killed without warning shows the credits it spent beyond its commits on a line `(not committed)`. The database must exist: nothing is created.",
    ],
    examples: [
      "salesintel status",
      "salesintel status --limit 3 --json",
      "salesintel status --config my-config.json",
    ],
  },
  {
    ...targetFlags,
    wait: Target.waitOption,
    limit: CommandLine.flag(
      CommandLine.wholeNumber("limit", 1, "how many runs").pipe(Options.withDefault(10)),
      {
        name: "--limit N",
        text: "how many runs to show, newest first",
        default: "10",
      },
    ),
    json: CommandLine.flag(Options.boolean("json"), {
      name: "--json",
      text: "print the runs as a JSON array (run, status, startedAt, finishedAt, records, credits, streams: {name: {records, credits}}, error); with --config, an object {allowance, runs}",
    }),
    config: CommandLine.flag(Options.file("config").pipe(Options.optional), {
      name: "--config FILE",
      text: "the sync's config: with a credit_allowance, say what this period spent (every run started in it, killed ones included), what is left and when it renews",
      default: "none",
    }),
  },
  ({ databaseUrl, schema, pgliteDir, wait, limit, json, config }) =>
    reportFailure(
      Effect.flatMap(CommandLine.Io, (io) =>
        Effect.gen(function* () {
          const configJson = Option.isSome(config) ? (yield* readConfig(config.value)).config : undefined
          const allowance =
            configJson === undefined
              ? undefined
              : yield* PeriodSpending.standing(configJson, schema, Date.now())
          return yield* CommandLine.writeStdout(yield* Query.status(schema, limit, { json, allowance }))
        }).pipe(
          Effect.provide(
            Target.fromOptions(io, databaseUrl, pgliteDir, existing("salesintel status", wait)).layer,
          ),
        ),
      ),
    ),
)

/** The commands of `salesintel`. */
export const program = {
  name: "salesintel",
  version: "0.1.0",
  summary: "sync SalesIntel contacts, technographics and the taxonomy into Postgres",
  description: [
    "Without --database-url (or DATABASE_URL) the data goes to embedded PGlite in ./.salesintel/pglite: nothing to set up. Results go to stdout; progress, logs and errors to stderr. Exit codes: 0 done (a sync stopped at its credit budget too: its status, stopped_at_budget, tells it from a complete one), 1 failed, 2 a usage error, 130/143 stopped by SIGINT/SIGTERM.",
  ],
  commands: [sync, Plan.command, sql, status, Report.command, Forget.command],
  examples: [
    "salesintel sync --config my-config.json",
    `salesintel sql "SELECT product, companies FROM technology_adoption_by_product ORDER BY companies DESC LIMIT 10"`,
    "salesintel plan --config my-config.json",
    "salesintel status",
    "salesintel report --out report.html",
  ],
} as const

/** `salesintel` on the Io. */
export const main = CommandLine.run(program)
