#!/usr/bin/env node
/**
 * salesintel: sync (the source into Postgres or embedded PGlite, in one process), sql (a query,
 * printed as a table), status (recent runs). Progress and log lines go to stderr; results to stdout.
 * A sync is one run per target at a time (a second fails naming the holder, or waits with --wait);
 * SIGINT/SIGTERM stop it gracefully (what committed stays, run `interrupted`, exit 130/143), a
 * second signal exits at once.
 */
import { readFile } from "node:fs/promises"
import { Args, Command, Options } from "@effect/cli"
// Not the package index: it loads the HTTP server and, with it, ~20 MB of API docs pages.
import * as NodeContext from "@effect/platform-node/NodeContext"
import { RunLifecycle, StopSignal, Target } from "@salesintel/postgres"
import { Console, Effect, Logger, Option } from "effect"
import * as Query from "./Query.ts"
import * as Sync from "./Sync.ts"

const { databaseUrl, pgliteDir, schema } = Target.options

/** Any failure: its message on stderr and exit code 1 (never a stack trace for a user error). */
const reportFailure = <A, E extends { readonly message: string }, R>(effect: Effect.Effect<A, E, R>) =>
  Effect.catchAll(effect, (error) =>
    Effect.sync(() => {
      process.stderr.write(`salesintel: ${error.message}\n`)
      process.exitCode = 1
    }),
  )

const readConfig = (path: string) =>
  Effect.tryPromise({
    try: async (): Promise<unknown> => JSON.parse(await readFile(path, "utf8")),
    catch: (error) =>
      new Sync.SyncConfigError({
        description: `cannot read the config file ${path}: ${error instanceof Error ? error.message : String(error)}`,
      }),
  })

const sync = Command.make(
  "sync",
  {
    config: Options.file("config").pipe(Options.withDescription("the source's JSON config")),
    databaseUrl,
    schema,
    pgliteDir,
    streams: Options.text("streams").pipe(
      Options.optional,
      Options.withDescription("comma-separated streams to sync (default: all)"),
    ),
    resetState: Options.text("reset-state").pipe(
      Options.repeated,
      Options.withDescription(
        "delete this stream's saved state first, so it starts afresh (repeatable, or a comma list)",
      ),
    ),
    wait: Target.waitOption,
  },
  ({ config, databaseUrl, schema, pgliteDir, streams, resetState, wait }) => {
    const lock = { owner: "salesintel sync", wait: { wait } }
    const target = Target.fromOptions(databaseUrl, pgliteDir, lock)
    const list = (text: string) =>
      text
        .split(",")
        .map((s) => s.trim())
        .filter((s) => s.length > 0)
    return reportFailure(
      Effect.gen(function* () {
        const json = yield* readConfig(config)
        const stop = yield* StopSignal.listen
        const outcome = yield* Sync.sync({
          config: json,
          schema,
          streams: Option.getOrUndefined(Option.map(streams, list)),
          resetState: resetState.flatMap(list),
          progress: process.stderr,
          stop,
          lock,
        }).pipe(
          // A --wait for PGlite's directory lock ends on a signal too.
          Effect.provide(
            Target.fromOptions(databaseUrl, pgliteDir, RunLifecycle.stoppable(lock, stop)).layer,
          ),
        )
        yield* Console.log(Sync.describe(outcome, target.description).trimEnd())
        if (outcome.signal !== undefined) process.exitCode = StopSignal.exitCode(outcome.signal)
        else if (outcome.status === "failed") process.exitCode = 1
      }).pipe(Effect.scoped),
    )
  },
).pipe(Command.withDescription("sync the configured streams into Postgres (or embedded PGlite)"))

const sql = Command.make(
  "sql",
  { statement: Args.text({ name: "statement" }), databaseUrl, schema, pgliteDir },
  ({ statement, databaseUrl, schema, pgliteDir }) =>
    reportFailure(
      Effect.flatMap(Query.sql(schema, statement), (table) => Console.log(table.trimEnd())).pipe(
        Effect.provide(Target.fromOptions(databaseUrl, pgliteDir, { owner: "salesintel sql" }).layer),
      ),
    ),
).pipe(Command.withDescription("run one SQL statement and print its result as a table"))

const status = Command.make(
  "status",
  { databaseUrl, schema, pgliteDir, limit: Options.integer("limit").pipe(Options.withDefault(10)) },
  ({ databaseUrl, schema, pgliteDir, limit }) =>
    reportFailure(
      Effect.flatMap(Query.status(schema, limit), (table) => Console.log(table.trimEnd())).pipe(
        Effect.provide(Target.fromOptions(databaseUrl, pgliteDir, { owner: "salesintel status" }).layer),
      ),
    ),
).pipe(Command.withDescription("show the recent sync runs"))

const command = Command.make("salesintel").pipe(Command.withSubcommands([sync, sql, status]))

Command.run(command, { name: "salesintel", version: "0.1.0" })(process.argv).pipe(
  Effect.provide(Logger.replace(Logger.defaultLogger, Logger.prettyLogger({ stderr: true }))),
  Effect.provide(NodeContext.layer),
  // Signals are the sync's (StopSignal), not the runtime's: the runtime would cut the run short.
  StopSignal.runMain,
)
