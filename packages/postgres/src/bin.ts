#!/usr/bin/env node
/**
 * salesintel-pg load [--database-url URL] [--schema S] [--catalog F] [--pglite-dir D] [--batch-size N] [--wait]
 *   reads Airbyte messages (JSON lines) from stdin and loads them. Without --database-url (or
 *   DATABASE_URL) it uses embedded PGlite in --pglite-dir (default ./.salesintel/pglite).
 *   stdout: each STATE message once it has committed with its data, as one JSON line (what an
 *   Airbyte destination emits), and nothing else. stderr: the input's LOG and TRACE messages, and
 *   the summary. Each load is recorded in _sync_runs. One load at a time per target: a second fails
 *   at once naming the holder, or waits with --wait. Exits 1 on failure, after a TRACE error, or
 *   when an overwrite stream did not complete; on SIGINT/SIGTERM it stops reading, keeps what
 *   committed up to the last STATE, records the run interrupted and exits 130/143.
 * salesintel-pg state [...same database options]
 *   prints the saved state as a JSON array, the source's --state input.
 */
import { readFile } from "node:fs/promises"
import { Command, Options } from "@effect/cli"
// Not the package index: it loads the HTTP server and, with it, ~20 MB of API docs pages.
import * as NodeContext from "@effect/platform-node/NodeContext"
import { Catalog, type Message, Ndjson } from "@salesintel/airbyte"
import { Effect, Either, Logger, Option } from "effect"
import { loadRun } from "./LoadRun.ts"
import * as RunLifecycle from "./RunLifecycle.ts"
import * as State from "./State.ts"
import * as StopSignal from "./StopSignal.ts"
import * as Target from "./Target.ts"

const { databaseUrl, pgliteDir, schema } = Target.options

const stderr = (line: string) => Effect.sync(() => process.stderr.write(`${line}\n`))

const syncModesFrom = (path: string) =>
  Effect.tryPromise({
    try: async (): Promise<unknown> => JSON.parse(await readFile(path, "utf8")),
    catch: (error) => new Error(`cannot read the catalog file ${path}: ${String(error)}`),
  }).pipe(
    Effect.flatMap((json) =>
      Either.match(Catalog.decodeConfigured(json), {
        onLeft: (message) => Effect.fail(new Error(message)),
        onRight: (catalog) => Effect.succeed(Catalog.destinationSyncModes(catalog)),
      }),
    ),
  )

const printSourceMessage = (message: Message.LogMessage | Message.TraceErrorMessage) =>
  message.type === "LOG"
    ? stderr(`[source ${message.log.level}] ${message.log.message}`)
    : stderr(`[source TRACE ${message.trace.error.failure_type}] ${message.trace.error.message}`)

const load = Command.make(
  "load",
  {
    databaseUrl,
    pgliteDir,
    schema,
    catalog: Options.file("catalog").pipe(
      Options.optional,
      Options.withDescription("the configured catalog: each stream's destination_sync_mode"),
    ),
    batchSize: Options.integer("batch-size").pipe(
      Options.withDefault(5_000),
      Options.withDescription("messages per batch (a batch also closes after one second)"),
    ),
    wait: Target.waitOption,
  },
  ({ databaseUrl, pgliteDir, schema, catalog, batchSize, wait }) => {
    const lock = { owner: "salesintel-pg load", wait: { wait } }
    return Effect.gen(function* () {
      const syncModes = Option.isSome(catalog) ? yield* syncModesFrom(catalog.value) : undefined
      const stop = yield* StopSignal.listen
      const outcome = yield* loadRun(process.stdin, {
        schema,
        syncModes,
        batchSize,
        stop,
        lock,
        onSourceMessage: printSourceMessage,
        onStateCommitted: (message) => Effect.sync(() => process.stdout.write(Ndjson.serialize(message))),
      }).pipe(
        // A --wait for PGlite's directory lock ends on a signal too.
        Effect.provide(Target.fromOptions(databaseUrl, pgliteDir, RunLifecycle.stoppable(lock, stop)).layer),
      )
      const { runId, summary, status, error, signal, abandoned } = outcome
      yield* stderr(
        JSON.stringify({
          run: runId,
          status,
          ...summary,
          sourceErrors: summary.sourceErrors.length,
          ...(abandoned.length > 0 ? { abandoned } : {}),
          ...(error === undefined ? {} : { error }),
        }),
      )
      if (signal !== undefined) process.exitCode = StopSignal.exitCode(signal)
      else if (status === "failed") process.exitCode = 1
    }).pipe(Effect.scoped)
  },
).pipe(Command.withDescription("load Airbyte messages (JSON lines on stdin) into the schema's tables"))

const state = Command.make(
  "state",
  { databaseUrl, pgliteDir, schema },
  ({ databaseUrl, pgliteDir, schema }) =>
    State.read(schema).pipe(
      Effect.flatMap((entries) => Effect.sync(() => process.stdout.write(`${JSON.stringify(entries)}\n`))),
      Effect.provide(Target.fromOptions(databaseUrl, pgliteDir, { owner: "salesintel-pg state" }).layer),
    ),
).pipe(Command.withDescription("print the saved state as the source's --state input (a JSON array)"))

const command = Command.make("salesintel-pg").pipe(Command.withSubcommands([load, state]))

Command.run(command, { name: "salesintel-pg", version: "0.1.0" })(process.argv).pipe(
  Effect.tapError((error) =>
    stderr(`salesintel-pg: ${error instanceof Error ? error.message : String(error)}`),
  ),
  // stdout carries only committed STATE messages: Effect's own logs go to stderr.
  Effect.provide(Logger.replace(Logger.defaultLogger, Logger.prettyLogger({ stderr: true }))),
  Effect.provide(NodeContext.layer),
  // An input pipe still open (a source writing into a load that was refused) must not keep the
  // process alive once the command is done.
  Effect.ensuring(Effect.sync(() => process.stdin.destroy())),
  // Reported above; signals are the run's (StopSignal), not the runtime's.
  Effect.catchAll(() =>
    Effect.sync(() => {
      process.exitCode = process.exitCode || 1
    }),
  ),
  StopSignal.runMain,
)
