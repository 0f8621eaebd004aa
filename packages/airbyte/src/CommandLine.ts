/**
 * How the three bins (`salesintel`, `source-salesintel`, `salesintel-pg`) behave on the command
 * line, written once: help written for people (what a command does, each option with its default,
 * examples; plain text unless stdout is a terminal), usage errors as one line on stderr with exit
 * code 2 (never on stdout: a protocol bin's stdout carries only messages), `--version`, `help
 * [command]`, and the options every command takes (`--log-level`, `--log-format`) accepted
 * wherever they are put. @effect/cli parses each command's own options; its stock help, its
 * wizard and completions, and its error dump are not used.
 *
 * A command is declared with `command(doc, flags, handler)`, each flag with `flag(parser, doc)`:
 * the parser and the help line are made together, so a new subcommand gets the same help and
 * usage behaviour by being listed in `run`.
 */
import { Args, type CliApp, Command, HelpDoc, Options, ValidationError } from "@effect/cli"
import { Effect, FiberRef, Logger, LogLevel } from "effect"

export interface FlagDoc {
  /** As written on the command line, with a value placeholder: `--limit N`, or `STATEMENT` for an argument. */
  readonly name: string
  /** What it does, for people. */
  readonly text: string
  /** Its default, when it has one. */
  readonly default?: string
}

/** An option (or a positional argument) and its help line. */
export interface Flag<A> {
  readonly parser: Options.Options<A> | Args.Args<A>
  readonly doc: FlagDoc
}

export const flag = <A>(parser: Options.Options<A> | Args.Args<A>, doc: FlagDoc): Flag<A> => ({ parser, doc })

export interface CommandDoc {
  readonly name: string
  /** One line: what the command does (shown in the command list). */
  readonly summary: string
  /** Paragraphs shown in the command's help, after its usage line. */
  readonly description?: ReadonlyArray<string>
  /** Full command lines, e.g. `salesintel status --json`. */
  readonly examples: ReadonlyArray<string>
}

type Values<F> = { readonly [K in keyof F]: F[K] extends Flag<infer A> ? A : never }

export interface Documented<R, E> {
  /** Its name is erased to `string`: nothing here reads a parent command's context by name. */
  readonly command: Command.Command<string, R, E, Readonly<Record<string, unknown>>>
  readonly doc: CommandDoc
  readonly flags: ReadonlyArray<FlagDoc>
  readonly positional: ReadonlyArray<FlagDoc>
}

/** A subcommand: @effect/cli parses `flags` and calls `handler` with their values. */
export const command = <
  Name extends string,
  const F extends Readonly<Record<string, Flag<unknown>>>,
  E = never,
  R = never,
>(
  doc: CommandDoc & { readonly name: Name },
  flags: F,
  handler: (values: Values<F>) => Effect.Effect<void, E, R>,
): Documented<R, E> => {
  const entries = Object.entries(flags)
  const config: Record<string, Options.Options<unknown> | Args.Args<unknown>> = Object.fromEntries(
    entries.map(([key, value]) => [key, value.parser]),
  )
  const isArgs = (parser: Flag<unknown>["parser"]) => Args.isArgs(parser)
  return {
    // The parsed record has exactly the keys of `flags`, each the value of its parser.
    command: Command.make(doc.name, config, (values) =>
      handler(values as unknown as Values<F>),
    ) as unknown as Command.Command<string, R, E, Readonly<Record<string, unknown>>>,
    doc,
    flags: entries.filter(([, value]) => !isArgs(value.parser)).map(([, value]) => value.doc),
    positional: entries.filter(([, value]) => isArgs(value.parser)).map(([, value]) => value.doc),
  }
}

/**
 * A command already made with @effect/cli's `Command.make`, with its help written here: it gets
 * the same usage errors, --version and log options as the others. Its options are listed in its
 * help only when given as `flags` (prefer `command`, which makes parser and help line together).
 */
export const fromCommand = <Name extends string, R, E, A>(
  made: Command.Command<Name, R, E, A>,
  doc: CommandDoc & { readonly name: Name },
  flags: ReadonlyArray<FlagDoc> = [],
): Documented<R, E> => ({
  // As in `command`: the name and parsed value are not read through this type.
  command: made as unknown as Command.Command<string, R, E, Readonly<Record<string, unknown>>>,
  doc,
  flags,
  positional: [],
})

