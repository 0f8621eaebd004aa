/**
 * SIGINT and SIGTERM as a graceful stop. The first signal completes a Deferred that the run
 * watches (it stops asking for more, lands what is in flight, commits it with its state, records
 * the run `interrupted` and exits 130 or 143); a second signal exits at once, with the same code
 * (the transactions keep tables and state whole). Also the bins' runner, which, unlike
 * NodeRuntime.runMain, leaves signals to the run instead of interrupting it.
 */
import { CommandLine } from "@salesintel/command-line"
import * as Cause from "effect/Cause"
import * as Deferred from "effect/Deferred"
import * as Effect from "effect/Effect"
import * as Exit from "effect/Exit"
import type * as Scope from "effect/Scope"

export type Signal = CommandLine.Signal

/** The shell's convention: 128 + the signal's number. */
export const exitCode = (signal: Signal): number => (signal === "SIGINT" ? 130 : 143)

/** A stop nobody requests (a run used as a library, without signals). */
export const never: Effect.Effect<Deferred.Deferred<Signal>> = Deferred.make<Signal>()

/**
 * Listens for the invocation's SIGINT and SIGTERM until the scope closes: the first completes the
 * returned Deferred, a second ends the process at once (only a process receives signals).
 */
export const listen: Effect.Effect<
  Deferred.Deferred<Signal>,
  never,
  Scope.Scope | CommandLine.Io
> = Effect.gen(function* () {
  const io = yield* CommandLine.Io
  const stop = yield* Deferred.make<Signal>()
  let received = false
  const handler = (signal: Signal) => {
    if (received) {
      io.stderr.write(`\nsecond ${signal}: exiting now (what committed stays committed)\n`)
      process.exit(exitCode(signal))
    }
    received = true
    io.stderr.write(
      `\n${signal}: stopping; what is in flight lands and commits (${signal} again to exit at once)\n`,
    )
    Deferred.unsafeDone(stop, Exit.succeed(signal))
  }
  yield* Effect.acquireRelease(
    Effect.sync(() => io.onSignal(handler)),
    (stopListening) => Effect.sync(stopListening),
  )
  return stop
})

/**
 * Runs a bin's program. A failure the program did not report itself is printed; any failure
 * leaves exit code 1 unless the program set one.
 */
export const runMain = <E>(program: Effect.Effect<void, E>): void => {
  Effect.runPromiseExit(program).then((exit) => {
    if (Exit.isFailure(exit)) {
      if (!Cause.isInterruptedOnly(exit.cause)) process.stderr.write(`${Cause.pretty(exit.cause)}\n`)
      if (!process.exitCode) process.exitCode = 1
    }
  })
}
