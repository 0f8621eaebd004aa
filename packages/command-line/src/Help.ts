/**
 * Help written for people: what a command does, its usage line, each option with its default,
 * examples. Plain text unless stdout is a terminal (then bold headings, unless NO_COLOR), wrapped
 * at 100 columns. @effect/cli's stock help is not used: it is styled with ANSI escapes whether or
 * not stdout is a terminal, and it adds lines such as "This setting is optional." to every option.
 */
import type { CommandDoc, Documented, FlagDoc, Program } from "./Command.ts"
import { commonFlags } from "./Request.ts"

const width = 100

/** `text` wrapped at the help's width, every line indented by `indent` spaces. */
const wrap = (text: string, indent: number): string => {
  const words = text.split(/\s+/).filter((word) => word.length > 0)
  const lines: Array<string> = []
  let line = ""
  for (const word of words) {
    if (line.length > 0 && indent + line.length + 1 + word.length > width) {
      lines.push(line)
      line = word
    } else line = line.length === 0 ? word : `${line} ${word}`
  }
  lines.push(line)
  return lines.map((each) => `${" ".repeat(indent)}${each}`).join("\n")
}

export interface Style {
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

const examples = (style: Style, doc: Pick<CommandDoc, "examples">) =>
  section(style, "Examples:", doc.examples.map((example) => `  ${example}`).join("\n"))

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
    examples(style, program),
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
    examples(style, doc),
  ].join("\n\n")
}