/** The bin: its name, version, one-line summary, commands and examples. */
export interface Program<Commands extends ReadonlyArray<Documented<unknown, unknown>>> {
  readonly name: string
  readonly version: string
  readonly summary: string
  readonly description?: ReadonlyArray<string>
  readonly commands: Commands
  readonly examples: ReadonlyArray<string>
}

// ---------------------------------------------------------------------------------------------
// Options every command takes

export type LogFormat = "text" | "json"

const logLevels: ReadonlyArray<readonly [string, LogLevel.LogLevel]> = [
  ["all", LogLevel.All],
  ["trace", LogLevel.Trace],
  ["debug", LogLevel.Debug],
  ["info", LogLevel.Info],
  ["warning", LogLevel.Warning],
  ["error", LogLevel.Error],
  ["fatal", LogLevel.Fatal],
  ["none", LogLevel.None],
]

export const commonFlags: ReadonlyArray<FlagDoc> = [
  {
    name: "--log-level LEVEL",
    text: `the least severe log line shown on stderr: ${logLevels.map(([name]) => name).join(", ")}`,
    default: "info",
  },
  {
    name: "--log-format FORMAT",
    text: "text (for people) or json (one JSON object per line, for log collectors); logs go to stderr",
    default: "text",
  },
  { name: "--help, -h", text: "show this help (also `help [COMMAND]`)" },
  { name: "--version", text: "print the version" },
]

/** What the command line asks for, before the command's own options are parsed. */
export type Request =
  | { readonly _tag: "Help"; readonly command: string | undefined }
  | { readonly _tag: "Version" }
  | { readonly _tag: "Usage"; readonly command: string | undefined; readonly message: string }
  | {
      readonly _tag: "Run"
      /** The command's name first, then its own options and arguments. */
      readonly args: ReadonlyArray<string>
      readonly logLevel: LogLevel.LogLevel
      readonly logFormat: LogFormat
    }

/**
 * Reads what every command shares from `args` (the words after the bin's name): `--help`/`-h`,
 * `help [COMMAND]`, `--version`, and `--log-level`/`--log-format` anywhere before a `--`, taken
 * out of what the command parses. Options written before the command's name are moved after it.
 */
export const request = (args: ReadonlyArray<string>, commands: ReadonlyArray<string>): Request => {
  const end = args.indexOf("--")
  const head = end === -1 ? [...args] : args.slice(0, end)
  const tail = end === -1 ? [] : args.slice(end)
  const name = head.find((word) => commands.includes(word))
  const usage = (message: string): Request => ({ _tag: "Usage", command: name, message })
  if (head[0] === "help") {
    const topic = head[1]
    if (topic === undefined) return { _tag: "Help", command: undefined }
    if (commands.includes(topic) && head.length === 2) return { _tag: "Help", command: topic }
    return {
      _tag: "Usage",
      command: undefined,
      message: `no command ${quote(topic)} (commands: ${commands.join(", ")})`,
    }
  }
  if (head.includes("--help") || head.includes("-h")) return { _tag: "Help", command: name }
  if (head.includes("--version")) return { _tag: "Version" }

  let logLevel: LogLevel.LogLevel = LogLevel.Info
  let logFormat: LogFormat = "text"
  const rest: Array<string> = []
  for (let index = 0; index < head.length; index++) {
    const word = head[index] ?? ""
    const [option, inline] = word.startsWith("--") ? splitInline(word) : [word, undefined]
    if (option === "--log-level" || option === "--log-format") {
      const value = inline ?? head[++index]
      if (value === undefined || value.startsWith("--")) return usage(`${option} needs a value`)
      if (option === "--log-level") {
        const level = logLevels.find(([levelName]) => levelName === value.toLowerCase())
        if (level === undefined)
          return usage(`--log-level ${quote(value)}: expected one of ${logLevels.map(([n]) => n).join(", ")}`)
        logLevel = level[1]
      } else {
        if (value !== "text" && value !== "json")
          return usage(`--log-format ${quote(value)}: expected text or json`)
        logFormat = value
      }
    } else if (option === "--wizard" || option === "--completions") {
      // @effect/cli's built-ins: not offered (they would start an interactive prompt, or print a
      // shell script that knows none of our help).
      return usage(`unknown option ${option}`)
    } else rest.push(word)
  }
  if (name === undefined) {
    const first = rest.find((word) => !word.startsWith("-"))
    return {
      _tag: "Usage",
      command: undefined,
      message:
        first === undefined
          ? `missing command (${commands.join(", ")})`
          : `no command ${quote(first)} (commands: ${commands.join(", ")})`,
    }
  }
  // The command's name first: @effect/cli only reads a command's options after its name.
  const at = rest.indexOf(name)
  const ordered = at <= 0 ? rest : [name, ...rest.slice(0, at), ...rest.slice(at + 1)]
  return { _tag: "Run", args: [...ordered, ...tail], logLevel, logFormat }
}

