/**
 * `salesintel sql` as a psql user expects it, on each backend (run in process, integration-tests/bins.ts):
 * a failed statement printed as psql prints it (ERROR, LINE with a caret, DETAIL, HINT) with exit
 * code 1; psql's describe commands (`\d`, `\dt`, `\dv`, `\d NAME`) answered from the catalog; and
 * read-only unless `--write`, the refusal saying why.
 */
import { Query } from "@salesintel/cli"
import { Database } from "@salesintel/postgres"
import * as Effect from "effect/Effect"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { backends, open } from "../packages/postgres/src/testing/Backends.ts"
import { runInProcess as run } from "./bins.ts"

// A PGlite opened per command takes seconds on a busy machine.
const slow = { timeout: 240_000 }

describe.each(await backends())("salesintel sql as psql on $name", (backend) => {
  let db: Awaited<ReturnType<typeof open>>
  let sql: (...args: ReadonlyArray<string>) => ReturnType<typeof run>

  beforeAll(async () => {
    db = await open(backend, "cli sql psql")
    const schema = `"${db.schema}"`
    await db.run(
      Effect.flatMap(Database.Database, (database) =>
        database.exec(
          [
            `CREATE SCHEMA ${schema}`,
            `CREATE TABLE ${schema}.contacts (contact_id int PRIMARY KEY, company_name text NOT NULL DEFAULT 'none', score numeric(10,2))`,
            `CREATE VIEW ${schema}.big_scores AS SELECT contact_id, score FROM ${schema}.contacts WHERE score > 10`,
            `INSERT INTO ${schema}.contacts VALUES (1, 'Acme', 12.5), (2, 'Globex', 3), (3, 'Initech', NULL)`,
          ].join("; "),
        ),
      ),
    )
    const target = db.url === undefined ? ["--pglite-dir", db.pgliteDir ?? ""] : ["--database-url", db.url]
    sql = (...args) => run("salesintel", ["sql", ...target, "--schema", db.schema, ...args])
    // PGlite's files are one process's at a time: the command's, while it runs.
    await db.suspend()
  }, 120_000)

  afterAll(async () => {
    await db.resume()
    await db.close()
  }, 120_000)

  const count = async () => (await sql("--format", "csv", "select count(*) from contacts")).stdout

  it("prints a failed statement as psql does: ERROR, the line with a caret, the HINT", slow, async () => {
    const ended = await sql(
      "select contact_id from contacts;\nselect contact_id,\n  compnay_name from contacts",
    )
    expect(ended.code).toBe(1)
    // The statement before the failing one printed, as psql does.
    expect(ended.stdout).toContain("(3 rows)")
    expect(ended.stderr).toBe(
      [
        'salesintel: ERROR:  column "compnay_name" does not exist',
        "LINE 2:   compnay_name from contacts",
        "          ^",
        'HINT:  Perhaps you meant to reference the column "contacts.company_name".',
        "",
      ].join("\n"),
    )
    const duplicate = await sql("--write", "insert into contacts values (1, 'Again', 1)")
    expect(duplicate.code).toBe(1)
    expect(duplicate.stderr).toBe(
      [
        'salesintel: ERROR:  duplicate key value violates unique constraint "contacts_pkey"',
        "DETAIL:  Key (contact_id)=(1) already exists.",
        "",
      ].join("\n"),
    )
  })

  it("answers \\d, \\dt, \\dv and \\d NAME from the catalog, in the schema", slow, async () => {
    const relations = await sql("\\d")
    expect(relations.code, relations.stderr).toBe(0)
    const lines = relations.stdout.split("\n")
    expect(lines[0]?.trim()).toBe("List of relations")
    expect(lines[1]).toMatch(/^Schema +\| Name +\| Type +\| Owner$/)
    expect(
      lines.slice(3, 5).map((line) =>
        line
          .split("|")
          .map((cell) => cell.trim())
          .slice(0, 3),
      ),
    ).toEqual([
      [db.schema, "big_scores", "view"],
      [db.schema, "contacts", "table"],
    ])
    expect(lines[5]).toBe("(2 rows)")
    const tables = await sql("--format", "json", "\\dt")
    expect(JSON.parse(tables.stdout)).toEqual([
      { Schema: db.schema, Name: "contacts", Type: "table", Owner: expect.any(String) },
    ])
    const views = await sql("--format", "csv", "\\dv")
    expect(views.stdout.split("\r\n")).toEqual([
      "Schema,Name,Type,Owner",
      expect.stringMatching(new RegExp(`^"?${db.schema}"?,big_scores,view,\\w+$`)),
      "",
    ])
    // A describe command on its own line among statements; a trailing semicolon as psql takes it.
    const columns = await sql("select 1 as one;\n\\d contacts;\n\\d big_scores")
    expect(columns.code, columns.stderr).toBe(0)
    const [, contacts, view] = columns.stdout.split("\n\n")
    // The title centred over the table, as psql centres it.
    expect(contacts?.split("\n")).toEqual([
      expect.stringMatching(new RegExp(`^ *Table "${db.schema}.contacts"$`)),
      "Column       | Type          | Nullable | Default",
      "-------------+---------------+----------+-------------",
      "contact_id   | integer       | not null |",
      "company_name | text          | not null | 'none'::text",
      "score        | numeric(10,2) |          |",
      "(3 rows)",
    ])
    expect(view?.split("\n").slice(0, 2)).toEqual([
      expect.stringMatching(new RegExp(`^ *View "${db.schema}.big_scores"$`)),
      "Column     | Type          | Nullable | Default",
    ])
  })

  it("says which describe commands it has, and a relation it did not find", slow, async () => {
    const unknown = await sql("\\dx")
    expect(unknown.code).toBe(1)
    expect(unknown.stderr).toBe(
      "salesintel: invalid command \\dx: sql answers \\d (the schema's relations), \\dt (tables), \\dv (views) and \\d NAME (a table's or view's columns)\n",
    )
    const missing = await sql("\\d nosuch")
    expect(missing.code).toBe(1)
    expect(missing.stderr).toBe('salesintel: Did not find any relation named "nosuch".\n')
  })

  it("is read-only unless --write, and its refusal says why", slow, async () => {
    expect(await count()).toBe("count\r\n3\r\n")
    for (const statement of ["delete from contacts", "begin; delete from contacts; commit"]) {
      const refused = await sql(statement)
      expect(refused.code).toBe(1)
      expect(refused.stderr).toMatch(
        /^salesintel: ERROR: {2}cannot execute DELETE in a read-only transaction\n/,
      )
      expect(refused.stderr).toContain("a row deleted here is bought again by the next sync")
      expect(refused.stderr).toMatch(/Pass --write to change data\.\n$/)
    }
    expect(await count()).toBe("count\r\n3\r\n")
    const written = await sql("--write", "delete from contacts where contact_id = 3")
    expect(written.code, written.stderr).toBe(0)
    expect(await count()).toBe("count\r\n2\r\n")
  })
})

describe.each(await backends())("Query.sql on a session that goes on, on $name", (backend) => {
  it("leaves the session writable after its read-only statements, failed or not", slow, async () => {
    const db = await open(backend, "cli sql session")
    try {
      const schema = `"${db.schema}"`
      await db.run(
        Effect.flatMap(Database.Database, (database) =>
          database.exec(`CREATE SCHEMA ${schema}; CREATE TABLE ${schema}.t (x int)`),
        ),
      )
      // The demo's way: read on the connection a sync used, which may write again after.
      const refused = await db.run(Effect.flip(Query.sql(db.schema, "select 1; insert into t values (1)")))
      expect(refused.message).toContain("read-only transaction")
      expect(await db.run(Query.sql(db.schema, "select count(*) as n from t"))).toContain("0")
      await db.query(`INSERT INTO ${schema}.t VALUES (2)`)
      expect(await db.query(`SELECT count(*)::int AS n FROM ${schema}.t`)).toEqual([{ n: 1 }])
    } finally {
      await db.close()
    }
  })
})
