/**
 * How a command file runs itself: its shebang (`#!/usr/bin/env -S NAME=value node --flag ...`)
 * gives environment variables and node flags. A benchmark runs the command with this process's
 * node (`process.execPath`) and that same environment and flags, so what it measures is the
 * command as a user's shell runs it, on the node that runs the benchmark.
 */
import { readFileSync } from "node:fs"

export interface CommandLine {
  /** The variables the shebang sets (e.g. MALLOC_ARENA_MAX). */
  readonly env: Readonly<Record<string, string>>
  /** The node flags the shebang passes. */
  readonly flags: ReadonlyArray<string>
}

export const commandLine = (bin: string): CommandLine => {
  const first = readFileSync(bin, "utf8").split("\n")[0] ?? ""
  const words = first.startsWith("#!") ? first.split(/\s+/) : []
  const env: Record<string, string> = {}
  for (const word of words) {
    const assignment = /^([A-Z_][A-Z0-9_]*)=(.*)$/.exec(word)
    if (assignment?.[1] !== undefined) env[assignment[1]] = assignment[2] ?? ""
  }
  return { env, flags: words.filter((word) => word.startsWith("--")) }
}