const splitInline = (word: string): readonly [string, string | undefined] => {
  const equals = word.indexOf("=")
  return equals === -1 ? [word, undefined] : [word.slice(0, equals), word.slice(equals + 1)]
}

const quote = (text: string) => `'${text}'`

// ---------------------------------------------------------------------------------------------
// Help text

const width = 100

/** `text` wrapped at the help's width, every line indented by `indent` spaces. */
const wrap = (text: string, indent: number, first = indent): string => {
  const words = text.split(/\s+/).filter((word) => word.length > 0)
  const lines: Array<string> = []
  let line = ""
  let lineIndent = first
  for (const word of words) {
    if (line.length > 0 && lineIndent + line.length + 1 + word.length > width) {
      lines.push(line)
      line = word
      lineIndent = indent
    } else line = line.length === 0 ? word : `${line} ${word}`
  }
  lines.push(line)
  return lines.map((text, index) => `${" ".repeat(index === 0 ? first : indent)}${text}`).join("\n")
}

interface Style {
  readonly heading: (text: string) => string
}

/** Bold headings on a terminal (unless NO_COLOR is set); plain text otherwise. */
export const styleFor = (
  isTTY: boolean | undefined,
  env: Readonly<Record<string, string | undefined>>,
): Style =>
  isTTY === true && (env.NO_COLOR ?? "") === "" && env.TERM !== "dumb"
    ? { heading: (text) => `\x1b[1m${text}\x1b[0m` }
    : { heading: (text) => text }

const list = (entries: ReadonlyArray<FlagDoc>): string => {
  const column = Math.min(28, Math.max(...entries.map((entry) => entry.name.length)) + 4)
  return entries
    .map((entry) => {
      const text = entry.default === undefined ? entry.text : `${entry.text} (default: ${entry.default})`
      const name = `  ${entry.name}`
      // A long name gets a line of its own; a short one has its text beside it.
      return name.length + 2 > column
        ? `${name}\n${wrap(text, column)}`
        : `${name.padEnd(column)}${wrap(text, column).slice(column)}`
    })
    .join("\n")
}

const section = (style: Style, title: string, body: string) => `${style.heading(title)}\n${body}`

/** The bin's help: its commands, the common options, examples. */
export const programHelp = (
  program: Program<ReadonlyArray<Documented<unknown, unknown>>>,
  style: Style,
): string => {
  const commands = program.commands.map((c) => ({ name: c.doc.name, text: c.doc.summary }))
  return [
    `${program.name} ${program.version}: ${program.summary}`,
    section(style, "Usage:", `  ${program.name} COMMAND [OPTIONS]\n  ${program.name} help COMMAND`),
    ...(program.description ?? []).map((paragraph) => wrap(paragraph, 0)),
    section(style, "Commands:", list(commands)),
    section(style, "Options of every command:", list(commonFlags)),
    section(style, "Examples:", program.examples.map((example) => `  ${example}`).join("\n")),
    `Run '${program.name} COMMAND --help' for a command's options.`,
  ].join("\n\n")
}

/** A command's help: what it does, its usage line, its options with their defaults, examples. */
export const commandHelp = (
  program: { readonly name: string },
  documented: Documented<unknown, unknown>,
  style: Style,
): string => {
  const { doc, flags, positional } = documented
  const usage = [
    program.name,
    doc.name,
    ...(flags.length > 0 ? ["[OPTIONS]"] : []),
    ...positional.map((argument) => argument.name),
  ].join(" ")
  return [
    `${program.name} ${doc.name}: ${doc.summary}`,
    section(style, "Usage:", `  ${usage}`),
    ...(doc.description ?? []).map((paragraph) => wrap(paragraph, 0)),
    ...(positional.length > 0 ? [section(style, "Arguments:", list(positional))] : []),
    ...(flags.length > 0 ? [section(style, "Options:", list(flags))] : []),
    section(style, "Options of every command:", list(commonFlags)),
    section(style, "Examples:", doc.examples.map((example) => `  ${example}`).join("\n")),
  ].join("\n\n")
}

