import { describe, expect, it } from "vitest"
import { split } from "./Statements.ts"

describe("Statements.split", () => {
  it("splits at the semicolons that end statements, dropping empty ones", () => {
    expect(split("select 1; select 2;")).toEqual(["select 1", "select 2"])
    expect(split(";; select 1 ;\n")).toEqual(["select 1"])
    expect(split("select 1")).toEqual(["select 1"])
    expect(split("  ")).toEqual([])
  })

  it("keeps semicolons inside strings, identifiers, dollar quotes and comments", () => {
    expect(split("select 'a;b', 'it''s;'; select 2")).toEqual(["select 'a;b', 'it''s;'", "select 2"])
    expect(split(`select E'\\';x'; select 2`)).toEqual([`select E'\\';x'`, "select 2"])
    expect(split(`select 1 as "a;""b"; select 2`)).toEqual([`select 1 as "a;""b"`, "select 2"])
    expect(split("select $$a;b$$, $t$ $$; $t$; select 2")).toEqual([
      "select $$a;b$$, $t$ $$; $t$",
      "select 2",
    ])
    expect(split("select 1 -- no; split\n; select 2")).toEqual(["select 1 -- no; split", "select 2"])
    expect(split("select /* a; /* nested; */ b; */ 1; select 2")).toEqual([
      "select /* a; /* nested; */ b; */ 1",
      "select 2",
    ])
  })

  it("does not take a parameter or an identifier's $ for a dollar quote", () => {
    expect(split("select $1; select a$b$ from t; select 3")).toEqual([
      "select $1",
      "select a$b$ from t",
      "select 3",
    ])
  })

  it("drops statements that are only comments", () => {
    expect(split("select 1; -- the end\n")).toEqual(["select 1"])
    expect(split("/* nothing */")).toEqual([])
  })

  it("keeps a meta-command where a statement begins whole, to the end of its line or a semicolon", () => {
    expect(split("\\d")).toEqual(["\\d"])
    expect(split("select 1;\n\\d contacts\nselect 2")).toEqual(["select 1", "\\d contacts", "select 2"])
    expect(split("\\dt; select 1")).toEqual(["\\dt", "select 1"])
    expect(split("  \\d contacts;")).toEqual(["\\d contacts"])
    // Inside a statement a backslash is the statement's (the server says what it makes of it).
    expect(split("select E'\\\\d' as x; select 1 \\d")).toEqual(["select E'\\\\d' as x", "select 1 \\d"])
  })
})
