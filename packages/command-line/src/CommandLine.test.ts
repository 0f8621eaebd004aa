import { Args, HelpDoc, Options, Span, ValidationError } from "@effect/cli"
import * as Effect from "effect/Effect"
import * as LogLevel from "effect/LogLevel"
import { describe, expect, it } from "vitest"
import * as CommandLine from "./CommandLine.ts"

const commands = ["sync", "sql", "status"]

describe("CommandLine.request", () => {
  it("finds help wherever it is asked for", () => {
    expect(CommandLine.request(["--help"], commands)).toEqual({ _tag: "Help", command: undefined })
    expect(CommandLine.request(["sql", "-h"], commands)).toEqual({ _tag: "Help", command: "sql" })
    expect(CommandLine.request(["--help", "status"], commands)).toEqual({ _tag: "Help", command: "status" })
    expect(CommandLine.request(["help"], commands)).toEqual({ _tag: "Help", command: undefined })
    expect(CommandLine.request(["help", "sync"], commands)).toEqual({ _tag: "Help", command: "sync" })
    expect(CommandLine.request(["sync", "--version"], commands)).toEqual({ _tag: "Version" })
  })

  it("takes --log-level and --log-format from anywhere, and puts the command first", () => {
    const asked = CommandLine.request(
      ["--log-format=json", "--schema", "s", "status", "--log-level", "debug", "--limit", "3"],
      commands,
    )
    expect(asked).toEqual({
      _tag: "Run",
      args: ["status", "--schema", "s", "--limit", "3"],
      logLevel: LogLevel.Debug,
      logFormat: "json",
    })
  })

  it("leaves what follows -- alone", () => {
    const asked = CommandLine.request(["sql", "--", "--help"], commands)
    expect(asked).toMatchObject({ _tag: "Run", args: ["sql", "--", "--help"], logFormat: "text" })
  })

  it("says what is wrong in one line", () => {
    const message = (args: ReadonlyArray<string>) => {
      const asked = CommandLine.request(args, commands)
      return asked._tag === "Usage" ? asked.message : asked._tag
    }
    expect(message([])).toBe("missing command (sync, sql, status)")
    expect(message(["nosuch"])).toBe("no command 'nosuch' (commands: sync, sql, status)")
    expect(message(["help", "nosuch"])).toBe("no command 'nosuch' (commands: sync, sql, status)")
    expect(message(["status", "--log-level", "loud"])).toMatch(/^--log-level 'loud': expected one of all, /)
    expect(message(["status", "--log-format", "xml"])).toBe("--log-format 'xml': expected text or json")
    expect(message(["status", "--log-format"])).toBe("--log-format needs a value")
    expect(message(["status", "--wizard"])).toBe("unknown option --wizard")
    expect(message(["--completions", "bash"])).toBe("unknown option --completions")
  })
})

describe("CommandLine.withValues", () => {
  const flags = [
    { name: "--config FILE", text: "" },
    { name: "--full-refresh LIST", text: "" },
    { name: "--max-width N", text: "" },
    { name: "--wait", text: "" },
  ]
  const check = (args: ReadonlyArray<string>) => CommandLine.withValues(args, flags)

  it("refuses an option that takes a value when none follows, or another option does", () => {
    expect(check(["--config", "c.json", "--full-refresh"])).toBe(
      "--full-refresh needs a value (LIST), got none",
    )
    expect(check(["--full-refresh", "--wait", "--config", "c.json"])).toBe(
      "--full-refresh needs a value (LIST), got the option --wait (write --full-refresh=VALUE for a value that starts with -)",
    )
    expect(check(["--config", "-h"])).toBe(
      "--config needs a value (FILE), got the option -h (write --config=VALUE for a value that starts with -)",
    )
    expect(check(["--config", "--"])).toBe("--config needs a value (FILE), got none")
  })

  it("passes values, positional words and what follows -- as they are; --option=value as two words", () => {
    expect(check(["--config", "c.json", "--wait", "select 1", "--max-width", "-1"])).toEqual([
      "--config",
      "c.json",
      "--wait",
      "select 1",
      "--max-width",
      "-1",
    ])
    expect(check(["--full-refresh=contacts", "--config=--odd.json", "--wait=x"])).toEqual([
      "--full-refresh",
      "contacts",
      "--config",
      "--odd.json",
      "--wait=x",
    ])
    expect(check(["--", "--full-refresh"])).toEqual(["--", "--full-refresh"])
  })
})