// ---------------------------------------------------------------------------------------------
// Running

/** A ValidationError's text on one line, without @effect/cli's ANSI styling and in our words. */
export const errorLine = (error: ValidationError.ValidationError): string => {
  const doc = "error" in error ? error.error : HelpDoc.empty
  const text = HelpDoc.toAnsiText(doc)
    // biome-ignore lint/suspicious/noControlCharactersInRegex: ANSI escapes are what is removed
    .replace(/\x1b\[[0-9;]*m/g, "")
  const lines = text
    .split(/\n+/)
    .map((line) =>
      line
        .trim()
        .replace(/^Expected to find option: '(.+)'$/, "missing option $1")
        .replace(/^Missing argument <(.+)>$/, (_, name: string) => `missing argument ${name.toUpperCase()}`)
        .replace(/^Received unknown argument: '(.+)'$/, "unexpected argument '$1'")
        .replace(/ is not a integer$/, " is not an integer"),
    )
    .filter((line) => line.length > 0)
  return [...new Set(lines)].join("; ")
}

/** The `--log-format` of the running command (text outside `run`). */
export const currentLogFormat: FiberRef.FiberRef<LogFormat> = FiberRef.unsafeMake<LogFormat>("text")

/**
 * A log line a command writes itself (a source's LOG message relayed by a loader, ...), on
 * stderr: `text` as given, or with `--log-format json` one object shaped like Effect's
 * jsonLogger's (`timestamp`, `logLevel`, `message`, `annotations`).
 */
export const logLine = (
  level: string,
  message: string,
  text: string,
  annotations: Readonly<Record<string, unknown>> = {},
): Effect.Effect<void> =>
  Effect.flatMap(FiberRef.get(currentLogFormat), (format) =>
    Effect.sync(() => {
      process.stderr.write(
        format === "json"
          ? `${JSON.stringify({ timestamp: new Date().toISOString(), logLevel: level, message, annotations })}\n`
          : `${text}\n`,
      )
    }),
  )

/**
 * A writer for `--log-format json` that keeps stderr machine-readable: each line written to it
 * that is not already a JSON object (a progress line, a summary) goes out as one, an INFO line
 * `{timestamp, logLevel, message, annotations: {from}}`. Terminal redraws (\r, erase-line) are
 * dropped: it is never a terminal.
 */
export const jsonLines = (
  target: { write(text: string): unknown },
  from: string,
): { readonly isTTY: false; write(text: string): boolean } => {
  let pending = ""
  return {
    isTTY: false,
    write(text: string) {
      // biome-ignore lint/suspicious/noControlCharactersInRegex: terminal control sequences are what is dropped
      const lines = (pending + text.replace(/\r|\x1b\[[0-9;]*[A-Za-z]/g, "")).split("\n")
      pending = lines.pop() ?? ""
      for (const line of lines) {
        if (line.trim().length === 0) continue
        target.write(
          line.startsWith("{")
            ? `${line}\n`
            : `${JSON.stringify({ timestamp: new Date().toISOString(), logLevel: "INFO", message: line, annotations: { from } })}\n`,
        )
      }
      return true
    },
  }
}

/** A usage error: one line on stderr, exit code 2. */
const usageError = (program: string, command: string | undefined, message: string) =>
  Effect.sync(() => {
    const who = command === undefined ? program : `${program} ${command}`
    process.stderr.write(`${who}: ${message} (see '${who} --help')\n`)
    process.exitCode = 2
  })

/** The logger of `--log-format`, on stderr. */
export const logger = (format: LogFormat, isTTY: boolean | undefined) =>
  format === "json"
    ? Logger.withConsoleError(Logger.jsonLogger)
    : Logger.prettyLogger({ stderr: true, colors: isTTY === true })

/**
 * Runs the bin on `argv` (process.argv). Help and version go to stdout (exit 0); usage errors to
 * stderr (exit 2); the chosen command runs with `--log-level` and `--log-format` applied to
 * Effect's logger (on stderr). A command's own failures are its to report: they come back as E.
 */
export const run = <const Commands extends ReadonlyArray<Documented<unknown, unknown>>>(
  program: Program<Commands>,
  argv: ReadonlyArray<string>,
): Effect.Effect<
  void,
  Commands[number] extends Documented<infer _R, infer E> ? E : never,
  (Commands[number] extends Documented<infer R, infer _E> ? R : never) | CliApp.CliApp.Environment
> => {
  type E = Commands[number] extends Documented<infer _R, infer E> ? E : never
  type R = Commands[number] extends Documented<infer R, infer _E> ? R : never
  const names = program.commands.map((c) => c.doc.name)
  const asked = request(argv.slice(2), names)
  const style = styleFor(process.stdout.isTTY, process.env)
  const print = (text: string) => Effect.sync(() => process.stdout.write(`${text}\n`))
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
    case "Run": {
      const [first, ...more] = program.commands.map((c) => c.command)
      if (first === undefined) return usageError(program.name, undefined, "no commands")
      const root = Command.make(program.name).pipe(Command.withSubcommands([first, ...more]))
      const cli = Command.run(root, { name: program.name, version: program.version })
      const name = asked.args[0]
      const program_ = cli([argv[0] ?? "node", argv[1] ?? program.name, ...asked.args]) as Effect.Effect<
        void,
        E | ValidationError.ValidationError,
        R | CliApp.CliApp.Environment
      >
      return Effect.consoleWith((console) =>
        program_.pipe(
          // @effect/cli prints a validation error itself (styled, over several lines) through
          // Console.error before failing with it; it is reported here as one line instead. The
          // commands write to process.stdout/stderr directly, never through Console.error. The
          // logger writes through the console's `unsafe.error`, which stays: log lines are shown.
          Effect.withConsole({ ...console, error: () => Effect.void }),
          Effect.catchIf(
            (error): error is ValidationError.ValidationError => ValidationError.isValidationError(error),
            (error) => usageError(program.name, name, errorLine(error)),
          ),
          Effect.provide(Logger.replace(Logger.defaultLogger, logger(asked.logFormat, process.stderr.isTTY))),
          Logger.withMinimumLogLevel(asked.logLevel),
          Effect.locally(currentLogFormat, asked.logFormat),
        ),
      )
    }
  }
}

/**
 * Options.text with a check run at parsing: a failed check is a usage error naming the option,
 * the value (as `show` renders it: a URL without its password) and what was expected.
 */
export const checkedText = (
  name: string,
  check: (value: string) => string | undefined,
  show: (value: string) => string = (value) => value,
): Options.Options<string> =>
  Options.text(name).pipe(
    Options.mapEffect((value) => {
      const problem = check(value)
      return problem === undefined
        ? Effect.succeed(value)
        : Effect.fail(ValidationError.invalidValue(HelpDoc.p(`--${name} ${quote(show(value))}: ${problem}`)))
    }),
  )

/**
 * A whole-number option of at least `least`, checked at parsing: anything else is a usage error
 * naming the option, the value and what it counts (`--limit 'x': expected how many runs, a whole
 * number from 1`).
 */
export const wholeNumber = (name: string, least: number, what: string): Options.Options<number> =>
  checkedText(name, (value) =>
    /^\d+$/.test(value) && Number.isSafeInteger(Number(value)) && Number(value) >= least
      ? undefined
      : `expected ${what}, a whole number from ${least}`,
  ).pipe(Options.map(Number))

/** One of `values`, checked at parsing: anything else is a usage error naming the option and them. */
export const choice = <const A extends string>(
  name: string,
  values: ReadonlyArray<A>,
): Options.Options<A> => {
  const allowed = `${values.slice(0, -1).join(", ")}${values.length > 1 ? " or " : ""}${values.at(-1) ?? ""}`
  const isValue = (value: string): value is A => values.some((each) => each === value)
  return checkedText(name, (value) => (isValue(value) ? undefined : `expected ${allowed}`)).pipe(
    Options.map((value) => values.find((each) => each === value) ?? (values[0] as A)),
  )
}
