/**
 * The sandbox provider in a child process of its own (its CLI), as the real provider would be: a
 * benchmark's client and the server then do not share an event loop or a CPU's worth of time.
 */
import { type ChildProcess, spawn } from "node:child_process"
import { request } from "node:http"
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

/**
 * POSTs to one of the sandbox's admin endpoints (`/_sandbox/reset`) on a connection of its own:
 * a kept-alive socket from before a long run may be closed by the server just as it is reused.
 */
export const post = (url: string, body?: unknown): Promise<void> =>
  new Promise((resolve, reject) => {
    const headers = body === undefined ? {} : { "Content-Type": "application/json" }
    const outgoing = request(url, { method: "POST", agent: false, headers }, (response) => {
      response.resume()
      response.on("end", () =>
        response.statusCode === 200 ? resolve() : reject(new Error(`POST ${url}: ${response.statusCode}`)),
      )
    })
    outgoing.on("error", reject)
    outgoing.end(body === undefined ? undefined : JSON.stringify(body))
  })

/** GETs JSON on a connection of its own (as `post`: no kept-alive socket the server may close). */
const getJson = (url: string): Promise<unknown> =>
  new Promise((resolve, reject) => {
    const outgoing = request(url, { method: "GET", agent: false }, (response) => {
      let body = ""
      response.setEncoding("utf8")
      response.on("data", (chunk: string) => {
        body += chunk
      })
      response.on("end", () => {
        if (response.statusCode !== 200) return reject(new Error(`GET ${url}: ${response.statusCode}`))
        try {
          resolve(JSON.parse(body))
        } catch (error) {
          reject(error)
        }
      })
    })
    outgoing.on("error", reject)
    outgoing.end()
  })

/** The sandbox's own count of one key's requests (every endpoint), of its 429s, and its charge. */
export const accountCounts = async (
  url: string,
  key = "sandbox-full",
): Promise<{
  readonly requests: number
  /** Answered 200 by a credited endpoint (a search page, a purchase, an append). */
  readonly creditedPages: number
  readonly rateLimited: number
  readonly credits: number
}> => {
  const answer = (await getJson(`${url}/_sandbox/accounts`)) as {
    accounts: Record<string, { credits_charged: number; requests: Record<string, Record<string, number>> }>
  }
  const account = answer.accounts[key]
  const byEndpoint = Object.values(account?.requests ?? {})
  return {
    requests: byEndpoint.reduce(
      (sum, byStatus) => sum + Object.values(byStatus).reduce((a, b) => a + b, 0),
      0,
    ),
    creditedPages: ["people.search", "technologies.append"].reduce(
      (sum, endpoint) => sum + (account?.requests[endpoint]?.["200"] ?? 0),
      0,
    ),
    rateLimited: byEndpoint.reduce((sum, byStatus) => sum + (byStatus["429"] ?? 0), 0),
    credits: account?.credits_charged ?? 0,
  }
}
