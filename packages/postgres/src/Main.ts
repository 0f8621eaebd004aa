/**
 * salesintel-pg load [--database-url URL] [--schema S] [--catalog F] [--pglite-dir D] [--batch-size N] [--wait]
 *   reads Airbyte messages (JSON lines) from stdin and loads them. Without --database-url (or
 *   DATABASE_URL) it uses embedded PGlite in --pglite-dir (default ./.salesintel/pglite).
 *   stdout: each STATE message once it has committed with its data, as one JSON line (what an
 *   Airbyte destination emits), and nothing else; on a terminal only their count. stderr: the input's LOG and TRACE messages, and
 *   the summary. Each load is recorded in _sync_runs. One load at a time per target: a second fails
 *   at once naming the holder, or waits with --wait. Exits 1 on failure, after a TRACE error,
 *   when an overwrite stream did not complete, or on an empty input (no message at all: a source
 *   not connected is not a success); on SIGINT/SIGTERM it stops reading, keeps what
 *   committed up to the last STATE, records the run interrupted and exits 130/143.
 * salesintel-pg state [...same database options]
 *   prints the saved state as a JSON array, the source's --state input.
 *
 * `main` is the whole command on an Io (arguments, environment, streams, exit code): bin.ts runs
 * it on the process, tests in process.
 */
import { Options } from "@effect/cli"
import { Catalog, type Message, Ndjson } from "@salesintel/airbyte"
import { CommandLine, JsonFile } from "@salesintel/command-line"
import * as Effect from "effect/Effect"
import * as Either from "effect/Either"
import * as Option from "effect/Option"
import { loadRun } from "./LoadRun.ts"
import * as Lease from "./runs/Lease.ts"
import * as RunLifecycle from "./runs/RunLifecycle.ts"
import * as StateExport from "./runs/StateExport.ts"
import * as StopSignal from "./runs/StopSignal.ts"
import * as Target from "./Target.ts"

const { databaseUrl, pgliteDir, schema } = Target.options

const syncModesFrom = (io: CommandLine.IoService, path: string) =>
  Effect.mapError(JsonFile.read(path, "catalog", io.cwd), (description) => new Error(description)).pipe(
    Effect.flatMap((json) =>
      Either.match(Either.flatMap(Catalog.decodeConfigured(json), Catalog.loaderModes), {
        onLeft: (message) => Effect.fail(new Error(message)),
        onRight: (modes) => Effect.succeed(modes),
      }),
    ),
  )

const printSourceMessage = (message: Message.LogMessage | Message.TraceErrorMessage) =>
  message.type === "LOG"
    ? CommandLine.logLine(
        message.log.level,
        message.log.message,
        `[source ${message.log.level}] ${message.log.message}`,
        {
          from: "source",
        },
      )
    : CommandLine.logLine(
        "ERROR",
        message.trace.error.message,
        `[source TRACE ${message.trace.error.failure_type}] ${message.trace.error.message}`,
        { from: "source", failure_type: message.trace.error.failure_type },
      )

const targetFlags = { databaseUrl, pgliteDir, schema }

const load = CommandLine.command(
  {
    name: "load",
    summary: "load Airbyte messages (JSON lines on stdin) into the schema's tables",
    description: [
      "Reads RECORD, STATE, LOG and TRACE messages from stdin and loads each stream into its typed table, committing each STATE with the data before it. When stdout is not a terminal (a pipe, a file: the protocol's consumers), each committed STATE message is written to it as one JSON line, as an Airbyte destination does; on a terminal only a count is shown. The input's LOG and TRACE messages and the run's summary go to stderr.",
      "Each load is one run in _sync_runs; one load at a time per target (a second fails naming the holder, or waits with --wait). Exit code 1 on failure, after a TRACE error, when an overwrite stream did not complete, or when the input held no message at all (recorded failed: an empty input is never a success); on SIGINT/SIGTERM it stops reading, keeps what committed and exits 130/143.",
    ],
    examples: [
      "source-salesintel read --config c.json --catalog cat.json | salesintel-pg load --catalog cat.json",
      "salesintel-pg load --database-url postgres://me@localhost/warehouse --schema sales < messages.jsonl",
    ],
  },
  {
    ...targetFlags,
    catalog: CommandLine.flag(Options.file("catalog").pipe(Options.optional), {
      name: "--catalog FILE",
      text: "the configured catalog, for each stream's destination_sync_mode (overwrite, append, append_dedup)",
      default: "append_dedup for every stream",
    }),
    batchSize: CommandLine.flag(
      CommandLine.wholeNumber("batch-size", 1, "messages a batch").pipe(Options.withDefault(5_000)),
      {
        name: "--batch-size N",
        text: "messages per batch (a batch also closes after one second)",
        default: "5000",
      },
    ),
    wait: Target.waitOption,
  },
  ({ databaseUrl, pgliteDir, schema, catalog, batchSize, wait }) => {
    const lock = { owner: "salesintel-pg load", wait: { wait }, lease: "consume" } as const
    return Effect.gen(function* () {
      const io = yield* CommandLine.Io
      // STATE messages are for the protocol's consumers; a person at a terminal gets their count.
      const echoStates = io.stdout.isTTY !== true
      const syncModes = Option.isSome(catalog) ? yield* syncModesFrom(io, catalog.value) : undefined
      const stop = yield* StopSignal.listen
      const outcome = yield* loadRun(io.stdin, {
        schema,
        syncModes,
        batchSize,
        stop,
        lock,
        onSourceMessage: (message) => Effect.provideService(printSourceMessage(message), CommandLine.Io, io),
        onNotice: (line) =>
          Effect.provideService(CommandLine.logLine("WARN", line, line, {}), CommandLine.Io, io),
        onStateCommitted: (message) =>
          Effect.sync(() => {
            if (echoStates) io.stdout.write(Ndjson.serialize(message))
          }),
      }).pipe(
        // A --wait for PGlite's directory lock ends on a signal too.
        Effect.provide(
          Target.fromOptions(io, databaseUrl, pgliteDir, RunLifecycle.stoppable(lock, stop)).layer,
        ),
      )
      const { runId, summary, status, error, signal, abandoned } = outcome
      yield* CommandLine.writeStderr(
        `${JSON.stringify({
          run: runId,
          status,
          ...summary,
          sourceErrors: summary.sourceErrors.length,
          ...(abandoned.length > 0 ? { abandoned } : {}),
          ...(error === undefined ? {} : { error }),
        })}\n`,
      )
      if (!echoStates)
        yield* CommandLine.writeStdout(
          `load ${status} (run ${runId}): ${Object.values(summary.streams).reduce((sum, s) => sum + s.records, 0)} records, ${summary.statesCommitted} STATE messages committed (not echoed: stdout is a terminal)\n`,
        )
      if (signal !== undefined) yield* CommandLine.setExitCode(StopSignal.exitCode(signal))
      else if (status === "failed") yield* CommandLine.setExitCode(1)
    }).pipe(Effect.scoped)
  },
)

