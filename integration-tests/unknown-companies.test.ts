import { mkdtempSync, rmSync, writeFileSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { Catalog, type Message } from "@salesintel/airbyte"
import { Commands } from "@salesintel/source"
import * as Chunk from "effect/Chunk"
import * as Effect from "effect/Effect"
import * as Stream from "effect/Stream"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { runTag } from "../packages/postgres/src/testing/RunTag.ts"
import { runInProcess } from "./bins.ts"
import { sandboxForFile } from "./sandbox.ts"

/** `salesintel ARGS` in process (what it prints and its exit code are the command's logic). */
const salesintelRun = (args: ReadonlyArray<string>, cwd: string) =>
  runInProcess("salesintel", args, { cwd, env: {} })

const unknownDomain = "no-such-company-anywhere.example"

const sandbox = sandboxForFile({ seed: 11, contacts: 500, companies: 50 })
let cwd: string
beforeAll(async () => {
  cwd = mkdtempSync(join(tmpdir(), `salesintel-unknown-companies-${runTag()}-`))
})
afterAll(async () => {
  if (cwd !== undefined) rmSync(cwd, { recursive: true, force: true })
})

const account = () => sandbox.running.accounts()["sandbox-full"]
const known = () => sandbox.dataset.companies.slice(0, 3).map((company) => company.domain)
const config = () => ({
  api_key: "sandbox-full",
  base_url: sandbox.url,
  credit_budget: 1_000,
  requests_per_minute: 60_000,
  companies: { domains: [known()[0], unknownDomain, ...known().slice(1)] },
})

describe("a company domain that matches no company", () => {
  it("costs nothing at the sandbox: an append of it alone returns no company and charges no credit", async () => {
    sandbox.reset()
    const response = await fetch(
      `${sandbox.url}/service/technologies/append?company_domain=${unknownDomain}&page=1&page_size=50`,
      { headers: { "X-CB-ApiKey": "sandbox-full", Accept: "application/json" } },
    )
    expect(response.status).toBe(200)
    const body = (await response.json()) as { result_count: number; search_results: ReadonlyArray<unknown> }
    expect(body.result_count).toBe(0)
    expect(body.search_results).toEqual([])
    expect(account()?.credits_charged).toBe(0)
  })

  it("salesintel plan says the figure is an upper bound; sync names the domain in a WARN on stderr and spends what the sandbox charged", async () => {
    writeFileSync(join(cwd, "config.json"), JSON.stringify(config()))
    const target = ["--pglite-dir", join(cwd, "db")]
    sandbox.reset()
    const plan = await salesintelRun(["plan", "--config", "config.json", ...target], cwd)
    expect(plan.code).toBe(0)
    expect(plan.stdout).toContain("at most 4 credits at one per key")
    expect(plan.stdout).toContain("so their 4 credits are an upper bound")
    expect(plan.stdout).toContain(
      "credits: at most 4 of the 1,000 credit budget (an upper bound: see companies)",
    )
    expect(account()?.credits_charged ?? 0).toBe(0)

    const synced = await salesintelRun(["sync", "--config", "config.json", ...target], cwd)
    expect(synced.code).toBe(0)
    const warnings = synced.stderr.split("\n").filter((line) => line.startsWith("WARN "))
    expect(warnings).toEqual([
      `WARN companies: 1 of the 4 domains in companies.domains looked up matched no company at the provider, so nothing was charged for it: ${unknownDomain} (a domain is matched exactly: check the spelling, without www. or a path)`,
    ])
    // One credit per company returned: the three known domains, nothing for the unknown one.
    const charged = account()?.credits_charged
    expect(charged).toBe(3)
    expect(synced.stdout).toMatch(/companies +3 records +3 credits/)
    expect(synced.stdout).toContain(`credits spent: ${charged} of 1000`)

    // Now the state knows: the three matched (not due again), the unknown one is not looked up again.
    const after = await salesintelRun(["plan", "--config", "config.json", ...target], cwd)
    expect(after.stdout).toContain(
      "companies: 4 domains (0 new, 0 due again), 0 names (0 new, 0 due again): 0 credits",
    )
    expect(after.stdout).not.toContain("upper bound")
  }, 120_000)

  it("the source's read says it in an Airbyte LOG message at WARN", async () => {
    sandbox.reset()
    const messages = await Effect.runPromise(
      Stream.runCollect(
        Commands.read({
          config: config(),
          catalog: Catalog.configuredAll("incremental", ["companies"]),
          state: [],
        }),
      ).pipe(Effect.map(Chunk.toReadonlyArray)),
    )
    const warnings = messages.filter(
      (message): message is Message.LogMessage => message.type === "LOG" && message.log.level === "WARN",
    )
    expect(warnings.map((message) => message.log.message)).toEqual([
      `companies: 1 of the 4 domains in companies.domains looked up matched no company at the provider, so nothing was charged for it: ${unknownDomain} (a domain is matched exactly: check the spelling, without www. or a path)`,
    ])
    expect(account()?.credits_charged).toBe(3)
  })
})
