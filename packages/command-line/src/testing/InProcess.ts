/**
 * A command run in process, as a test runs it: arguments, environment, directory and stdin in;
 * stdout, stderr and the exit code out. Nothing of the test's own process is read or changed
 * (its environment, directory, streams, exit code, signal handlers), so runs may go side by side.
 */
import { PassThrough, Writable } from "node:stream"
import { StringDecoder } from "node:string_decoder"
import * as Cause from "effect/Cause"
import * as Effect from "effect/Effect"
import * as Exit from "effect/Exit"
import { Io, type IoService, type Output } from "../Io.ts"

export interface Invocation {
  /** The whole environment the command sees: none of the test process's. */
  readonly env?: Readonly<Record<string, string | undefined>>
  /** Where relative paths are taken from; the test process's directory by default. */
  readonly cwd?: string
  /** All of stdin (it ends after this). */
  readonly stdin?: string
  /** stdout is a terminal (a person reads it), not a pipe. */
  readonly stdoutIsTTY?: boolean
  /** Called with all of stderr so far after each write: to act once a command has said something. */
  readonly onStderr?: (stderr: string) => void
}

export interface Ended {
  readonly code: number
  readonly stdout: string
  readonly stderr: string
}

/** A stream that keeps what is written to it, as text. */
const captured = (isTTY: boolean, onText?: (text: string) => void) => {
  const decoder = new StringDecoder("utf8")
  let text = ""
  const stream: Output = Object.assign(
    new Writable({
      decodeStrings: false,
      write(chunk: unknown, _encoding, done) {
        text += typeof chunk === "string" ? chunk : decoder.write(chunk as Buffer)
        onText?.(text)
        done()
      },
    }),
    { isTTY },
  )
  return { stream, text: () => text }
}

/**
 * Runs `main` (a bin's whole program) on `args`, the words after the bin's name. It receives no
 * signal: those are a process's (the process tests and the chaos suite send them).
 */
export const runInProcess = async <E>(
  main: Effect.Effect<void, E, Io>,
  args: ReadonlyArray<string>,
  invocation: Invocation = {},
): Promise<Ended> => {
  const stdout = captured(invocation.stdoutIsTTY === true)
  const stderr = captured(false, invocation.onStderr)
  const stdin = new PassThrough()
  stdin.end(invocation.stdin ?? "")
  let exitCode = 0
  const io: IoService = {
    args,
    env: invocation.env ?? {},
    cwd: invocation.cwd ?? process.cwd(),
    stdin,
    stdout: stdout.stream,
    stderr: stderr.stream,
    onSignal: () => () => {},
    exitCode: () => exitCode,
    setExitCode: (code) => {
      exitCode = code
    },
  }
  const exit = await Effect.runPromiseExit(Effect.provideService(main, Io, io))
  // As the bins' runner (StopSignal.runMain): a failure the command did not report is printed,
  // and the exit code is 1 unless the command set one.
  if (Exit.isFailure(exit)) {
    if (!Cause.isInterruptedOnly(exit.cause)) stderr.stream.write(`${Cause.pretty(exit.cause)}\n`)
    if (exitCode === 0) exitCode = 1
  }
  return { code: exitCode, stdout: stdout.text(), stderr: stderr.text() }
}
