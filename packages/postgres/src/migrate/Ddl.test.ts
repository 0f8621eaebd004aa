/**
 * The DDL migrates forward: a table made by an older version (fewer columns, rows in it) gains
 * the new columns and keeps its rows; a database made by version 1 (the schema it created, with
 * rows) is upgraded with its rows kept and the new columns and tables filled from `_raw`; every
 * table and column has a comment; a database from a newer version is refused.
 */
import { readFileSync } from "node:fs"
import * as Effect from "effect/Effect"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { Database } from "../database/Database.ts"
import { ident, qualified } from "../database/Sql.ts"
import * as Views from "../history/Views.ts"
import { type Backend, backends, open } from "../testing/Backends.ts"
import { company, contact } from "../testing/Records.ts"
import * as Ddl from "./Ddl.ts"

const versionOne = readFileSync(new URL("../testing/schema-v1.sql", import.meta.url), "utf8")

/** A contact as the provider sends it, with its company's sites and a location to split. */
const sited = (id: number) =>
  contact(id, {
    location: "Philadelphia, PA, US",
    location_type: "branch",
    position_location_id: 9002,
    social_profiles: [
      { type: "linkedin", url: `linkedin.com/in/p-${id}` },
      { type: "twitter", url: `twitter.com/p${id}` },
    ],
    company: {
      id: 4400,
      name: "Example Corp",
      revenue: 250,
      revenue_range: "$100M - $500M",
      size: 1200,
      size_range: "1000-4999",
    },
    company_id: 4400,
    addresses: [
      {
        location_id: 9001,
        is_hq: true,
        type: "hq",
        street_1: "1 Main St",
        city: "Boston",
        state: "MA",
        zip: "02110",
        country: "US",
      },
      {
        location_id: 9002,
        is_hq: false,
        type: "branch",
        street_1: "500 Market St",
        city: "Philadelphia",
        state: "PA",
        zip: "19106",
        country: "US",
      },
    ],
  })

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

    it("adds a newer version's columns to existing tables without losing rows, and records the version", {
      timeout: 120_000,
    }, async () => {
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
      const versions = await env.query(
        `SELECT version FROM ${qualified(env.schema, "_schema_version")} ORDER BY version`,
      )
      expect(versions).toEqual(Ddl.migrations.map((migration) => ({ version: migration.version })))
    })

    it("indexes _rejected by (stream, key) from version 9, a schema at version 8 included", async () => {
      await env.run(Ddl.ensure(env.schema))
      // What a version 8 schema is: no index, version 9 (nor a later one) not recorded.
      await env.query(`DROP INDEX ${qualified(env.schema, "_rejected_stream_key")}`)
      await env.query(`DELETE FROM ${qualified(env.schema, "_schema_version")} WHERE version >= 9`)
      await env.run(Ddl.ensure(env.schema))
      const [index] = await env.query(
        `SELECT indexdef FROM pg_indexes WHERE schemaname = $1 AND indexname = '_rejected_stream_key'`,
        [env.schema],
      )
      expect(String(index?.indexdef)).toMatch(/\(stream, key\) WHERE \(key IS NOT NULL\)$/)
      const versions = await env.query(
        `SELECT version FROM ${qualified(env.schema, "_schema_version")} WHERE version = 9`,
      )
      expect(versions).toEqual([{ version: 9 }])
    })

    it("gives every table and column (and every view) a comment", async () => {
      const missing = await env.query(
        `SELECT c.relname, a.attname FROM pg_class c
         JOIN pg_namespace n ON n.oid = c.relnamespace
         LEFT JOIN pg_attribute a ON a.attrelid = c.oid AND a.attnum > 0 AND NOT a.attisdropped AND c.relkind = 'r'
         WHERE n.nspname = $1 AND c.relkind IN ('r', 'v')
           AND (coalesce(obj_description(c.oid, 'pg_class'), '') = ''
             OR (a.attnum IS NOT NULL AND coalesce(col_description(c.oid, a.attnum), '') = ''))`,
        [env.schema],
      )
      expect(missing).toEqual([])
      const [counted] = await env.query(
        `SELECT count(DISTINCT c.relname)::int AS tables, count(*)::int AS columns FROM pg_class c
         JOIN pg_namespace n ON n.oid = c.relnamespace
         JOIN pg_attribute a ON a.attrelid = c.oid AND a.attnum > 0 AND NOT a.attisdropped
         WHERE n.nspname = $1 AND c.relkind = 'r'`,
        [env.schema],
      )
      // _schema_version and market are made by the migrations, not from the table descriptions.
      expect(counted?.tables).toBe(Ddl.tables.length + 2)
      // A view that documents its columns documents every one of them.
      const documented = Views.views.filter((view) => view.columns !== undefined).map((view) => view.name)
      expect(documented.length).toBeGreaterThan(12)
      const undocumented = await env.query(
        `SELECT c.relname, a.attname FROM pg_class c
         JOIN pg_namespace n ON n.oid = c.relnamespace
         JOIN pg_attribute a ON a.attrelid = c.oid AND a.attnum > 0
         WHERE n.nspname = $1 AND c.relkind = 'v' AND c.relname = ANY($2)
           AND coalesce(col_description(c.oid, a.attnum), '') = ''`,
        [env.schema, documented],
      )
      expect(undocumented).toEqual([])
      expect(counted?.columns).toBeGreaterThan(100)
      const [comment] = await env.query(`SELECT col_description(${"$1"}::regclass, 1) AS doc`, [
        qualified(env.schema, "contacts"),
      ])
      expect(comment?.doc).toBe("the provider's contact id")
    })

    it("upgrades a database version 1 made, keeping its rows and filling the new columns and tables from _raw", async () => {
      const schema = `${env.schema} v1`
      const table = (name: string) => qualified(schema, name)
      try {
        await env.run(
          Effect.flatMap(Database, (db) =>
            db.exec(versionOne.replaceAll("__SCHEMA__", schema.replaceAll('"', '""'))),
          ),
        )
        // Rows as version 1 loaded them: typed columns of its day, the record whole in _raw.
        await env.query(
          `INSERT INTO ${table("contacts")} (match_id, display_name, job_level, location, company_id, _raw, _synced_at)
           VALUES ('m-1', 'Person 1', 'vp', 'Philadelphia, PA, US', 4400, $1::jsonb, '2026-01-02T03:04:05Z'),
                  ('m-2', 'Person 2', 'dir', 'Austin, TX, US', 1002, $2::jsonb, '2026-01-02T03:04:05Z'),
                  ('m-3', 'Broken', NULL, NULL, NULL, '{"match_id": 3}', '2026-01-02T03:04:05Z')`,
          [JSON.stringify(sited(1)), JSON.stringify(contact(2, { location: "Austin, TX, US" }))],
        )
        await env.query(
          `INSERT INTO ${table("contact_phones")} (match_id, position, type, value, _synced_at)
           VALUES ('m-1', 0, 'work_hq', '5551', now())`,
        )
        await env.query(
          `INSERT INTO ${table("companies")} (company_id, company_name, _raw, _synced_at) VALUES (3, 'Company 3', $1::jsonb, now())`,
          [JSON.stringify(company(3))],
        )
        await env.run(Ddl.ensure(schema))

        const versions = await env.query(`SELECT version FROM ${table("_schema_version")} ORDER BY version`)
        expect(versions).toEqual(Ddl.migrations.map((migration) => ({ version: migration.version })))
        expect(
          await env.query(
            `SELECT match_id, display_name, company_size::int, company_size_range, company_revenue::float8 AS revenue,
                    location_city, location_region, location_country, to_char(_synced_at AT TIME ZONE 'UTC', 'YYYY-MM-DD') AS synced
             FROM ${table("contacts")} ORDER BY match_id`,
          ),
        ).toEqual([
          {
            match_id: "m-1",
            display_name: "Person 1",
            company_size: 1200,
            company_size_range: "1000-4999",
            revenue: 250,
            location_city: "Philadelphia",
            location_region: "PA",
            location_country: "US",
            synced: "2026-01-02",
          },
          {
            match_id: "m-2",
            display_name: "Person 2",
            company_size: 131,
            company_size_range: "50-199",
            revenue: 41,
            location_city: "Austin",
            location_region: "TX",
            location_country: "US",
            synced: "2026-01-02",
          },
          // Its _raw does not decode: kept as it was.
          {
            match_id: "m-3",
            display_name: "Broken",
            company_size: null,
            company_size_range: null,
            revenue: null,
            location_city: null,
            location_region: null,
            location_country: null,
            synced: "2026-01-02",
          },
        ])
        expect(
          await env.query(
            `SELECT c.match_id, s.city, s.street_1, s.is_hq FROM ${table("contacts")} c
             JOIN ${table("company_sites")} s ON s.location_id = c.position_location_id`,
          ),
        ).toEqual([{ match_id: "m-1", city: "Philadelphia", street_1: "500 Market St", is_hq: false }])
        expect(
          (await env.query(`SELECT location_id::int FROM ${table("company_sites")} ORDER BY 1`)).map(
            (row) => row.location_id,
          ),
        ).toEqual([9001, 9002])
        expect(
          await env.query(
            `SELECT match_id, type FROM ${table("contact_social_profiles")} ORDER BY match_id, position`,
          ),
        ).toEqual([
          { match_id: "m-1", type: "linkedin" },
          { match_id: "m-1", type: "twitter" },
          { match_id: "m-2", type: "linkedin" },
        ])
        // The phones re-derived from _raw: the record's list as it is.
        expect(await env.query(`SELECT count(*)::int AS phones FROM ${table("contact_phones")}`)).toEqual([
          { phones: 4 },
        ])
        expect(
          await env.query(`SELECT company_name, is_international, verified FROM ${table("companies")}`),
        ).toEqual([{ company_name: "Company 3", is_international: false, verified: true }])
        // The companies held are the first observations of the install base, at their load's time.
        expect(
          await env.query(
            `SELECT o.company_id::int AS company, o.observed_at = c._synced_at AS at_load, o.products_in_use,
               (SELECT array_agg(product) FROM ${table("technology_observations")}) AS products
             FROM ${table("company_observations")} o JOIN ${table("companies")} c USING (company_id)`,
          ),
        ).toEqual([{ company: 3, at_load: true, products_in_use: 1, products: ["Marketo Engage"] }])
        expect(
          await env.query(
            `SELECT match_id, job_level_label FROM ${table("contacts_labeled")} WHERE job_level IS NOT NULL ORDER BY match_id`,
          ),
        ).toEqual([
          { match_id: "m-1", job_level_label: "Vice president" },
          // Re-derived from _raw, which says mgr (the row said dir).
          { match_id: "m-2", job_level_label: "Manager" },
        ])
      } finally {
        await env.query(`DROP SCHEMA IF EXISTS ${ident(schema)} CASCADE`)
      }
    })

    it("fills the label tables with the interface specification's codes", async () => {
      const levels = await env.query(
        `SELECT code, label FROM ${qualified(env.schema, "job_levels")} ORDER BY seniority`,
      )
      expect(levels.map((row) => row.code)).toEqual(["brd", "chf", "vp", "dir", "mgr", "stf"])
      expect(levels[1]).toEqual({ code: "chf", label: "C-level" })
      const departments = await env.query(
        `SELECT code, label FROM ${qualified(env.schema, "job_departments")}`,
      )
      expect(departments).toHaveLength(10)
      expect(departments).toContainEqual({ code: "it_is", label: "IT" })
      const required = await env.query(`SELECT code FROM ${qualified(env.schema, "required_field_codes")}`)
      expect(required).toHaveLength(7)
    })

    it("refuses a schema migrated by a newer version", async () => {
      await env.query(`INSERT INTO ${qualified(env.schema, "_schema_version")} (version) VALUES (99)`)
      const error = await env.run(Effect.flip(Ddl.ensure(env.schema)))
      expect(error._tag).toBe("SchemaTooNew")
      expect(error.message).toContain("version 99")
    })
  },
)
