/**
 * A command and its options, declared once: @effect/cli parses them, and the same declaration
 * carries the text of the help (`Help.ts`). A command is made with `command(doc, flags, handler)`,
 * each option with `flag(parser, doc)`: the description is given to @effect/cli's own
 * `Options.withDescription` / `Args.withDescription` and kept for the help, so a new subcommand
 * gets the same help and usage behaviour by being listed in the bin's program.
 */
import { Args, Command, Options } from "@effect/cli"
import type * as Effect from "effect/Effect"

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

/** An option or argument, described to @effect/cli and to the help by the same text. */
export const flag = <A>(parser: Options.Options<A> | Args.Args<A>, doc: FlagDoc): Flag<A> => ({
  parser: Args.isArgs(parser)
    ? Args.withDescription(parser, doc.text)
    : Options.withDescription(parser, doc.text),
  doc,
})

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
  const made = Command.make(doc.name, config, (values) => handler(values as unknown as Values<F>)).pipe(
    Command.withDescription(doc.summary),
  )
  return {
    // The parsed record has exactly the keys of `flags`, each the value of its parser.
    command: made as unknown as Command.Command<string, R, E, Readonly<Record<string, unknown>>>,
    doc,
    flags: entries.filter(([, value]) => !isArgs(value.parser)).map(([, value]) => value.doc),
    positional: entries.filter(([, value]) => isArgs(value.parser)).map(([, value]) => value.doc),
  }
}

/** The bin: its name, version, one-line summary, commands and examples. */
export interface Program<Commands extends ReadonlyArray<Documented<unknown, unknown>>> {
  readonly name: string
  readonly version: string
  readonly summary: string
  readonly description?: ReadonlyArray<string>
  readonly commands: Commands
  readonly examples: ReadonlyArray<string>
}
