/**
 * Runs a bin: help and version on stdout (exit 0), usage errors as one line on stderr (exit 2,
 * never on stdout: a protocol bin's stdout carries only messages), and the chosen command parsed
 * by @effect/cli and run with the log options applied to Effect's logger.
 */
import { type CliApp, Command, type HelpDoc, type Span, ValidationError } from "@effect/cli"
import * as Effect from "effect/Effect"
import * as Logger from "effect/Logger"
import type { Documented, Program } from "./Command.ts"
import { commandHelp, programHelp, styleFor } from "./Help.ts"
import { consoleOf, Io, type IoService, setExitCode, writeStderr, writeStdout } from "./Io.ts"
import { currentLogFormat, logger } from "./Logging.ts"
import { type Request, request, withValues } from "./Request.ts"

/** A span's words, without its styling (colour, bold). */
const spanText = (span: Span.Span): string => {
  switch (span._tag) {
    case "Text":
    case "URI":
      return span.value
    case "Highlight":
    case "Strong":
    case "Weak":
      return spanText(span.value)
    case "Sequence":
      return spanText(span.left) + spanText(span.right)
  }
}

/** The paragraphs of a help document, as plain text. */
const paragraphs = (doc: HelpDoc.HelpDoc): ReadonlyArray<string> => {
  switch (doc._tag) {
    case "Empty":
      return []
    case "Header":
    case "Paragraph":
      return [spanText(doc.value)]
    case "DescriptionList":
      return doc.definitions.flatMap(([term, body]) => [spanText(term), ...paragraphs(body)])
    case "Enumeration":
      return doc.elements.flatMap(paragraphs)
    case "Sequence":
      return [...paragraphs(doc.left), ...paragraphs(doc.right)]
  }
}

/**
 * A ValidationError on one line, in @effect/cli's own words (its paragraphs joined by "; "),
 * read from the error's HelpDoc structure rather than from its rendered, styled text.
 */
export const errorLine = (error: ValidationError.ValidationError): string => {
  const lines = "error" in error ? paragraphs(error.error).map((line) => line.trim()) : []
  return [...new Set(lines.filter((line) => line.length > 0))].join("; ")
}

/** A usage error: one line on stderr, exit code 2. */
const usageError = (program: string, command: string | undefined, message: string) => {
  const who = command === undefined ? program : `${program} ${command}`
  return Effect.zipRight(writeStderr(`${who}: ${message} (see '${who} --help')\n`), setExitCode(2))
}

type ErrorOf<C> = C extends Documented<infer _R, infer E> ? E : never
type NeedsOf<C> = C extends Documented<infer R, infer _E> ? R : never

/** The chosen command, parsed and run by @effect/cli with the log options applied. */
const runCommand = <const Commands extends ReadonlyArray<Documented<unknown, unknown>>>(
  program: Program<Commands>,
  io: IoService,
  asked: Extract<Request, { _tag: "Run" }>,
): Effect.Effect<
  void,
  ErrorOf<Commands[number]>,
  NeedsOf<Commands[number]> | CliApp.CliApp.Environment | Io
> => {
  const [first, ...more] = program.commands.map((c) => c.command)
  if (first === undefined) return usageError(program.name, undefined, "no commands")
  const [name = "", ...words] = asked.args
  const flags = program.commands.find((c) => c.doc.name === name)?.flags ?? []
  const checked = withValues(words, flags)
  if (typeof checked === "string") return usageError(program.name, name, checked)
  const root = Command.make(program.name).pipe(Command.withSubcommands([first, ...more]))
  const cli = Command.run(root, { name: program.name, version: program.version })
  // @effect/cli drops the first two words (a runtime and a script, as in process.argv).
  const parsed = cli(["node", program.name, name, ...checked]) as Effect.Effect<
    void,
    ErrorOf<Commands[number]> | ValidationError.ValidationError,
    NeedsOf<Commands[number]> | CliApp.CliApp.Environment | Io
  >
  return parsed.pipe(
    // @effect/cli prints a validation error itself (styled, over several lines) through
    // Console.error before failing with it; it is reported here as one line instead. The
    // commands write to the Io's streams directly, never through Console.error. The logger
    // writes through the console's `unsafe.error`, which stays: log lines are shown.
    Effect.withConsole({ ...consoleOf(io), error: () => Effect.void }),
    Effect.catchIf(
      (error): error is ValidationError.ValidationError => ValidationError.isValidationError(error),
      (error) => usageError(program.name, asked.args[0], errorLine(error)),
    ),
    Effect.provide(Logger.replace(Logger.defaultLogger, logger(asked.logFormat, io.stderr.isTTY))),
    Logger.withMinimumLogLevel(asked.logLevel),
    Effect.locally(currentLogFormat, asked.logFormat),
  )
}

/**
 * Runs the bin on the Io's arguments, writing to its streams and setting its exit code. A
 * command's own failures are its to report: they come back as E.
 */
export const run = <const Commands extends ReadonlyArray<Documented<unknown, unknown>>>(
  program: Program<Commands>,
): Effect.Effect<
  void,
  ErrorOf<Commands[number]>,
  NeedsOf<Commands[number]> | CliApp.CliApp.Environment | Io
> =>
  Effect.flatMap(Io, (io) => {
    const asked = request(
      io.args,
      program.commands.map((c) => c.doc.name),
    )
    const style = styleFor(io.stdout.isTTY, io.env)
    const print = (text: string) => writeStdout(`${text}\n`)
    switch (asked._tag) {
      case "Help": {
        const documented = program.commands.find((c) => c.doc.name === asked.command)
        return print(
          documented === undefined ? programHelp(program, style) : commandHelp(program, documented, style),
        )
      }
      case "Version":
        return print(program.version)
      case "Usage":
        return usageError(program.name, asked.command, asked.message)
      case "Run":
        return runCommand(program, io, asked)
    }
  })
