/**
 * source-salesintel: spec | check --config F | discover --config F |
 * read --config F --catalog F [--state F]. stdout carries only protocol messages; anything else
 * (usage errors, logs, a crash) goes to stderr. Exits 1 after a TRACE error, 2 on a usage error.
 * `main` is the whole command on an Io (arguments, environment, streams, exit code): bin.ts runs
 * it on the process, tests in process.
 */
import { Options } from "@effect/cli"
import { Message, Ndjson } from "@salesintel/airbyte"
import { CommandLine, JsonFile } from "@salesintel/command-line"
import * as Deferred from "effect/Deferred"
import * as Effect from "effect/Effect"
import * as Exit from "effect/Exit"
import * as Option from "effect/Option"
import * as Stream from "effect/Stream"
import * as Commands from "./Commands.ts"

const withJson = (
  files: ReadonlyArray<readonly [string, string | undefined]>,
  use: (values: ReadonlyArray<unknown>) => Stream.Stream<Message.Message>,
): Stream.Stream<Message.Message, never, CommandLine.Io> =>
  Stream.unwrap(
    Effect.flatMap(CommandLine.Io, (io) =>
      Effect.forEach(files, ([role, path]) =>
        // A JSON file's content, or a protocol error naming the file and what is wrong with it.
        path === undefined ? Effect.succeed(undefined) : JsonFile.read(path, role, io.cwd),
      ),
    ).pipe(
      Effect.map(use),
      Effect.catchAll((message) =>
        Effect.succeed(Stream.make(Message.traceError("config_error", message, Date.now()))),
      ),
    ),
  )

const run = (messages: Stream.Stream<Message.Message, never, CommandLine.Io>) =>
  Effect.flatMap(CommandLine.Io, (io) =>
    Effect.flatMap(Ndjson.write(messages, io.stdout), (failed) =>
      failed ? CommandLine.setExitCode(1) : Effect.void,
    ),
  )

/**
 * A closed stdout (the reader of the pipe died: EPIPE) makes every later message undeliverable,
 * so whatever is bought from then on is lost. On the first error of stdout the read is stopped at
 * once (no new page or purchase; the write is abandoned), one line goes to stderr, and the exit
 * code is 1. Without this listener Node would crash with a stack trace, or the source would keep
 * buying until its next write failed.
 */
const runRead = (
  read: (stopWhen: Effect.Effect<void>) => Stream.Stream<Message.Message, never, CommandLine.Io>,
) =>
  Effect.gen(function* () {
    const io = yield* CommandLine.Io
    const closed = yield* Deferred.make<void>()
    let reported = false // one line, however many writes fail after the first
    const onError = (error: NodeJS.ErrnoException) => {
      Deferred.unsafeDone(closed, Exit.void)
      if (reported) return
      reported = true
      io.setExitCode(1)
      io.stderr.write(
        `source-salesintel: stdout closed (${error.code ?? error.message}); stopped reading, nothing more is bought\n`,
      )
    }
    io.stdout.on("error", onError)
    yield* Effect.raceFirst(run(read(Deferred.await(closed))), Deferred.await(closed))
  })

const config = CommandLine.flag(Options.file("config"), {
  name: "--config FILE",
  text: "the source's JSON config: api_key, credit_budget, the searches and lists to read (see `spec`)",
})

const spec = CommandLine.command(
  {
    name: "spec",
    summary: "print the config's JSON Schema as a SPEC message",
    examples: ["source-salesintel spec"],
  },
  {},
  () => run(Commands.spec()),
)
const check = CommandLine.command(
  {
    name: "check",
    summary: "check the API key and the account's permissions, with free requests only",
    description: [
      "Answers one CONNECTION_STATUS message: SUCCEEDED, or FAILED naming what is missing (exit 0 either way, as the protocol asks). Spends no credit.",
    ],
    examples: ["source-salesintel check --config config.json"],
  },
  { config },
  ({ config }) => run(withJson([["config", config]], ([json]) => Commands.check(json))),
)
const discover = CommandLine.command(
  {
    name: "discover",
    summary: "print the catalog of streams (contacts, companies, technologies) as a CATALOG message",
    examples: ["source-salesintel discover --config config.json"],
  },
  { config },
  ({ config }) => run(withJson([["config", config]], ([json]) => Commands.discover(json))),
)
const read = CommandLine.command(
  {
    name: "read",
    summary: "read the configured streams: RECORD, STATE and LOG messages on stdout",
    description: [
      "Buys what the config asks for, within its credit_budget, and emits each page's records followed by a STATE message. Given the last STATE messages (--state), it reads incrementally: nothing already bought is bought again. A failure ends with a TRACE error and exit code 1; if stdout closes, the read stops at once and buys nothing more.",
    ],
    examples: [
      "source-salesintel read --config config.json --catalog catalog.json > messages.jsonl",
      "source-salesintel read --config config.json --catalog catalog.json --state state.json | salesintel-pg load",
    ],
  },
  {
    config,
    catalog: CommandLine.flag(Options.file("catalog"), {
      name: "--catalog FILE",
      text: "the configured catalog: the streams to read and each one's sync mode",
    }),
    state: CommandLine.flag(Options.file("state").pipe(Options.optional), {
      name: "--state FILE",
      text: "the last run's state (a JSON array of STATE messages, e.g. from `salesintel-pg state`); without it every stream starts from the beginning",
    }),
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
)

/** The source's commands. */
export const program = {
  name: "source-salesintel",
  version: "0.1.0",
  summary: "the SalesIntel Airbyte source",
  description: [
    "stdout carries only Airbyte protocol messages, one JSON object per line; usage errors and logs go to stderr.",
  ],
  commands: [spec, check, discover, read],
  examples: [
    "source-salesintel check --config config.json",
    "source-salesintel read --config config.json --catalog catalog.json --state state.json",
  ],
} as const

/** `source-salesintel` on the Io. */
export const main = CommandLine.run(program)
