import { mkdtempSync, rmSync, writeFileSync } from "node:fs"
import { createServer, type Server } from "node:http"
import type { AddressInfo } from "node:net"
import { tmpdir } from "node:os"
import { join } from "node:path"
import * as NodeContext from "@effect/platform-node/NodeContext"
import * as Effect from "effect/Effect"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { runInProcess } from "../../command-line/src/testing/InProcess.ts"
import * as Main from "./Main.ts"

const main = Effect.provide(Main.main, NodeContext.layer)

// A provider that refuses every key, on this machine only.
let provider: Server
let baseUrl = ""
beforeAll(async () => {
  provider = createServer((_request, response) => {
    response.writeHead(401, { "content-type": "application/json" })
    response.end(JSON.stringify({ message: "Invalid API key" }))
  })
  await new Promise<void>((done) => provider.listen(0, "127.0.0.1", done))
  baseUrl = `http://127.0.0.1:${(provider.address() as AddressInfo).port}`
})

const directories: Array<string> = []
afterAll(async () => {
  for (const directory of directories) rmSync(directory, { recursive: true, force: true })
  await new Promise<void>((done) => provider.close(() => done()))
})

/** A directory holding config.json (and a key file when given), for a command run in it. */
const configIn = (config: Readonly<Record<string, unknown>>, keyFile?: string): string => {
  const directory = mkdtempSync(join(tmpdir(), "salesintel-main-"))
  directories.push(directory)
  const contacts = { searches: [{ name: "vps", filters: { job_levels: ["vp"] } }] }
  writeFileSync(
    join(directory, "config.json"),
    JSON.stringify({ base_url: baseUrl, credit_budget: 100, contacts, ...config }),
  )
  if (keyFile !== undefined) writeFileSync(join(directory, "key.txt"), keyFile)
  return directory
}

const runIn = (
  cwd: string,
  command: string,
  options: ReadonlyArray<string> = [],
  env: Readonly<Record<string, string>> = {},
) =>
  runInProcess(main, [command, "--config", "config.json", "--pglite-dir", join(cwd, "db"), ...options], {
    cwd,
    env,
  })

const escaped = (text: string) => text.replace(/[.*+?^${}()|[\]\\]/g, "\\$&")

describe("a key the provider rejects: the message names where the key came from", () => {
  for (const command of ["sync", "plan"]) {
    it(`${command}: SALESINTEL_API_KEY`, async () => {
      const ended = await runIn(configIn({}), command, [], { SALESINTEL_API_KEY: "wrong-key" })
      expect(ended.code).toBe(1)
      expect(ended.stderr).toContain("HTTP 401) rejected the API key")
      expect(ended.stderr).toContain("Check SALESINTEL_API_KEY (the key came from that environment variable")
      expect(ended.stderr).not.toContain("api_key in the config")
      expect(ended.stderr).not.toContain("wrong-key")
    })

    it(`${command}: the key file`, async () => {
      const cwd = configIn({ api_key_file: "key.txt" }, "wrong-key\n")
      const ended = await runIn(cwd, command)
      expect(ended.code).toBe(1)
      expect(ended.stderr).toContain(
        `Check the key file ${join(cwd, "key.txt")} (api_key_file in the config)`,
      )
      expect(ended.stderr).not.toContain("wrong-key")
    })

    it(`${command}: the config's api_key`, async () => {
      const ended = await runIn(configIn({ api_key: "wrong-key" }), command, [], { SALESINTEL_API_KEY: "" })
      expect(ended.code).toBe(1)
      expect(ended.stderr).toContain("Check api_key in the config")
    })
  }
})

describe("a stream name that is near a stream's: did you mean", () => {
  const cases = [
    [
      "sync",
      "--full-refresh",
      "contact",
      "unknown stream contact in --full-refresh (did you mean contacts?)",
    ],
    [
      "sync",
      "--streams",
      "contacts,compnies",
      "unknown stream compnies in --streams (did you mean companies?)",
    ],
    [
      "sync",
      "--reset-state",
      "Contacts,taxonomy-products",
      "unknown stream Contacts, taxonomy-products in --reset-state (did you mean contacts, taxonomy_products?)",
    ],
    [
      "plan",
      "--full-refresh",
      "contact",
      "unknown stream contact in --full-refresh (did you mean contacts?)",
    ],
  ] as const
  for (const [command, option, names, says] of cases)
    it(`${command} ${option} ${names}`, async () => {
      const cwd = configIn({ api_key: "k" })
      const ended = await runIn(cwd, command, [option, names])
      expect(ended.code).toBe(1)
      // The last line: plan says first which database's state it reads.
      expect(ended.stderr).toMatch(new RegExp(`(^|\\n)salesintel: ${escaped(says)}\\n$`))
    })

  it("lists the streams when a name is near none", async () => {
    const cwd = configIn({ api_key: "k" })
    const ended = await runIn(cwd, "sync", ["--streams", "contact,foo"])
    expect(ended.stderr).toBe(
      "salesintel: unknown stream contact, foo in --streams (streams: taxonomy_categories, taxonomy_products, contacts, companies)\n",
    )
  })
})
