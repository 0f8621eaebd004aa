/**
 * The sandbox provider in a child process of its own (its CLI), as the real provider would be: a
 * benchmark's client and the server then do not share an event loop or a CPU's worth of time.
 */
import { type ChildProcess, spawn } from "node:child_process"
import { fileURLToPath } from "node:url"

// Compiled to bench/dist/: the packages are two folders up.
const sandboxBin = fileURLToPath(new URL("../../packages/sandbox/dist/bin.js", import.meta.url))

export interface RunningSandbox {
  readonly url: string
  readonly child: ChildProcess
}

/** Starts the sandbox with the given CLI arguments (after `--port 0`); resolves once it serves. */
export const startSandbox = (args: ReadonlyArray<string>): Promise<RunningSandbox> =>
  new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [sandboxBin, "--port", "0", ...args], {
      stdio: ["ignore", "pipe", "inherit"],
    })
    let output = ""
    child.stdout?.on("data", (data: Buffer) => {
      output += data.toString()
      const match = /serving (http:\/\/\S+)/.exec(output)
      if (match?.[1] !== undefined && output.includes("admin:")) resolve({ url: match[1], child })
    })
    child.once("exit", (code) => reject(new Error(`sandbox exited early (${code})`)))
    setTimeout(() => reject(new Error("sandbox did not start in 60 s")), 60_000).unref()
  })
