/**
 * The ledger `_bought` on every backend: written with the records a STATE commits (never with the
 * records no STATE followed), a later day winning; the index of the contacts table (a state's set
 * moved in only for keys with rows, rebuilt from the rows when apart from them, forgetting what an
 * overwrite deletes); the set as the tables hold it read back a page at a time in key order and
 * written into a state for the pipe and the plan; asked about keys and counted (what a sync's
 * source reads of it); forgotten on reset. The keys of a stream's rejected records are held with
 * the ledger's, on their latest day, in every read (and never written into the ledger).
 */
import type { Message } from "@salesintel/airbyte"
import * as Stream from "effect/Stream"
import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest"
import { qualified } from "../database/Sql.ts"
import * as Loader from "../load/Loader.ts"
import * as Ddl from "../migrate/Ddl.ts"
import { type Backend, backends, open } from "../testing/Backends.ts"
import { company, contact, record, state } from "../testing/Records.ts"
import * as Ledger from "./Ledger.ts"

const all = await backends()

const day = (iso: string) => Math.floor(Date.parse(iso) / 86_400_000)
const fetched = (id: number, at: string) =>
  record("contacts", { ...contact(id), _salesintel_fetched_at: at }) as Message.Message

describe.each(all.map((backend): [string, Backend] => [backend.name, backend]))(
  "the ledger on %s",
  (_, backend) => {
    let env: Awaited<ReturnType<typeof open>>
    beforeAll(async () => {
      env = await open(backend, "Ledger")
    })
    afterAll(async () => {
      await env?.close()
    })
    beforeEach(async () => {
      await env.run(Ddl.ensure(env.schema))
      await env.query(
        `TRUNCATE ${qualified(env.schema, "_bought")}, ${qualified(env.schema, "contacts")}, ${qualified(env.schema, "companies")}, ${qualified(env.schema, "_rejected")} CASCADE`,
      )
    })
    const load = (messages: ReadonlyArray<Message.Message>) =>
      env.run(Loader.load(Stream.fromIterable(messages), { schema: env.schema }))
    const contactsTable = () => qualified(env.schema, "contacts")
    /** Contacts rows with these keys, fetched on the day given (the ledger left as it is). */
    const putRows = (entries: ReadonlyArray<readonly [string, number]>) =>
      env.query(
        `INSERT INTO ${contactsTable()} (match_id, fetched_at, "_synced_at")
         SELECT key, to_timestamp(day::bigint * 86400 + 3600), now() FROM unnest($1::text[], $2::integer[]) AS u(key, day)`,
        [entries.map(([key]) => key), entries.map(([, day]) => day)],
      )
    /** Rows and ledger entries alike: what a load leaves. */
    const holding = async (entries: ReadonlyArray<Ledger.Entry>) => {
      await putRows(entries)
      await env.run(Ledger.adopt(env.schema, "contacts", entries))
    }
    /** Rejected records of `stream` with these keys (null: none), fetched on the day given. */
    const putRejected = (entries: ReadonlyArray<readonly [string | null, number]>, stream = "contacts") =>
      env.query(
        `INSERT INTO ${qualified(env.schema, "_rejected")} (stream, record_md5, key, reason, record, fetched_at)
         SELECT $3, md5(coalesce(key, '') || ':' || day || ':' || ordinality), key, 'job_level: bad',
                jsonb_build_object('match_id', key), to_timestamp(day::bigint * 86400 + 3600)
           FROM unnest($1::text[], $2::integer[]) WITH ORDINALITY AS u(key, day, ordinality)`,
        [entries.map(([key]) => key), entries.map(([, day]) => day), stream],
      )
    const rows = async () =>
      (
        await env.query(
          `SELECT stream, key, day FROM ${qualified(env.schema, "_bought")} ORDER BY stream, key`,
        )
      ).map((row) => [row.stream, row.key, Number(row.day)])

    it("holds what committed with a STATE, on the day it was fetched, and nothing no STATE followed", async () => {
      const summary = await load([
        fetched(1, "2026-11-20T23:59:00Z"),
        fetched(2, "2026-11-21T00:00:01Z"),
        record("companies", company(7)),
        state("contacts", { known: "ledger" }),
        fetched(3, "2026-11-21T10:00:00Z"),
      ])
      expect(summary.uncommittedRecords).toBe(1)
      expect(await rows()).toEqual([
        ["contacts", "m-1", day("2026-11-20T00:00:00Z")],
        ["contacts", "m-2", day("2026-11-21T00:00:00Z")],
      ])
    })

    it("keeps the later day of a key bought again, whichever comes first", async () => {
      // What the loads write alone: no reconcile between them (it would give each key its row's
      // day, and which record a row keeps is the merge's to say).
      const loadOnly = (messages: ReadonlyArray<Message.Message>) =>
        env.run(Loader.load(Stream.fromIterable(messages), { schema: env.schema, ensureSchema: false }))
      await loadOnly([fetched(1, "2026-11-22T08:00:00Z"), state("contacts", {})])
      await loadOnly([
        fetched(1, "2026-11-01T08:00:00Z"),
        fetched(2, "2026-11-01T08:00:00Z"),
        state("contacts", {}),
      ])
      await loadOnly([fetched(2, "2026-11-23T08:00:00Z"), state("contacts", {})])
      expect(await rows()).toEqual([
        ["contacts", "m-1", day("2026-11-22T00:00:00Z")],
        ["contacts", "m-2", day("2026-11-23T00:00:00Z")],
      ])
    })

    it("holds only keys with rows; the set as the tables hold it reads back in key order a page at a time", async () => {
      const count = Ledger.pageSize * 2 + 17
      const entries = Array.from(
        { length: count },
        (_, index): Ledger.Entry => [`k-${index}`, 20_000 + (index % 3)],
      )
      await holding(entries)
      await env.run(
        Ledger.adopt(env.schema, "contacts", [
          ["k-5", 19_000],
          ["k-6", 30_000],
          ["no-row", 20_000],
        ]),
      )
      expect(await rows()).toHaveLength(count)
      // A row the ledger lacks reads at the day it was fetched.
      await putRows([["k-zz", 20_100]])
      const read = await env.run(Stream.runCollect(Ledger.held(env.schema, "contacts")))
      const keys = [...read].map(([key]) => key)
      expect(keys).toHaveLength(count + 1)
      expect(keys).toEqual([...keys].sort())
      const days = new Map(read)
      // Each on its row's day, whatever a state said (earlier or later).
      expect(days.get("k-5")).toBe(20_000 + 2)
      expect(days.get("k-6")).toBe(20_000)
      expect(days.get("k-zz")).toBe(20_100)
      expect(days.has("no-row")).toBe(false)
      expect(await env.run(Stream.runCollect(Ledger.held(env.schema, "companies")))).toHaveLength(0)
    })

    it("answers which keys were bought, and how many it holds and how many are fresh", async () => {
      await holding([
        ["a", 20_000],
        ["b", 20_025],
        ["c", 19_900],
        ["d'; --", 20_030],
      ])
      const found = await env.run(Ledger.lookup(env.schema, "contacts", ["b", "zz", "a", "d'; --"]))
      expect([...found].sort()).toEqual([
        ["a", 20_000],
        ["b", 20_025],
        ["d'; --", 20_030],
      ])
      expect(await env.run(Ledger.lookup(env.schema, "companies", ["a"]))).toEqual([])
      expect(await env.run(Ledger.lookup(env.schema, "contacts", []))).toEqual([])
      // Fresh: bought less than 30 days before 20,030 (20,001 and after).
      expect(await env.run(Ledger.holdings(env.schema, "contacts", 20_030, 30))).toEqual({
        held: 4,
        fresh: 2,
      })
      expect(await env.run(Ledger.holdings(env.schema, "contacts", 20_030, undefined))).toEqual({
        held: 4,
        fresh: 4,
      })
      // Read on an earlier day (a clock that was ahead, put right), a day after it is as old as
      // that day, as the source ages it: fresh for 30 days; with 0 every key is due.
      expect(await env.run(Ledger.holdings(env.schema, "contacts", 19_000, 30))).toEqual({
        held: 4,
        fresh: 4,
        ahead: { keys: 4, days: 4, first: 19_900, last: 20_030 },
      })
      // Tomorrow is not ahead (a clock a little ahead, just past midnight UTC).
      expect(await env.run(Ledger.holdings(env.schema, "contacts", 20_024, 30))).toEqual({
        held: 4,
        fresh: 3,
        ahead: { keys: 1, days: 1, first: 20_030, last: 20_030 },
      })
      expect(await env.run(Ledger.holdings(env.schema, "contacts", 20_025, 0))).toEqual({
        held: 4,
        fresh: 0,
        ahead: { keys: 1, days: 1, first: 20_030, last: 20_030 },
      })
      expect(await env.run(Ledger.holdings(env.schema, "companies", 20_030, 30))).toEqual({
        held: 0,
        fresh: 0,
      })
      // A schema without a ledger yet holds nothing.
      expect(await env.run(Ledger.holdings(`${env.schema}_none`, "contacts", 20_030, 30))).toEqual({
        held: 0,
        fresh: 0,
      })
      expect(await env.run(Ledger.lookup(`${env.schema}_none`, "contacts", ["a"]))).toEqual([])
    })

    it("holds the keys of rejected records with the ledger's, each on its latest day, in every read", async () => {
      const tableKeys = Ledger.pageSize + 10
      await holding(
        Array.from(
          { length: tableKeys },
          (_, index): Ledger.Entry => [`k-${String(index).padStart(6, "0")}`, 20_000],
        ),
      )
      const rejectedKeys = Ledger.pageSize + 3
      await putRejected([
        ...Array.from({ length: rejectedKeys }, (_, index): [string, number] => [
          `r-${String(index).padStart(6, "0")}`,
          20_010,
        ]),
        // In the table too: a later rejection wins, an earlier one leaves the row's day.
        ["k-000005", 20_050],
        ["k-000006", 19_000],
        // Rejected twice: its latest day.
        ["dup", 20_001],
        ["dup", 20_020],
        // Without a key: nothing to hold it by.
        [null, 20_010],
      ])
      await putRejected([["c-1", 20_010]], "companies")
      const read = [...(await env.run(Stream.runCollect(Ledger.held(env.schema, "contacts"))))]
      const keys = read.map(([key]) => key)
      expect(keys).toHaveLength(tableKeys + rejectedKeys + 1)
      expect(keys).toEqual([...new Set(keys)].sort())
      const days = new Map(read)
      expect(days.get("k-000005")).toBe(20_050)
      expect(days.get("k-000006")).toBe(20_000)
      expect(days.get("dup")).toBe(20_020)
      expect(days.get("r-000000")).toBe(20_010)
      expect(days.has("c-1")).toBe(false)
      const found = await env.run(
        Ledger.lookup(env.schema, "contacts", ["k-000005", "k-000006", "dup", "r-000001", "c-1", "none"]),
      )
      expect([...found].sort()).toEqual([
        ["dup", 20_020],
        ["k-000005", 20_050],
        ["k-000006", 20_000],
        ["r-000001", 20_010],
      ])
      // Fresh at 20,035 for 30 days (20,006 and after): the rejected r-*, k-000005 and dup.
      expect(await env.run(Ledger.holdings(env.schema, "contacts", 20_035, 30))).toEqual({
        held: tableKeys + rejectedKeys + 1,
        fresh: rejectedKeys + 2,
      })
      expect(await env.run(Ledger.holdings(env.schema, "contacts", 20_035, undefined))).toEqual({
        held: tableKeys + rejectedKeys + 1,
        fresh: tableKeys + rejectedKeys + 1,
      })
      // The ledger is still the index of the table alone.
      expect(await rows()).toHaveLength(tableKeys)
      expect(await env.run(Ledger.reconcile(env.schema, "contacts"))).toEqual({
        stream: "contacts",
        added: 0,
        removed: 0,
        redated: 0,
      })
    })

    it("goes back into the state as the tables hold it, whatever the state says, for the pipe", async () => {
      await holding([
        ["a", 20_000],
        ["b", 20_001],
        ["c", 20_000],
      ])
      const saved = await env.run(
        Ledger.exported(env.schema, [
          {
            type: "STREAM",
            stream: {
              stream_descriptor: { name: "contacts" },
              stream_state: { known: "ledger", emails: {} },
            },
          },
          {
            type: "STREAM",
            stream: { stream_descriptor: { name: "companies" }, stream_state: { domains: {} } },
          },
        ]),
      )
      expect(saved.map((entry) => entry.stream.stream_state)).toEqual([
        { known: { "20000": ["a", "c"], "20001": ["b"] }, emails: {} },
        { domains: {} },
      ])
      // A state with a set of its own (the pipe's) gets the tables' set; no state at all gets one.
      const own = await env.run(
        Ledger.exported(env.schema, [
          {
            type: "STREAM",
            stream: { stream_descriptor: { name: "contacts" }, stream_state: { known: { "20000": ["x"] } } },
          },
        ]),
      )
      expect(own.map((entry) => entry.stream.stream_state)).toEqual([
        { known: { "20000": ["a", "c"], "20001": ["b"] } },
      ])
      const none = await env.run(Ledger.exported(env.schema, []))
      expect(none).toEqual([
        {
          type: "STREAM",
          stream: {
            stream_descriptor: { name: "contacts" },
            stream_state: { known: { "20000": ["a", "c"], "20001": ["b"] } },
          },
        },
      ])
      await env.query(`DELETE FROM ${contactsTable()}`)
      expect(await env.run(Ledger.exported(env.schema, []))).toEqual([])
    })

    it("is rebuilt from the rows when apart from them: emptied, or holding keys whose rows are gone", async () => {
      await holding([
        ["a", 20_000],
        ["b", 20_001],
      ])
      expect(await env.run(Ledger.reconcile(env.schema, "contacts"))).toEqual({
        stream: "contacts",
        added: 0,
        removed: 0,
        redated: 0,
      })
      // A day edited by hand, either way: the row's again.
      await env.query(`UPDATE ${qualified(env.schema, "_bought")} SET day = day - 100 WHERE key = 'a'`)
      await env.query(`UPDATE ${qualified(env.schema, "_bought")} SET day = day + 3 WHERE key = 'b'`)
      const redated = await env.run(Ledger.reconcile(env.schema, "contacts"))
      expect(redated).toEqual({ stream: "contacts", added: 0, removed: 0, redated: 2 })
      expect(Ledger.describeReconciled("s", redated)).toMatch(
        /^ledger: 2 contacts keys of the ledger s\._bought had another day than their row's fetched_at .* mended/,
      )
      expect(await rows()).toEqual([
        ["contacts", "a", 20_000],
        ["contacts", "b", 20_001],
      ])
      await env.query(`TRUNCATE ${qualified(env.schema, "_bought")}`)
      await env.query(
        `INSERT INTO ${qualified(env.schema, "_bought")} (stream, key, day) VALUES ('contacts', 'gone', 20000)`,
      )
      const changed = await env.run(Ledger.reconcile(env.schema, "contacts"))
      expect(changed).toEqual({ stream: "contacts", added: 2, removed: 1, redated: 0 })
      expect(Ledger.describeReconciled("s", changed)).toMatch(
        /2 contacts rows .* added back .*1 keys .* forgotten/,
      )
      expect(await rows()).toEqual([
        ["contacts", "a", 20_000],
        ["contacts", "b", 20_001],
      ])
      expect(await env.run(Ledger.reconcile(`${env.schema}_none`, "contacts"))).toEqual({
        stream: "contacts",
        added: 0,
        removed: 0,
        redated: 0,
      })
    })

    it("forgets the keys of the rows an overwrite deletes, in the overwrite's transaction", async () => {
      await load([
        fetched(1, "2026-11-20T10:00:00Z"),
        fetched(2, "2026-11-20T10:00:00Z"),
        state("contacts", {}),
      ])
      const overwrite = { syncModes: { contacts: "overwrite" as const } }
      await env.run(
        Loader.load(Stream.fromIterable([fetched(2, "2026-11-21T10:00:00Z"), state("contacts", {})]), {
          schema: env.schema,
          ...overwrite,
        }),
      )
      expect(await rows()).toEqual([["contacts", "m-2", day("2026-11-21T00:00:00Z")]])
      expect((await env.query(`SELECT match_id FROM ${contactsTable()}`)).map((row) => row.match_id)).toEqual(
        ["m-2"],
      )
    })

    it("forgets what a reset stream bought, and only that", async () => {
      await holding([["a", 20_000]])
      await env.run(Ledger.reset(env.schema, ["companies"]))
      expect(await rows()).toHaveLength(1)
      await env.run(Ledger.reset(env.schema, ["contacts"]))
      expect(await rows()).toHaveLength(0)
    })
  },
)