const leaseMinutes = CommandLine.flag(
  CommandLine.wholeNumber("lease-minutes", 0, "minutes").pipe(Options.withDefault(Lease.defaultMinutes)),
  {
    name: "--lease-minutes N",
    text: "reserve the target for the load of this state: until a `salesintel-pg load` begins on it, or N minutes, a sync or another export fails (or waits with --wait) instead of buying what this state's pipe buys; 0 reserves nothing (a look at the state)",
    default: String(Lease.defaultMinutes),
  },
)

const state = CommandLine.command(
  {
    name: "state",
    summary: "print the saved state as the source's --state input (a JSON array)",
    description: [
      "Under the target's lock (a run under way makes it fail at once, or wait with --wait), it prints what the last run committed, and reserves the target for the load of the pipe this state is for (--lease-minutes), so that a sync or a second pipe cannot buy the same records meanwhile.",
    ],
    examples: [
      "salesintel-pg state --database-url postgres://me@localhost/warehouse > state.json",
      "source-salesintel read --config c.json --catalog cat.json --state state.json | salesintel-pg load",
      "salesintel-pg state --lease-minutes 0   # only look: reserve nothing",
    ],
  },
  { ...targetFlags, wait: Target.waitOption, leaseMinutes },
  ({ databaseUrl, pgliteDir, schema, wait, leaseMinutes }) =>
    Effect.flatMap(CommandLine.Io, (io) => {
      // It reads what a load or sync saved: a PGlite directory without a database is not created.
      const target = Target.fromOptions(io, databaseUrl, pgliteDir, {
        owner: StateExport.owner,
        wait: { wait },
        lease: "respect",
        existing: true,
      })
      return StateExport.exportState({
        schema,
        pgliteDirectory: target.pgliteDirectory,
        wait: { wait },
        leaseMinutes,
      }).pipe(
        Effect.flatMap((entries) => CommandLine.writeStdout(`${JSON.stringify(entries)}\n`)),
        Effect.provide(target.layer),
      )
    }),
)

/** The loader's commands. */
export const program = {
  name: "salesintel-pg",
  version: "0.1.0",
  summary: "the loader: Airbyte messages in, typed Postgres (or embedded PGlite) tables out",
  description: [
    "Without --database-url (or DATABASE_URL) it uses embedded PGlite in --pglite-dir. Logs and the run's summary go to stderr; stdout carries only committed STATE messages (load) or the state (state).",
  ],
  commands: [load, state],
  examples: [
    "source-salesintel read --config c.json --catalog cat.json | salesintel-pg load --catalog cat.json",
    "salesintel-pg state > state.json",
  ],
} as const

/** `salesintel-pg` on the Io: any failure is reported on its stderr and exits 1 (unless a code was set). */
export const main = Effect.flatMap(CommandLine.Io, (io) =>
  CommandLine.run(program).pipe(
    Effect.catchAll((error: unknown) =>
      Effect.zipRight(
        CommandLine.writeStderr(`salesintel-pg: ${error instanceof Error ? error.message : String(error)}\n`),
        Effect.sync(() => io.setExitCode(io.exitCode() || 1)),
      ),
    ),
    // An input pipe still open (a source writing into a load that was refused) must not keep the
    // process alive once the command is done.
    Effect.ensuring(Effect.sync(() => io.stdin.destroy())),
  ),
)
