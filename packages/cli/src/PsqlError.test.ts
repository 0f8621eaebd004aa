import { describe, expect, it } from "vitest"
import * as PsqlError from "./PsqlError.ts"

// Each expected text is what psql 15 printed for the same statement and error.
const error = (fields: Partial<Parameters<typeof PsqlError.format>[0]>) => ({
  severity: "ERROR",
  code: "42703",
  message: 'column "compnay_name" does not exist',
  ...fields,
})

describe("PsqlError.format", () => {
  it("prints the line holding the position with a caret, then DETAIL and HINT", () => {
    const statement = "select contact_id,\n  compnay_name from contacts"
    expect(
      PsqlError.format(
        error({ position: 22, hint: 'Perhaps you meant to reference the column "contacts.company_name".' }),
        statement,
      ),
    ).toBe(
      [
        'ERROR:  column "compnay_name" does not exist',
        "LINE 2:   compnay_name from contacts",
        "          ^",
        'HINT:  Perhaps you meant to reference the column "contacts.company_name".',
        "",
      ].join("\n"),
    )
    expect(
      PsqlError.format(
        error({ message: "duplicate key", detail: "Key (id)=(1) already exists.", code: "23505" }),
        "insert into t values (1)",
      ),
    ).toBe("ERROR:  duplicate key\nDETAIL:  Key (id)=(1) already exists.\n")
  })

  it("cuts a long line around the position as psql does", () => {
    const long = (tail: string) =>
      `select 1 as aaaaaaaaaaaaaaaaaaaaaaa, 2 as bbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbb, 1 + 'abc'${tail}`
    const at = (statement: string, text: string) => statement.indexOf(text) + 1
    const middle = long(" as ccccccccccccccccccccccccccccccccccccccc, 2 as dddddddddddddddddddddddddddddddd")
    expect(PsqlError.positionLines(middle, at(middle, "'abc'"))).toBe(
      [
        "LINE 1: ...bbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbb, 1 + 'abc' as c...",
        "                                                             ^",
        "",
      ].join("\n"),
    )
    const end = long("")
    expect(PsqlError.positionLines(end, at(end, "'abc'"))).toBe(
      [
        "LINE 1: ...s bbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbb, 1 + 'abc'",
        "                                                                  ^",
        "",
      ].join("\n"),
    )
    const start = `select 1 + 'abc' as aaaaaaaaaaaaaaaaaaaaaaa, ${"b".repeat(74)}`
    expect(PsqlError.positionLines(start, 12)).toBe(
      [
        "LINE 1: select 1 + 'abc' as aaaaaaaaaaaaaaaaaaaaaaa, bbbbbbbbbbbbbbb...",
        "                   ^",
        "",
      ].join("\n"),
    )
  })

  it("shows a tab as a space, counts characters (not bytes), and a CR LF as one line end", () => {
    expect(PsqlError.positionLines("select 1,\n\t2 + 'x'", 16)).toBe("LINE 2:  2 + 'x'\n             ^\n")
    expect(PsqlError.positionLines("select 'é' || nope", 15)).toBe(
      "LINE 1: select 'é' || nope\n                      ^\n",
    )
    expect(PsqlError.positionLines("select 1,\r\n nope", 13)).toBe("LINE 2:  nope\n         ^\n")
    expect(PsqlError.positionLines("select 1", 40)).toBe("")
  })

  it("puts the caret in a function's query, with QUERY and CONTEXT after", () => {
    expect(
      PsqlError.format(
        error({
          message: 'invalid input syntax for type integer: "zz"',
          internalQuery: "SELECT 1 + 'zz'",
          internalPosition: 12,
          where: "PL/pgSQL function inline_code_block line 1 at PERFORM",
        }),
        "do $$ begin perform 1 + 'zz'; end $$",
      ),
    ).toBe(
      [
        'ERROR:  invalid input syntax for type integer: "zz"',
        "LINE 1: SELECT 1 + 'zz'",
        "                   ^",
        "QUERY:  SELECT 1 + 'zz'",
        "CONTEXT:  PL/pgSQL function inline_code_block line 1 at PERFORM",
        "",
      ].join("\n"),
    )
  })
})
