// The CLI: flags, the accounts file, and what it prints (URL and keys).
import { spawn } from "node:child_process"
import { mkdtempSync, writeFileSync } from "node:fs"
import type { AddressInfo } from "node:net"
import { createServer } from "node:net"
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

  /** Runs the bin to its end (bounded), with what it wrote to each stream. */
  const runToEnd = (args: ReadonlyArray<string>) =>
    new Promise<{ code: number | null; stdout: string; stderr: string }>((resolve) => {
      const child = spawn(process.execPath, [bin, "--contacts", "100", "--companies", "10", ...args], {
        stdio: ["ignore", "pipe", "pipe"],
      })
      let stdout = ""
      let stderr = ""
      child.stdout.on("data", (c: Buffer) => {
        stdout += c.toString()
      })
      child.stderr.on("data", (c: Buffer) => {
        stderr += c.toString()
      })
      // A bin that wrongly starts serving is stopped, and the test then fails on its exit code.
      const timer = setTimeout(() => child.kill("SIGKILL"), 20_000)
      child.once("exit", (code) => {
        clearTimeout(timer)
        resolve({ code, stdout, stderr })
      })
    })

  const oneLine = (stderr: string) => {
    expect(stderr.trimEnd().split("\n")).toHaveLength(1)
    expect(stderr).not.toMatch(/\n\s+at |node:internal|Error \[ERR_/)
  }

  it("an unknown flag, a missing value or a bad number: one line on stderr naming it, exit 2", async () => {
    const cases = [
      [["--bogus"], "Unknown option '--bogus'"],
      [["--port"], "--port"],
      [["--port", "eighty"], "--port must be a non-negative integer, got 'eighty'"],
      [["stray"], "Unexpected argument 'stray'"],
    ] as const
    for (const [args, said] of cases) {
      const { code, stdout, stderr } = await runToEnd(args)
      expect(code, stderr).toBe(2)
      expect(stdout).toBe("")
      expect(stderr).toContain(`salesintel-sandbox: `)
      expect(stderr).toContain(said)
      expect(stderr).toContain("(see --help)")
      oneLine(stderr)
    }
    // Four process starts: generous for a loaded machine.
  }, 120_000)

  it("a port in use: one line naming the address, exit 1", async () => {
    const busy = createServer()
    await new Promise<void>((resolve) => busy.listen(0, "127.0.0.1", () => resolve()))
    const { port } = busy.address() as AddressInfo
    try {
      const { code, stdout, stderr } = await runToEnd(["--port", String(port)])
      expect(code, stderr).toBe(1)
      expect(stdout).toBe("")
      expect(stderr).toContain(`127.0.0.1:${port} is already in use`)
      expect(stderr).toContain("--port 0")
      oneLine(stderr)
    } finally {
      busy.close()
    }
  }, 60_000)

  it("an unreadable accounts file: one line naming the flag, exit 1", async () => {
    const missing = join(tmpdir(), "no-such-dir-sandbox", "accounts.json")
    const { code, stderr } = await runToEnd(["--port", "0", "--accounts", missing])
    expect(code, stderr).toBe(1)
    expect(stderr).toContain("--accounts: ENOENT")
    oneLine(stderr)
  }, 60_000)

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
