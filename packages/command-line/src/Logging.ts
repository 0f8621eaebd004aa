/**
 * Where a command's log lines go: stderr, as text for people or, with `--log-format json`, one
 * JSON object per line for log collectors (Effect's own jsonLogger, and the same shape for the
 * lines a command writes itself).
 */
import * as Effect from "effect/Effect"
import * as FiberRef from "effect/FiberRef"
import * as Logger from "effect/Logger"
import { Io } from "./Io.ts"
import type { LogFormat } from "./Request.ts"

/** The `--log-format` of the running command (text outside `run`). */
export const currentLogFormat: FiberRef.FiberRef<LogFormat> = FiberRef.unsafeMake<LogFormat>("text")

/** The logger of `--log-format`, on stderr. */
export const logger = (format: LogFormat, isTTY: boolean | undefined) =>
  format === "json"
    ? Logger.withConsoleError(Logger.jsonLogger)
    : Logger.prettyLogger({ stderr: true, colors: isTTY === true })

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
): Effect.Effect<void, never, Io> =>
  Effect.gen(function* () {
    const format = yield* FiberRef.get(currentLogFormat)
    const io = yield* Io
    yield* Effect.sync(() =>
      io.stderr.write(
        format === "json"
          ? `${JSON.stringify({ timestamp: new Date().toISOString(), logLevel: level, message, annotations })}\n`
          : `${text}\n`,
      ),
    )
  })

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
