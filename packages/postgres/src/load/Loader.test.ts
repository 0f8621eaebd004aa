/**
 * The loader on every backend (PGlite, the real Postgres, a container where Docker answers):
 * typed rows and views, idempotent reloads, child rows replaced, the sync modes, the
 * state/transaction guarantee, bad input, odd schema names and hostile values.
 */
import type { Message } from "@salesintel/airbyte"
import * as Effect from "effect/Effect"
import * as Stream from "effect/Stream"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { qualified } from "../database/Sql.ts"
import * as Ddl from "../migrate/Ddl.ts"
import * as Runs from "../runs/Runs.ts"
import { type Backend, backends, open } from "../testing/Backends.ts"
import { company, contact, contactMessages, record, state } from "../testing/Records.ts"
import * as Loader from "./Loader.ts"
import * as SavedState from "./SavedState.ts"

const all = await backends()

describe.each(all.map((backend): [string, Backend] => [backend.name, backend]))(
  "loader on %s",
  (_, backend) => {
    let env: Awaited<ReturnType<typeof open>>
    beforeAll(async () => {
      env = await open(backend, `Loader "odd" Schema`)
    })
    afterAll(async () => {
      await env?.close()
    })

    const load = (messages: ReadonlyArray<Message.Message>, options: Loader.LoadOptions = {}) =>
      env.run(Loader.load(Stream.fromIterable(messages), { schema: env.schema, ...options }))
    const table = (name: string) => qualified(env.schema, name)
    const count = async (name: string, where = "true") =>
      Number((await env.query(`SELECT count(*)::int AS n FROM ${table(name)} WHERE ${where}`))[0]?.n)
    const reset = async () => {
      await env.run(Ddl.ensure(env.schema))
      await env.query(
        `TRUNCATE ${["contacts", "contact_phones", "contact_social_profiles", "company_sites", "companies", "company_technologies", "taxonomy_categories", "taxonomy_products", "_state"].map(table).join(", ")}`,
      )
    }

    it("creates the tables and views idempotently, in a schema with quotes and spaces", async () => {
      await env.run(Ddl.ensure(env.schema))
      await env.run(Ddl.ensure(env.schema))
      const rows = await env.query(
        "SELECT table_name FROM information_schema.tables WHERE table_schema = $1 ORDER BY table_name",
        [env.schema],
      )
      expect(rows.map((row) => row.table_name)).toEqual(
        expect.arrayContaining([
          "_state",
          "_sync_runs",
          "companies",
          "company_technologies",
          "contact_phones",
          "contacts",
          "contacts_history",
          "companies_history",
          "taxonomy_categories",
          "taxonomy_products_history",
          "taxonomy_products",
          "technology_adoption_by_product",
          "contacts_at_companies_using_product",
          "contacts_by_department_level",
        ]),
      )
    })

    it("loads every stream into typed columns, the whole record in _raw, and answers the views", async () => {
      await reset()
      const summary = await load([
        record("taxonomy_categories", { category: "Marketing", subcategories: ["Marketing Automation"] }),
        record("taxonomy_products", { product: "Marketo Engage", vendor: "Adobe", category: "Marketing" }),
        record("taxonomy_products", { product: "Homegrown", vendor: null }),
        state("taxonomy_products", { done: true }),
        record("contacts", contact(1)),
        record("contacts", contact(2, { company_id: 2000 })),
        record("companies", company(1001)),
        record("companies", company(2000, ["Salesforce"])),
        state("companies", { cursor: "x" }),
      ])
      expect(summary.statesCommitted).toBe(2)
      expect(summary.uncommittedRecords).toBe(0)
      const [person] = await env.query(
        `SELECT match_id, company_id::int AS company_id, created_at, linkedin_url, _raw->'_score' AS score, _raw->>'_salesintel_search' AS search FROM ${table("contacts")} WHERE match_id = 'm-1'`,
      )
      expect(person).toMatchObject({
        match_id: "m-1",
        company_id: 1001,
        linkedin_url: "linkedin.com/in/p-1",
        search: "managers",
      })
      expect(new Date(person?.created_at as Date | string).getTime()).toBe(1585357174668)
      expect(await count("contact_phones")).toBe(4)
      expect(await count("company_technologies")).toBe(2)
      expect(await count("taxonomy_products", "vendor IS NULL AND vendor_key = ''")).toBe(1)
      const adoption = await env.query(
        `SELECT product, companies::int AS companies, share::float AS share FROM ${table("technology_adoption_by_product")} ORDER BY product`,
      )
      expect(adoption).toEqual([
        { product: "Marketo Engage", companies: 1, share: 0.5 },
        { product: "Salesforce", companies: 1, share: 0.5 },
      ])
      // With the labels contacts_labeled carries (job level, seniority, department).
      const users = await env.query(
        `SELECT match_id, job_level_label, job_level_seniority::int AS seniority, job_department_label
         FROM ${table("contacts_at_companies_using_product")} WHERE product = 'Salesforce'`,
      )
      expect(users).toEqual([
        { match_id: "m-2", job_level_label: "Manager", seniority: 5, job_department_label: "IT" },
      ])
      const levels = await env.query(
        `SELECT job_level, contacts::int AS contacts FROM ${table("contacts_by_department_level")} ORDER BY job_level`,
      )
      expect(levels).toEqual([
        { job_level: "mgr", contacts: 1 },
        { job_level: "vp", contacts: 1 },
      ])
    })

    it("reloads idempotently: the same messages twice leave no duplicates", async () => {
      await reset()
      const messages = contactMessages(120, 50)
      await load(messages, { batchSize: 17 })
      const first = await env.query(`SELECT match_id, _raw FROM ${table("contacts")} ORDER BY match_id`)
      await load(messages, { batchSize: 17 })
      expect(await count("contacts")).toBe(120)
      expect(await count("contact_phones")).toBe(240)
      expect(await env.query(`SELECT match_id, _raw FROM ${table("contacts")} ORDER BY match_id`)).toEqual(
        first,
      )
    })

    it("replaces child rows and keeps the latest record, within a batch and across batches", async () => {
      await reset()
      await load([record("contacts", contact(1)), state("contacts", { n: 1 })])
      await load([
        record("contacts", contact(1, { job_title: "first", phone_numbers: [{ type: "work", value: "1" }] })),
        record(
          "contacts",
          contact(1, { job_title: "second", phone_numbers: [{ type: "mobile", value: "2" }] }),
        ),
        state("contacts", { n: 2 }),
        record("companies", company(5, ["A", "B", "C"])),
        state("companies", { n: 1 }),
        record("companies", company(5, ["D"])),
        state("companies", { n: 2 }),
      ])
      expect(await env.query(`SELECT job_title FROM ${table("contacts")}`)).toEqual([{ job_title: "second" }])
      expect(await env.query(`SELECT type, value, position FROM ${table("contact_phones")}`)).toEqual([
        { type: "mobile", value: "2", position: 0 },
      ])
      expect(await env.query(`SELECT product FROM ${table("company_technologies")}`)).toEqual([
        { product: "D" },
      ])
    })

    it("overwrite keeps only this sync's rows (children too); append_dedup and append keep the others", async () => {
      await reset()
      await load([record("companies", company(1)), record("companies", company(2)), state("companies", {})])
      await load([record("companies", company(2)), record("companies", company(3)), state("companies", {})], {
        syncModes: { companies: "append_dedup" },
      })
      expect(await count("companies")).toBe(3)
      await load([record("companies", company(4)), state("companies", {})], {
        syncModes: { companies: "append" },
      })
      expect(await count("companies")).toBe(4)
      const summary = await load([record("companies", company(3)), state("companies", {})], {
        syncModes: { companies: "overwrite" },
      })
      expect(summary.overwritten).toEqual(["companies"])
      expect(await env.query(`SELECT company_id::int AS id FROM ${table("companies")}`)).toEqual([{ id: 3 }])
      expect(await env.query(`SELECT company_id::int AS id FROM ${table("company_technologies")}`)).toEqual([
        { id: 3 },
      ])
      const [bookkeeping] = await env.query(
        `SELECT overwrite_since FROM ${table("_state")} WHERE stream = 'companies'`,
      )
      expect(bookkeeping?.overwrite_since).toBeNull()
    })

    it("keeps one row per company site (the latest loaded wins, within a batch too); an overwrite drops the sites no contact listed", async () => {
      await reset()
      const site = (locationId: number, street: string) => ({
        location_id: locationId,
        is_hq: false,
        street_1: street,
      })
      const sited = (id: number, addresses: ReadonlyArray<Record<string, unknown>>) =>
        record(
          "contacts",
          contact(id, { addresses, position_location_id: addresses[0]?.location_id ?? null }),
        )
      await load([
        sited(1, [site(10, "old street"), site(11, "eleven")]),
        sited(2, [site(10, "new street"), { street_1: "no id" }]),
        state("contacts", {}),
      ])
      const sites = () =>
        env.query(`SELECT location_id::int AS id, street_1 FROM ${table("company_sites")} ORDER BY 1`)
      expect(await sites()).toEqual([
        { id: 10, street_1: "new street" },
        { id: 11, street_1: "eleven" },
      ])
      // Another batch, another transaction: upserted again, not duplicated.
      await load([sited(3, [site(11, "eleven, moved")]), state("contacts", {})])
      expect(await sites()).toEqual([
        { id: 10, street_1: "new street" },
        { id: 11, street_1: "eleven, moved" },
      ])
      await load([sited(4, [site(12, "twelve")]), state("contacts", {})], {
        syncModes: { contacts: "overwrite" },
      })
      expect(await sites()).toEqual([{ id: 12, street_1: "twelve" }])
      expect(await count("contact_social_profiles")).toBe(1)
    })

    it("newer wins: a record fetched before the row held replaces nothing (row, children, sites, state), in every mode", async () => {
      await reset()
      const at = (day: number) => new Date(Date.UTC(2026, 0, day)).toISOString()
      const dated = (day: number, title: string, phone: string, street: string) =>
        record(
          "contacts",
          contact(1, {
            _salesintel_fetched_at: at(day),
            job_title: title,
            phone_numbers: [{ type: "work", value: phone }],
            addresses: [{ location_id: 10, is_hq: true, street_1: street }],
            position_location_id: 10,
          }),
        )
      const company5 = (day: number, products: ReadonlyArray<string>) =>
        record("companies", { ...company(5, products), _salesintel_fetched_at: at(day) })
      /** An input made at `madeAt` (its records' and statuses' emitted_at), as a source writes one. */
      const input = (madeAt: number, messages: ReadonlyArray<Message.Message>): Array<Message.Message> =>
        messages.map((message) =>
          message.type === "RECORD"
            ? { ...message, record: { ...message.record, emitted_at: madeAt } }
            : message,
        )
      const held = async () => ({
        contact: await env.query(`SELECT job_title, fetched_at::text AS at FROM ${table("contacts")}`),
        phones: await env.query(`SELECT value FROM ${table("contact_phones")}`),
        sites: await env.query(`SELECT street_1 FROM ${table("company_sites")}`),
        products: await env.query(`SELECT product FROM ${table("company_technologies")} ORDER BY 1`),
        state: await env.query(`SELECT stream, state FROM ${table("_state")} ORDER BY 1`),
      })
      const newer = input(2_000, [
        dated(20, "new", "2", "new street"),
        state("contacts", { file: "newer" }),
        company5(20, ["B"]),
        state("companies", { file: "newer" }),
      ])
      const older = input(1_000, [
        dated(10, "old", "1", "old street"),
        state("contacts", { file: "older" }),
        company5(10, ["A"]),
        state("companies", { file: "older" }),
      ])
      await load(newer)
      const after = await held()
      expect(after.contact).toEqual([{ job_title: "new", at: expect.stringContaining("2026-01-20") }])
      for (const mode of ["append_dedup", "append", "overwrite"] as const) {
        await load(older, { syncModes: { contacts: mode, companies: mode } })
        expect(await held(), mode).toEqual(after)
      }
      // In one input too: the older record behind the newer one in a batch is cut out.
      await load(input(3_000, [dated(20, "new", "2", "new street"), dated(10, "old", "1", "old street")]))
      expect(await held()).toEqual(after)
      // A newer record still replaces, and its state with it.
      await load(
        input(4_000, [dated(30, "newest", "3", "newest street"), state("contacts", { file: "newest" })]),
      )
      expect((await held()).contact).toEqual([
        { job_title: "newest", at: expect.stringContaining("2026-01-30") },
      ])
      expect((await held()).state[1]).toEqual({ stream: "contacts", state: { file: "newest" } })
    })

    it("append keeps every record received in the history table, in order; the keyed table shows the latest", async () => {
      await reset()
      await env.query(`TRUNCATE ${table("contacts_history")}, ${table("companies_history")}`)
      const renamed = (version: number) => contact(1, { job_title: `Title ${version}` })
      // Three versions of one contact, two in one batch, and a second sync with the first again.
      await load(
        [
          record("contacts", renamed(1)),
          record("contacts", renamed(2)),
          state("contacts", { page: 1 }),
          record("contacts", renamed(3)),
          state("contacts", { page: 2 }),
        ],
        { syncModes: { contacts: "append" } },
      )
      await load([record("contacts", renamed(1)), state("contacts", { page: 1 })], {
        syncModes: { contacts: "append" },
      })
      const history = await env.query(
        `SELECT match_id, job_title, _raw->>'job_title' AS raw_title, _synced_at IS NOT NULL AS stamped FROM ${table("contacts_history")} ORDER BY _history_id`,
      )
      expect(history).toEqual(
        ["Title 1", "Title 2", "Title 3", "Title 1"].map((title) => ({
          match_id: "m-1",
          job_title: title,
          raw_title: title,
          stamped: true,
        })),
      )
      expect(await env.query(`SELECT match_id, job_title FROM ${table("contacts")}`)).toEqual([
        { match_id: "m-1", job_title: "Title 1" },
      ])
      expect(await count("contact_phones")).toBe(2)
      // The other modes leave the history alone; a record after the last state never reaches it.
      await load([record("contacts", renamed(4)), state("contacts", {}), record("contacts", renamed(5))])
      await load([record("contacts", renamed(6))], { syncModes: { contacts: "append" } })
      expect(await count("contacts_history")).toBe(4)
      expect(await count("companies_history")).toBe(0)
    })

    it("an overwrite interrupted by a source error keeps the old rows until a later one completes", async () => {
      await reset()
      await load([record("companies", company(1)), state("companies", {})])
      const trace: Message.TraceErrorMessage = {
        type: "TRACE",
        trace: { type: "ERROR", emitted_at: 1, error: { message: "boom", failure_type: "transient_error" } },
      }
      const seen: Array<string> = []
      const failed = await load([record("companies", company(2)), state("companies", { page: 1 }), trace], {
        syncModes: { companies: "overwrite" },
        onMessage: (message) => Effect.sync(() => seen.push(message.type)),
      })
      expect(failed.sourceErrors).toHaveLength(1)
      expect(seen).toEqual(["TRACE"])
      expect(await count("companies")).toBe(2)
      // The resumed overwrite sends the rest; rows written by the interrupted one stay.
      await load([record("companies", company(3)), state("companies", { page: 2 })], {
        syncModes: { companies: "overwrite" },
      })
      expect(await env.query(`SELECT company_id::int AS id FROM ${table("companies")} ORDER BY 1`)).toEqual([
        { id: 2 },
        { id: 3 },
      ])
    })

    it("commits nothing without its state, and reads the states back as the source's --state", async () => {
      await reset()
      const summary = await load([...contactMessages(30, 10), record("contacts", contact(99))], {
        batchSize: 4,
      })
      expect(summary.statesCommitted).toBe(3)
      expect(summary.uncommittedRecords).toBe(1)
      expect(await count("contacts")).toBe(30)
      expect(await env.run(SavedState.read(env.schema))).toEqual([
        { type: "STREAM", stream: { stream_descriptor: { name: "contacts" }, stream_state: { upto: 30 } } },
      ])
      expect(await env.run(SavedState.read("no such schema"))).toEqual([])
    })

    it("rolls back the open batch when a record does not decode, naming stream, position and path", async () => {
      await reset()
      const error = await env.run(
        Loader.load(
          Stream.fromIterable([
            ...contactMessages(3, 3),
            record("contacts", contact(50)),
            record("contacts", contact(51, { company: { id: "not a number" } })),
          ]),
          { schema: env.schema },
        ).pipe(Effect.flip),
      )
      expect(error._tag).toBe("InvalidRecord")
      expect(error.message).toContain("message 6")
      expect(error.message).toContain("contacts")
      expect(error.message).toContain("company.id")
      expect(await count("contacts")).toBe(3)
      const unknown = await env.run(
        Loader.load(Stream.make(record("people", { id: 1 })), { schema: env.schema }).pipe(Effect.flip),
      )
      expect(unknown.message).toContain('unknown stream "people"')
    })

    it("keeps quotes, tabs, newlines, backslashes and unicode; strips NUL from text and escapes it in JSONB", async () => {
      await reset()
      const hostile = `O'Brien "the \\ one"\ttab\nnewline\r\ncrlf \\N ü 漢字 😀 end`
      await load([
        record(
          "contacts",
          contact(7, {
            display_name: hostile,
            job_title: "nul\u0000here",
            company_domains: ['a"b', "c\\d", "e,f", "{g}", "NULL"],
            [`key\u0000with nul`]: "v\u0000",
          }),
        ),
        state("contacts", { note: "state with \u0000 and \\u0000" }),
      ])
      const [row] = await env.query(
        `SELECT display_name, job_title, company_domains, _raw->>'display_name' AS raw_name, _raw->>'job_title' AS raw_title, _raw->>'key\\u0000with nul' AS raw_key FROM ${table("contacts")}`,
      )
      expect(row?.display_name).toBe(hostile)
      expect(row?.raw_name).toBe(hostile)
      expect(row?.job_title).toBe("nulhere")
      expect(row?.raw_title).toBe("nul\\u0000here")
      expect(row?.raw_key).toBe("v\\u0000")
      expect(row?.company_domains).toEqual(['a"b', "c\\d", "e,f", "{g}", "NULL"])
      expect(await env.run(SavedState.read(env.schema))).toEqual([
        {
          type: "STREAM",
          stream: {
            stream_descriptor: { name: "contacts" },
            stream_state: { note: "state with \\u0000 and \\u0000" },
          },
        },
      ])
    })

    it("keeps rejected records whole in _rejected, with the STATE after them, once per record", async () => {
      await reset()
      await env.query(`DELETE FROM ${table("_rejected")}`)
      const rejected = (email: string, reason = "search_results[3].match_id: is missing") =>
        record("_rejected", {
          stream: "contacts",
          key: null,
          reason,
          record: { email, first_name: "A\u0000B", phones: [{ value: "1" }] },
          _salesintel_fetched_at: "2026-11-01T00:00:00.000Z",
        })
      const summary = await load(
        [
          record("contacts", contact(1)),
          rejected("a@x.com"),
          state("contacts", { upto: 1 }),
          rejected("b@x.com"),
          // After the last STATE: rolled back with the records around it.
        ],
        { runId: 42 },
      )
      expect(summary.rejected).toEqual({ contacts: 2 })
      const rows = await env.query(
        `SELECT stream, key, reason, record, fetched_at, run_id::int AS run_id FROM ${table("_rejected")}`,
      )
      expect(rows).toEqual([
        {
          stream: "contacts",
          key: null,
          reason: "search_results[3].match_id: is missing",
          record: { email: "a@x.com", first_name: "A\\u0000B", phones: [{ value: "1" }] },
          fetched_at: new Date("2026-11-01T00:00:00.000Z"),
          run_id: 42,
        },
      ])
      // The same record again (a rerun, the same input twice): its row, updated, not a second one.
      await load([
        rejected("a@x.com", "search_results[9].match_id: is missing"),
        state("contacts", { upto: 2 }),
      ])
      expect(await count("_rejected")).toBe(1)
      expect(await count("_rejected", "reason LIKE 'search_results[9]%'")).toBe(1)
    })

    it("refuses a _rejected record without its reason, naming the field", async () => {
      const failure = await env.run(
        Effect.flip(
          Loader.load(
            Stream.fromIterable([
              record("_rejected", { stream: "contacts", key: null, record: {}, _salesintel_fetched_at: "x" }),
            ]),
            { schema: env.schema },
          ),
        ),
      )
      expect(failure.message).toBe("message 1: invalid _rejected record at reason: is missing")
    })

    it("records runs", async () => {
      const id = await env.run(Runs.start(env.schema))
      await env.run(
        Runs.finish(env.schema, id, {
          status: "succeeded",
          streams: { contacts: { records: 3, credits: 3 } },
        }),
      )
      const [run] = await env.run(Runs.list(env.schema, 1))
      expect(run).toMatchObject({
        id,
        status: "succeeded",
        streams: { contacts: { records: 3, credits: 3 } },
        error: null,
      })
      expect(run?.finishedAt).toBeInstanceOf(Date)
    })
  },
)
