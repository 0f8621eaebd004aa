#!/usr/bin/env node
/**
 * salesintel: sync (the source into Postgres or embedded PGlite, in one process), sql (a query,
 * printed as a table), status (recent runs). Progress and log lines go to stderr; results to stdout.
 */
import { readFile } from "node:fs/promises"
import { Args, Command, Options } from "@effect/cli"
import { NodeContext, NodeRuntime } from "@effect/platform-node"
import { Target } from "@salesintel/postgres"
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
  },
  ({ config, databaseUrl, schema, pgliteDir, streams }) => {
    const target = Target.fromOptions(databaseUrl, pgliteDir)
    return reportFailure(
      Effect.gen(function* () {
        const json = yield* readConfig(config)
        const outcome = yield* Sync.sync({
          config: json,
          schema,
          streams: Option.getOrUndefined(Option.map(streams, (list) => list.split(",").map((s) => s.trim()))),
          progress: process.stderr,
        })
        yield* Console.log(Sync.describe(outcome, target.description).trimEnd())
        if (outcome.status === "failed") process.exitCode = 1
      }).pipe(Effect.provide(target.layer)),
    )
  },
).pipe(Command.withDescription("sync the configured streams into Postgres (or embedded PGlite)"))

const sql = Command.make(
  "sql",
  { statement: Args.text({ name: "statement" }), databaseUrl, schema, pgliteDir },
  ({ statement, databaseUrl, schema, pgliteDir }) =>
    reportFailure(
      Effect.flatMap(Query.sql(schema, statement), (table) => Console.log(table.trimEnd())).pipe(
        Effect.provide(Target.fromOptions(databaseUrl, pgliteDir).layer),
      ),
    ),
).pipe(Command.withDescription("run one SQL statement and print its result as a table"))

const status = Command.make(
  "status",
  { databaseUrl, schema, pgliteDir, limit: Options.integer("limit").pipe(Options.withDefault(10)) },
  ({ databaseUrl, schema, pgliteDir, limit }) =>
    reportFailure(
      Effect.flatMap(Query.status(schema, limit), (table) => Console.log(table.trimEnd())).pipe(
        Effect.provide(Target.fromOptions(databaseUrl, pgliteDir).layer),
      ),
    ),
).pipe(Command.withDescription("show the recent sync runs"))

const command = Command.make("salesintel").pipe(Command.withSubcommands([sync, sql, status]))

Command.run(command, { name: "salesintel", version: "0.1.0" })(process.argv).pipe(
  Effect.provide(Logger.replace(Logger.defaultLogger, Logger.prettyLogger({ stderr: true }))),
  Effect.provide(NodeContext.layer),
  NodeRuntime.runMain,
)
