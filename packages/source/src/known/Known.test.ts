import { mkdtempSync, rmSync, writeFileSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import type { Message } from "@salesintel/airbyte"
import * as Effect from "effect/Effect"
import * as Either from "effect/Either"
import * as Stream from "effect/Stream"
import { afterAll, describe, expect, it } from "vitest"
import * as Commands from "../Commands.ts"
import * as Config from "../Config.ts"
import * as Identity from "../streams/contacts/Identity.ts"
import * as File from "./File.ts"
import * as Rows from "./Rows.ts"

const directory = mkdtempSync(join(tmpdir(), "salesintel-known-unit-"))
afterAll(() => rmSync(directory, { recursive: true, force: true }))

const write = (name: string, text: string) => {
  const path = join(directory, name)
  writeFileSync(path, text)
  return path
}

const base = { api_key: "k", credit_budget: 1 }

const checkFile = (path: string) =>
  Effect.runPromise(
    Effect.either(
      Rows.checked(
        "known contacts",
        File.rows("contacts.known_file", path, Identity.fields),
        Rows.decodeRow(Identity.fields, Identity.fromFields),
        (values) => Effect.succeed(values.length),
      ),
    ),
  )

describe("known contacts: each entry exactly one identity", () => {
  it("decodes the four kinds, and says what is wrong with the rest", () => {
    expect(Identity.fromFields({ email: " Jane@Example.com " })).toEqual(
      Either.right({ kind: "email", email: "jane@example.com" }),
    )
    expect(
      Identity.fromFields({ first_name: "Dana", last_name: "Reyes", company_domain: "Acme.com" }),
    ).toEqual(
      Either.right({ kind: "name", first_name: "Dana", last_name: "Reyes", company_domain: "acme.com" }),
    )
    expect(
      Either.isRight(Identity.fromFields({ linkedin_url: "https://www.linkedin.com/in/dana-reyes" })),
    ).toBe(true)
    expect(Identity.fromFields({ match_id: "m-1" })).toEqual(
      Either.right({ kind: "match_id", match_id: "m-1" }),
    )
    expect(Identity.fromFields({})).toEqual(Either.left(expect.stringContaining("this one has none")))
    expect(Identity.fromFields({ email: "a@b.com", match_id: "m" })).toEqual(
      Either.left(expect.stringContaining("this one has email and match_id")),
    )
    expect(Identity.fromFields({ first_name: "Dana", last_name: "Reyes" })).toEqual(
      Either.left(expect.stringContaining("company_domain is missing")),
    )
    expect(Identity.fromFields({ linkedin_url: "dana-reyes" })).toEqual(
      Either.left(expect.stringContaining("not a full profile URL")),
    )
  })

  it("refuses a bad inline entry at config decode, naming its index and field", () => {
    const decoded = Config.decode({
      ...base,
      contacts: { known: [{ email: "jane@example.com" }, { first_name: "Dana" }, { emial: "x@y.z" }] },
    })
    expect(Either.isLeft(decoded)).toBe(true)
    const message = Either.isLeft(decoded) ? decoded.left.message : ""
    expect(message).toContain("contacts.known[1]")
    expect(message).toContain("last_name and company_domain are missing")
    expect(message).toContain("contacts.known[2]")
    const file = Config.decode({ ...base, contacts: { known_file: "people.xlsx" } })
    expect(Either.isLeft(file) && file.left.message).toContain("contacts.known_file")
  })

  it("checks a CSV whole: every bad row named by file and line", async () => {
    const path = write(
      "people.csv",
      [
        "email,first_name,last_name,company_domain,linkedin_url,match_id",
        "jane@example.com,,,,,",
        ',"Dana","Reyes, Jr",acme.com,,',
        "",
        "not-an-email,,,,,",
        "a@b.com,,,,,m-1",
        "only,two",
      ].join("\n"),
    )
    const checked = await checkFile(path)
    expect(Either.isLeft(checked)).toBe(true)
    const message = Either.isLeft(checked) ? checked.left.message : ""
    expect(message).toContain("3 of 5 rows are refused")
    expect(message).toContain(`${path}:5: email "not-an-email" is not an email address`)
    expect(message).toContain(`${path}:6: expected exactly one identity`)
    expect(message).toContain(`${path}:7: expected 6 cells as the header has, found 2`)
    const good = write("good.csv", "email\njane@example.com\n\nJOHN@example.com\n")
    expect(await checkFile(good)).toEqual(Either.right(2))
  })

  it("checks NDJSON: a field not named as one, or a line that is not an object, is refused", async () => {
    const path = write("people.ndjson", '{"email": "jane@example.com"}\n[1]\n{"mail": "x@y.z"}\n')
    const checked = await checkFile(path)
    const message = Either.isLeft(checked) ? checked.left.message : ""
    expect(message).toContain(`${path}:2: expected a JSON object`)
    expect(message).toContain(`${path}:3: "mail" is not a field here`)
    expect(Either.isLeft(await checkFile(write("unknown.csv", "mail\nx@y.z\n")))).toBe(true)
    expect(Either.isLeft(await checkFile(join(directory, "absent.csv")))).toBe(true)
  })

  it("a query needs the target's database: refused at check and read in a pipe", async () => {
    const config = { ...base, contacts: { known_query: "select email from crm.people" } }
    const [status] = await Effect.runPromise(Stream.runCollect(Commands.check(config))).then((c) => [...c])
    const connection = (status as Message.ConnectionStatusMessage).connectionStatus
    expect(connection.status).toBe("FAILED")
    expect(connection.message).toContain("contacts.known_query")
    expect(connection.message).toContain("salesintel sync")
    const companies = { ...base, companies: { domains_query: "select domain from crm.accounts" } }
    const messages = await Effect.runPromise(
      Stream.runCollect(
        Commands.read({
          config: companies,
          catalog: { streams: [] },
        }),
      ),
    ).then((c) => [...c])
    expect((messages[0] as Message.TraceErrorMessage).trace.error.message).toContain(
      "companies.domains_query",
    )
  })
})
