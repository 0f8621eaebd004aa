// The CLI: flags, the accounts file, and what it prints (URL and keys).
import { spawn } from "node:child_process"
import { mkdtempSync, writeFileSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { fileURLToPath } from "node:url"
import { describe, expect, it } from "vitest"
import { parseAccounts } from "./Accounts.ts"

const bin = fileURLToPath(new URL("../dist/bin.js", import.meta.url))

describe("salesintel-sandbox CLI", () => {
  it("serves on the given port with extra accounts and prints the URL and the keys", async () => {
    const dir = mkdtempSync(join(tmpdir(), "sandbox-cli-"))
    const accounts = join(dir, "accounts.json")
    writeFileSync(
      accounts,
      JSON.stringify({ accounts: [{ key: "team-key", permissions: ["people"], credits: 3 }] }),
    )
    const child = spawn(
      process.execPath,
      [
        bin,
        "--port",
        "0",
        "--contacts",
        "2000",
        "--companies",
        "200",
        "--seed",
        "5",
        "--accounts",
        accounts,
        "--latency-ms",
        "1",
      ],
      { stdio: ["ignore", "pipe", "pipe"] },
    )
    try {
      const output = await new Promise<string>((resolve, reject) => {
        let out = ""
        child.stdout.on("data", (c: Buffer) => {
          out += c.toString()
          if (out.includes("admin:")) resolve(out)
        })
        child.once("exit", (code) => reject(new Error(`exited ${code}: ${out}`)))
      })
      const url = /serving (http:\/\/127\.0\.0\.1:\d+)/.exec(output)?.[1]
      expect(url).toBeDefined()
      for (const key of [
        "sandbox-full",
        "sandbox-no-tech",
        "sandbox-no-access",
        "sandbox-low-credit",
        "team-key",
      ]) {
        expect(output).toContain(key)
      }
      expect(output).toContain("seed 5, 2000 contacts, 200 companies")
      const headers = { "X-CB-ApiKey": "team-key", Accept: "application/json" }
      const ok = await fetch(`${url}/service/people?page_size=3`, { headers })
      expect(ok.status).toBe(200)
      await ok.body?.cancel()
      const broke = await fetch(`${url}/service/people?page_size=3`, { headers })
      expect(broke.status).toBe(402)
      await broke.body?.cancel()
      const forbidden = await fetch(`${url}/service/technologies/append`, { headers })
      expect(forbidden.status).toBe(403)
      await forbidden.body?.cancel()
    } finally {
      child.kill("SIGTERM")
    }
  })

  it("rejects malformed accounts", () => {
    expect(() =>
      parseAccounts({ accounts: [{ key: "k", permissions: ["everything"], credits: 1 }] }),
    ).toThrow(/permissions/)
    expect(() => parseAccounts({ accounts: [{ key: "", permissions: [], credits: 1 }] })).toThrow(/key/)
    expect(() => parseAccounts({ accounts: [{ key: "k", permissions: [], credits: -1 }] })).toThrow(/credits/)
    expect(parseAccounts([{ key: "k", permissions: ["tech_addon"], credits: 0 }])).toEqual([
      { key: "k", permissions: ["tech_addon"], credits: 0 },
    ])
  })
})
