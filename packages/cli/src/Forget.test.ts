import * as Effect from "effect/Effect"
import { describe, expect, it } from "vitest"
import { describe as describeOutcome, parseFile } from "./Forget.ts"

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
