/**
 * What every command of a bin shares, read before @effect/cli parses the command's own options:
 * `--help`/`-h`, `help [COMMAND]`, `--version`, `--log-level` and `--log-format`, anywhere before
 * a `--`.
 *
 * Why the log options are read here and not by @effect/cli's built-in `--log-level` (0.77):
 * the built-in is recognised only before the command's own options (`sync --log-level debug
 * --config f` works, `sync --config f --log-level debug` is "unknown argument"), and a bad level
 * is reported as a missing option of the command. Users put the option last as often as first.
 */
import * as LogLevel from "effect/LogLevel"
import type { FlagDoc } from "./Command.ts"

export type LogFormat = "text" | "json"

const logLevels: ReadonlyArray<readonly [string, LogLevel.LogLevel]> = LogLevel.allLevels.map(
  (level) => [level._tag.toLowerCase(), level] as const,
)
const levelNames = logLevels.map(([name]) => name).join(", ")

export const commonFlags: ReadonlyArray<FlagDoc> = [
  {
    name: "--log-level LEVEL",
    text: `the least severe log line shown on stderr: ${levelNames}`,
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

export const quote = (text: string) => `'${text}'`

const noCommand = (word: string, commands: ReadonlyArray<string>): string =>
  `no command ${quote(word)} (commands: ${commands.join(", ")})`

/** `help`, `help COMMAND`, or a usage error for any other topic. */
const helpWord = (head: ReadonlyArray<string>, commands: ReadonlyArray<string>): Request => {
  const topic = head[1]
  if (topic === undefined) return { _tag: "Help", command: undefined }
  if (commands.includes(topic) && head.length === 2) return { _tag: "Help", command: topic }
  return { _tag: "Usage", command: undefined, message: noCommand(topic, commands) }
}

interface LogOptions {
  readonly logLevel: LogLevel.LogLevel
  readonly logFormat: LogFormat
  /** The words that are not the log options, in order. */
  readonly rest: ReadonlyArray<string>
}

const splitInline = (word: string): readonly [string, string | undefined] => {
  const equals = word.indexOf("=")
  return equals === -1 ? [word, undefined] : [word.slice(0, equals), word.slice(equals + 1)]
}

/** The log options taken out of `head`, or what is wrong with them. */
const logOptions = (head: ReadonlyArray<string>): LogOptions | string => {
  let logLevel: LogLevel.LogLevel = LogLevel.Info
  let logFormat: LogFormat = "text"
  const rest: Array<string> = []
  for (let index = 0; index < head.length; index++) {
    const word = head[index] ?? ""
    const [option, inline] = word.startsWith("--") ? splitInline(word) : [word, undefined]
    if (option === "--wizard" || option === "--completions") {
      // @effect/cli's built-ins: not offered (they would start an interactive prompt, or print a
      // shell script that knows none of our help).
      return `unknown option ${option}`
    }
    if (option !== "--log-level" && option !== "--log-format") {
      rest.push(word)
      continue
    }
    const value = inline ?? head[++index]
    if (value === undefined || value.startsWith("--")) return `${option} needs a value`
    if (option === "--log-level") {
      const level = logLevels.find(([name]) => name === value.toLowerCase())
      if (level === undefined) return `--log-level ${quote(value)}: expected one of ${levelNames}`
      logLevel = level[1]
    } else {
      if (value !== "text" && value !== "json") return `--log-format ${quote(value)}: expected text or json`
      logFormat = value
    }
  }
  return { logLevel, logFormat, rest }
}

/**
 * Reads what every command shares from `args` (the words after the bin's name), taking the log
 * options out of what the command parses. Options written before the command's name are moved
 * after it: @effect/cli reads a command's options only after its name.
 */
export const request = (args: ReadonlyArray<string>, commands: ReadonlyArray<string>): Request => {
  const end = args.indexOf("--")
  const head = end === -1 ? [...args] : args.slice(0, end)
  const tail = end === -1 ? [] : args.slice(end)
  const name = head.find((word) => commands.includes(word))
  if (head[0] === "help") return helpWord(head, commands)
  if (head.includes("--help") || head.includes("-h")) return { _tag: "Help", command: name }
  if (head.includes("--version")) return { _tag: "Version" }
  const options = logOptions(head)
  if (typeof options === "string") return { _tag: "Usage", command: name, message: options }
  const { logLevel, logFormat, rest } = options
  if (name === undefined) {
    const first = rest.find((word) => !word.startsWith("-"))
    const message =
      first === undefined ? `missing command (${commands.join(", ")})` : noCommand(first, commands)
    return { _tag: "Usage", command: undefined, message }
  }
  const at = rest.indexOf(name)
  const ordered = at <= 0 ? rest : [name, ...rest.slice(0, at), ...rest.slice(at + 1)]
  return { _tag: "Run", args: [...ordered, ...tail], logLevel, logFormat }
}

/** The option a flag's help name declares and its value's placeholder: `--limit N`, or `--wait` (none). */
const declared = (doc: FlagDoc): readonly [string, string | undefined] | undefined => {
  const match = /^(--[A-Za-z][\w-]*)(?: ([A-Z][A-Z_]*))?$/.exec(doc.name)
  return match?.[1] === undefined ? undefined : [match[1], match[2]]
}

/** A word that reads as an option (`--wait`, `-h`), not as a value (`-1`, `-- a comment`). */
const looksLikeOption = (word: string) => /^--?[A-Za-z]/.test(word)

/**
 * A command's words (after its name) with every option that takes a value given one: an option
 * at the end, or followed by another option, is a usage error naming it, where @effect/cli would
 * ignore a repeated option left without a value and take the next option as another's value
 * (`--full-refresh --wait` read `--wait` as a stream). `--option=value` becomes two words, as
 * @effect/cli reads repeated options only so. What follows `--` is left alone.
 */
export const withValues = (
  args: ReadonlyArray<string>,
  flags: ReadonlyArray<FlagDoc>,
): ReadonlyArray<string> | string => {
  const placeholders = new Map<string, string>()
  for (const doc of flags) {
    const [name, value] = declared(doc) ?? []
    if (name !== undefined && value !== undefined) placeholders.set(name, value)
  }
  const words: Array<string> = []
  for (let index = 0; index < args.length; index++) {
    const word = args[index] ?? ""
    if (word === "--") return [...words, ...args.slice(index)]
    const [option, inline] = word.startsWith("--") ? splitInline(word) : [word, undefined]
    const placeholder = placeholders.get(option)
    if (placeholder === undefined) {
      words.push(word)
      continue
    }
    if (inline !== undefined) {
      words.push(option, inline)
      continue
    }
    const value = args[index + 1]
    if (value === undefined || value === "--") return `${option} needs a value (${placeholder}), got none`
    if (looksLikeOption(value))
      return `${option} needs a value (${placeholder}), got the option ${splitInline(value)[0]} (write ${option}=VALUE for a value that starts with -)`
    words.push(option, value)
    index++
  }
  return words
}
