/**
 * The DDL migrates forward: a table made by an older version (fewer columns, rows in it) gains
 * the new columns and keeps its rows; a database from a newer version is refused.
 */
import { Effect } from "effect"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import * as Ddl from "./Ddl.ts"
import { ident, qualified } from "./Sql.ts"
import { type Backend, backends, open } from "./testing/Backends.ts"

const all = await backends()

describe.each(all.map((backend): [string, Backend] => [backend.name, backend]))(
  "Ddl.ensure on %s",
  (_, backend) => {
    let env: Awaited<ReturnType<typeof open>>
    beforeAll(async () => {
      env = await open(backend, "ddl")
    })
    afterAll(async () => {
      await env?.close()
    })

    it("adds a newer version's columns to existing tables without losing rows, and records the version", async () => {
      const contacts = qualified(env.schema, "contacts")
      await env.query(`CREATE SCHEMA ${ident(env.schema)}`)
      // What an older version might have created: no linkedin_url, search or fetched_at yet.
      await env.query(
        `CREATE TABLE ${contacts} (match_id text PRIMARY KEY, display_name text, _raw jsonb, _synced_at timestamptz NOT NULL DEFAULT now())`,
      )
      await env.query(
        `INSERT INTO ${contacts} (match_id, display_name, _raw) VALUES ('m-1', 'Old Row', '{}')`,
      )
      await env.run(Ddl.ensure(env.schema))
      await env.run(Ddl.ensure(env.schema))
      const columns = await env.query(
        "SELECT column_name FROM information_schema.columns WHERE table_schema = $1 AND table_name = 'contacts'",
        [env.schema],
      )
      expect(columns.map((column) => column.column_name)).toEqual(
        expect.arrayContaining(["linkedin_url", "search", "fetched_at", "company_domains"]),
      )
      expect(await env.query(`SELECT match_id, display_name, linkedin_url FROM ${contacts}`)).toEqual([
        { match_id: "m-1", display_name: "Old Row", linkedin_url: null },
      ])
      const versions = await env.query(`SELECT version FROM ${qualified(env.schema, "_schema_version")}`)
      expect(versions).toEqual([{ version: Ddl.currentVersion }])
    })

    it("refuses a schema migrated by a newer version", async () => {
      await env.query(`INSERT INTO ${qualified(env.schema, "_schema_version")} (version) VALUES (99)`)
      const error = await env.run(Effect.flip(Ddl.ensure(env.schema)))
      expect(error._tag).toBe("SchemaTooNew")
      expect(error.message).toContain("version 99")
    })
  },
)