describe("CommandLine help", () => {
  const limit = CommandLine.flag(Options.integer("limit").pipe(Options.withDefault(10)), {
    name: "--limit N",
    text: "how many runs to show",
    default: "10",
  })
  const status = CommandLine.command(
    { name: "status", summary: "show the runs", examples: ["tool status --limit 3"] },
    { limit, what: CommandLine.flag(Args.text({ name: "what" }), { name: "WHAT", text: "what to show" }) },
    () => Effect.void,
  )
  const program = {
    name: "tool",
    version: "1.2.3",
    summary: "does things",
    commands: [status],
    examples: ["tool status"],
  }
  const plain = CommandLine.styleFor(false, {})

  it("documents every option with its default, the arguments and examples, in plain text", () => {
    const help = CommandLine.commandHelp(program, status, plain)
    expect(help).toContain("Usage:\n  tool status [OPTIONS] WHAT")
    expect(help).toMatch(/--limit N +how many runs to show \(default: 10\)/)
    expect(help).toMatch(/WHAT +what to show/)
    expect(help).toContain("--log-format FORMAT")
    expect(help).toContain("  tool status --limit 3")
    // biome-ignore lint/suspicious/noControlCharactersInRegex: no ANSI escape may appear
    expect(help).not.toMatch(/\x1b/)
    expect(help).not.toContain("A user-defined piece of text")
    for (const line of help.split("\n")) expect(line.length).toBeLessThanOrEqual(100)
  })

  it("lists the commands, and styles headings only on a terminal without NO_COLOR", () => {
    const help = CommandLine.programHelp(program, plain)
    expect(help).toMatch(/^tool 1\.2\.3: does things/)
    expect(help).toMatch(/status +show the runs/)
    expect(CommandLine.programHelp(program, CommandLine.styleFor(true, {}))).toContain("\x1b[1mCommands:")
    expect(CommandLine.programHelp(program, CommandLine.styleFor(true, { NO_COLOR: "1" }))).not.toContain(
      "\x1b",
    )
  })

  it("turns @effect/cli's validation errors into one line", () => {
    const missing = ValidationError.missingValue(
      // Two missing options, as @effect/cli reports them: one paragraph each.
      HelpDoc.sequence(
        HelpDoc.p("Expected to find option: '--config'"),
        HelpDoc.p("Expected to find option: '--catalog'"),
      ),
    )
    expect(CommandLine.errorLine(missing)).toBe(
      "Expected to find option: '--config'; Expected to find option: '--catalog'",
    )
  })
})

describe("CommandLine.errorLine", () => {
  it("reads the words of a styled error from its structure, once each", () => {
    const styled = ValidationError.invalidValue(
      HelpDoc.sequence(
        HelpDoc.p(
          Span.spans([Span.text("Received unknown argument: "), Span.strong(Span.code("'--bogus'"))]),
        ),
        HelpDoc.p("Received unknown argument: '--bogus'"),
      ),
    )
    expect(CommandLine.errorLine(styled)).toBe("Received unknown argument: '--bogus'")
  })
})

describe("CommandLine.flag", () => {
  it("gives its text to @effect/cli as the option's description", () => {
    const limit = CommandLine.flag(Options.text("limit"), {
      name: "--limit N",
      text: "how many runs to show",
    })
    expect(JSON.stringify(Options.getHelp(limit.parser as Options.Options<string>))).toContain(
      "how many runs to show",
    )
  })
})

describe("CommandLine.jsonLines", () => {
  it("passes JSON lines through and wraps the others, whole lines only, without terminal redraws", () => {
    const written: Array<string> = []
    const sink = CommandLine.jsonLines({ write: (text: string) => written.push(text) }, "progress")
    sink.write('{"logLevel":"WARN"}\n12 records')
    expect(written).toEqual(['{"logLevel":"WARN"}\n'])
    sink.write(" so far\n\r\x1b[K\n")
    expect(written).toHaveLength(2)
    expect(JSON.parse(written[1] ?? "")).toMatchObject({
      logLevel: "INFO",
      message: "12 records so far",
      annotations: { from: "progress" },
    })
  })
})
