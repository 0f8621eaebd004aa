import { existsSync, mkdtempSync, rmSync, writeFileSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import * as NodeContext from "@effect/platform-node/NodeContext"
import * as Effect from "effect/Effect"
import { describe, expect, it } from "vitest"
import { runInProcess } from "../../command-line/src/testing/InProcess.ts"
import { describe as describeOutcome, parseFile } from "./Forget.ts"
import * as Main from "./Main.ts"

const main = Effect.provide(Main.main, NodeContext.layer)

describe("salesintel forget --file", () => {
  it("takes kind,value lines, skipping blank lines and # comments", async () => {
    const text =
      "# erasure requests\nemail,Jane@Example.com\n\nmatch_id,m-1\nlinkedin_url,linkedin.com/in/jane\ndomain,acme.com\n"
    expect(await Effect.runPromise(parseFile("f.csv", text))).toEqual({
      emails: ["Jane@Example.com"],
      matchIds: ["m-1"],
      linkedinUrls: ["linkedin.com/in/jane"],
      domains: ["acme.com"],
    })
  })

  it("refuses a bad line as file:line", async () => {
    const error = await Effect.runPromise(Effect.flip(parseFile("f.csv", "email,a@b.c\nphone,555\n")))
    expect(error.message).toBe(
      'f.csv:2: expected kind,value with kind one of email, match_id, linkedin_url, domain (e.g. email,jane@example.com), got "phone,555"',
    )
    const empty = await Effect.runPromise(Effect.flip(parseFile("f.csv", "email,\n")))
    expect(empty.message).toMatch(/^f\.csv:1: /)
  })

  it("says per table what goes, and in a dry run that nothing changed", () => {
    const outcome = {
      people: 1,
      companies: 0,
      tables: [
        { table: "contacts", rows: 1 },
        { table: "_bought", rows: 1 },
      ],
      suppressed: 0,
      identifiers: 3,
    }
    expect(describeOutcome({ ...outcome, dryRun: true })).toBe(
      [
        "would forget 1 person and 0 companies (dry run: nothing changed)",
        "  contacts  1 to delete",
        "  _bought   1 to delete",
        "would suppress up to 3 identifiers (keyed hashes)",
      ].join("\n"),
    )
  })
})

describe("salesintel forget, refusing before the target is opened", () => {
  it("a bad --file line (exit 1, file:line) or no one named (exit 1): no database is created", async () => {
    const cwd = mkdtempSync(join(tmpdir(), "salesintel-forget-"))
    try {
      writeFileSync(join(cwd, "erasures.csv"), "email,jane@example.com\nname,Jane Doe\n")
      const db = join(cwd, "db")
      const bad = await runInProcess(main, ["forget", "--file", "erasures.csv", "--pglite-dir", db], { cwd })
      expect(bad.code).toBe(1)
      expect(bad.stderr).toContain("salesintel: erasures.csv:2: expected kind,value")
      const none = await runInProcess(main, ["forget", "--pglite-dir", db], { cwd })
      expect(none.code).toBe(1)
      expect(none.stderr).toContain("salesintel: expected someone to forget")
      expect(existsSync(db)).toBe(false)
    } finally {
      rmSync(cwd, { recursive: true, force: true })
    }
  })
})
