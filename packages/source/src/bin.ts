#!/usr/bin/env node
/**
 * source-salesintel: spec | check --config F | discover --config F |
 * read --config F --catalog F [--state F]. stdout carries only protocol messages; anything else
 * (usage errors, a crash) goes to stderr. Exits 1 after a TRACE error.
 */
import { readFile } from "node:fs/promises"
import { Command, Options } from "@effect/cli"
// Not the package index: it loads the HTTP server and, with it, ~20 MB of API docs pages.
import * as NodeContext from "@effect/platform-node/NodeContext"
import * as NodeRuntime from "@effect/platform-node/NodeRuntime"
import { Message, Ndjson } from "@salesintel/airbyte"
import { Deferred, Effect, Exit, Logger, Option, Stream } from "effect"
import * as Commands from "./Commands.ts"

/** A JSON file's content, or a protocol error naming the file and what is wrong with it. */
const readJson = (role: string, path: string) =>
  Effect.tryPromise({
    try: async (): Promise<unknown> => JSON.parse(await readFile(path, "utf8")),
    catch: (error) =>
      `cannot read the ${role} file ${path}: ${error instanceof Error ? error.message : String(error)}`,
  })

const withJson = (
  files: ReadonlyArray<readonly [string, string | undefined]>,
  use: (values: ReadonlyArray<unknown>) => Stream.Stream<Message.Message>,
): Stream.Stream<Message.Message> =>
  Stream.unwrap(
    Effect.forEach(files, ([role, path]) =>
      path === undefined ? Effect.succeed(undefined) : readJson(role, path),
    ).pipe(
      Effect.map(use),
      Effect.catchAll((message) =>
        Effect.succeed(Stream.make(Message.traceError("config_error", message, Date.now()))),
      ),
    ),
  )

const run = (messages: Stream.Stream<Message.Message>) =>
  Effect.flatMap(Ndjson.write(messages, process.stdout), (failed) =>
    Effect.sync(() => {
      if (failed) process.exitCode = 1
    }),
  )

/**
 * A closed stdout (the reader of the pipe died: EPIPE) makes every later message undeliverable,
 * so whatever is bought from then on is lost. On the first error of stdout the read is stopped at
 * once (no new page or purchase; the write is abandoned), one line goes to stderr, and the exit
 * code is 1. Without this listener Node would crash with a stack trace, or the source would keep
 * buying until its next write failed.
 */
const runRead = (read: (stopWhen: Effect.Effect<void>) => Stream.Stream<Message.Message>) =>
  Effect.gen(function* () {
    const closed = yield* Deferred.make<void>()
    let reported = false // one line, however many writes fail after the first
    const onError = (error: NodeJS.ErrnoException) => {
      Deferred.unsafeDone(closed, Exit.void)
      if (reported) return
      reported = true
      process.exitCode = 1
      process.stderr.write(
        `source-salesintel: stdout closed (${error.code ?? error.message}); stopped reading, nothing more is bought\n`,
      )
    }
    process.stdout.on("error", onError)
    yield* Effect.raceFirst(run(read(Deferred.await(closed))), Deferred.await(closed))
  })

const config = Options.file("config").pipe(Options.withDescription("the source's JSON config"))

const spec = Command.make("spec", {}, () => run(Commands.spec())).pipe(
  Command.withDescription("print the config's JSON Schema (SPEC)"),
)
const check = Command.make("check", { config }, ({ config }) =>
  run(withJson([["config", config]], ([json]) => Commands.check(json))),
).pipe(Command.withDescription("check the key and the account's permissions (free requests only)"))
const discover = Command.make("discover", { config }, ({ config }) =>
  run(withJson([["config", config]], ([json]) => Commands.discover(json))),
).pipe(Command.withDescription("print the catalog of streams"))
const read = Command.make(
  "read",
  {
    config,
    catalog: Options.file("catalog").pipe(Options.withDescription("the configured catalog")),
    state: Options.file("state").pipe(Options.optional, Options.withDescription("the last run's state")),
  },
  ({ config, catalog, state }) =>
    runRead((stopWhen) =>
      withJson(
        [
          ["config", config],
          ["catalog", catalog],
          ["state", Option.getOrUndefined(state)],
        ],
        ([configJson, catalogJson, stateJson]) =>
          Commands.read({ config: configJson, catalog: catalogJson, state: stateJson, stopWhen }),
      ),
    ),
).pipe(Command.withDescription("read the configured streams, emitting RECORD, STATE and LOG messages"))

const command = Command.make("source-salesintel").pipe(Command.withSubcommands([spec, check, discover, read]))

const cli = Command.run(command, { name: "source-salesintel", version: "0.1.0" })

cli(process.argv).pipe(
  // Effect's own log lines must never reach stdout, which belongs to the protocol.
  Effect.provide(Logger.replace(Logger.defaultLogger, Logger.prettyLogger({ stderr: true }))),
  Effect.provide(NodeContext.layer),
  NodeRuntime.runMain({ disableErrorReporting: false }),
)
