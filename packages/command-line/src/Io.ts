/**
 * What a command gets from the process it runs in, as a service: its arguments, environment,
 * working directory, standard streams, signals and exit code. A bin provides the process's own
 * (`processIo`); a test provides streams it reads back (src/testing/InProcess.ts), so a command
 * runs in process, in milliseconds, with nothing global read or changed.
 */
import { Console as NodeConsole } from "node:console"
import { isAbsolute, resolve } from "node:path"
import type { Readable, Writable } from "node:stream"
import * as Console from "effect/Console"
import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"

/** stdout or stderr: a stream that may be a terminal (a person reads it) of some width. */
export type Output = Writable & {
  readonly isTTY?: boolean | undefined
  readonly columns?: number | undefined
}

export type Signal = "SIGINT" | "SIGTERM"

export interface IoService {
  /** The words after the bin's name. */
  readonly args: ReadonlyArray<string>
  readonly env: Readonly<Record<string, string | undefined>>
  /** The directory relative paths are taken from. */
  readonly cwd: string
  readonly stdin: Readable
  readonly stdout: Output
  readonly stderr: Output
  /** Calls `listener` on each SIGINT and SIGTERM until the returned function is called. */
  readonly onSignal: (listener: (signal: Signal) => void) => () => void
  /** The code the invocation exits with: 0 until a command sets another. */
  readonly exitCode: () => number
  /**
   * Sets it, at once: a process's may be set from a stream's event after the program ended (a
   * pipe closed by its reader), and is still the one it exits with.
   */
  readonly setExitCode: (code: number) => void
}

export class Io extends Context.Tag("@salesintel/command-line/Io")<Io, IoService>() {}

const onProcessSignal = (listener: (signal: Signal) => void) => {
  const onInt = () => listener("SIGINT")
  const onTerm = () => listener("SIGTERM")
  process.on("SIGINT", onInt)
  process.on("SIGTERM", onTerm)
  return () => {
    process.removeListener("SIGINT", onInt)
    process.removeListener("SIGTERM", onTerm)
  }
}

/** The running process's arguments, environment, directory, streams, signals and exit code. */
export const processIo: Layer.Layer<Io> = Layer.sync(Io, () => ({
  args: process.argv.slice(2),
  env: process.env,
  cwd: process.cwd(),
  // Read when used: touching process.stdin opens it, which the commands without input never do.
  get stdin() {
    return process.stdin
  },
  stdout: process.stdout,
  stderr: process.stderr,
  onSignal: onProcessSignal,
  exitCode: () => Number(process.exitCode ?? 0),
  setExitCode: (code) => {
    process.exitCode = code
  },
}))

/**
 * `path` as file system calls must see it: relative to the invocation's directory. It is left as
 * written when that directory is the process's own (it names the same file), so what a command
 * says names the file as the user wrote it.
 */
export const pathIn = (io: IoService, path: string): string =>
  isAbsolute(path) || io.cwd === process.cwd() ? path : resolve(io.cwd, path)

export const setExitCode = (code: number): Effect.Effect<void, never, Io> =>
  Effect.flatMap(Io, (io) => Effect.sync(() => io.setExitCode(code)))

/** Text on stdout, as written (no newline added). */
export const writeStdout = (text: string): Effect.Effect<void, never, Io> =>
  Effect.flatMap(Io, (io) => Effect.sync(() => io.stdout.write(text)))

/** Text on stderr, as written (no newline added). */
export const writeStderr = (text: string): Effect.Effect<void, never, Io> =>
  Effect.flatMap(Io, (io) => Effect.sync(() => io.stderr.write(text)))

/**
 * Effect's Console over the invocation's stdout and stderr: Effect's loggers and `Console.log`
 * write through the fiber's Console, which otherwise is the global console, the process's own.
 * Node's Console class does the formatting (and the indentation of groups) as the global one does.
 */
export const consoleOf = (io: IoService): Console.Console => {
  const unsafe = new NodeConsole({ stdout: io.stdout, stderr: io.stderr })
  const sync =
    <Args extends ReadonlyArray<unknown>>(method: (...args: Args) => void) =>
    (...args: Args) =>
      Effect.sync(() => method(...args))
  return {
    [Console.TypeId]: Console.TypeId,
    assert: sync(unsafe.assert),
    clear: Effect.sync(() => unsafe.clear()),
    count: sync(unsafe.count),
    countReset: sync(unsafe.countReset),
    debug: sync(unsafe.debug),
    dir: sync(unsafe.dir),
    dirxml: sync(unsafe.dirxml),
    error: sync(unsafe.error),
    group: (options) =>
      Effect.sync(() =>
        options?.collapsed === true ? unsafe.groupCollapsed(options.label) : unsafe.group(options?.label),
      ),
    groupEnd: Effect.sync(() => unsafe.groupEnd()),
    info: sync(unsafe.info),
    log: sync(unsafe.log),
    table: sync(unsafe.table),
    time: sync(unsafe.time),
    timeEnd: sync(unsafe.timeEnd),
    timeLog: sync(unsafe.timeLog),
    trace: sync(unsafe.trace),
    warn: sync(unsafe.warn),
    unsafe,
  }
}
