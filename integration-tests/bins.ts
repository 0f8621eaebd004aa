/**
 * The three bins for tests: in process (`runInProcess`, milliseconds a run: each bin's whole
 * program on captured streams, as built in dist/), or as processes (`binFiles`, for what only a
 * process shows: signals, the command files, a terminal, pipes).
 */
import { join } from "node:path"
import { fileURLToPath } from "node:url"
import * as NodeContext from "@effect/platform-node/NodeContext"
import { Main as Cli } from "@salesintel/cli"
import { Main as Loader } from "@salesintel/postgres"
import { Main as Source } from "@salesintel/source"
import * as Effect from "effect/Effect"
import * as InProcess from "../packages/command-line/src/testing/InProcess.ts"

const root = fileURLToPath(new URL("../", import.meta.url))

// The file system, path and terminal services @effect/cli asks for, as the bins' own.
const mains = {
  salesintel: Effect.provide(Cli.main, NodeContext.layer),
  "source-salesintel": Effect.provide(Source.main, NodeContext.layer),
  "salesintel-pg": Effect.provide(Loader.main, NodeContext.layer),
} as const

export type Bin = keyof typeof mains
export type Ended = InProcess.Ended

/** Each bin's built entry (dist/bin.js), for a run as a process. */
export const binFiles: Readonly<Record<Bin, string>> = {
  salesintel: join(root, "packages/cli/dist/bin.js"),
  "source-salesintel": join(root, "packages/source/dist/bin.js"),
  "salesintel-pg": join(root, "packages/postgres/dist/bin.js"),
}

/** `bin args`, run in this process; its environment is `invocation.env` alone. */
export const runInProcess = (
  bin: Bin,
  args: ReadonlyArray<string>,
  invocation?: InProcess.Invocation,
): Promise<Ended> => InProcess.runInProcess(mains[bin], args, invocation)
