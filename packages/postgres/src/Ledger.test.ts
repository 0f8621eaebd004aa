/**
 * The ledger `_bought` on every backend: written with the records a STATE commits (never with the
 * records no STATE followed), a later day winning; read back a page at a time in key order; asked
 * about keys and counted (what a sync's source reads of it); moved
 * into from a state's set; written back into a state for the pipe; forgotten on reset.
 */
import type { Message } from "@salesintel/airbyte"
import * as Stream from "effect/Stream"
import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest"
import * as Ddl from "./Ddl.ts"
import * as Ledger from "./Ledger.ts"
import * as Loader from "./Loader.ts"
import { qualified } from "./Sql.ts"
import { type Backend, backends, open } from "./testing/Backends.ts"
import { company, contact, record, state } from "./testing/Records.ts"

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
      await env.query(`TRUNCATE ${qualified(env.schema, "_bought")}, ${qualified(env.schema, "contacts")}`)
    })
    const load = (messages: ReadonlyArray<Message.Message>) =>
      env.run(Loader.load(Stream.fromIterable(messages), { schema: env.schema }))
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
      await load([fetched(1, "2026-11-22T08:00:00Z"), state("contacts", {})])
      await load([
        fetched(1, "2026-11-01T08:00:00Z"),
        fetched(2, "2026-11-01T08:00:00Z"),
        state("contacts", {}),
      ])
      await load([fetched(2, "2026-11-23T08:00:00Z"), state("contacts", {})])
      expect(await rows()).toEqual([
        ["contacts", "m-1", day("2026-11-22T00:00:00Z")],
        ["contacts", "m-2", day("2026-11-23T00:00:00Z")],
      ])
    })

    it("is read back in key order a page at a time, whatever it holds", async () => {
      const count = Ledger.pageSize * 2 + 17
      const entries = Array.from(
        { length: count },
        (_, index): Ledger.Entry => [`k-${index}`, 20_000 + (index % 3)],
      )
      await env.run(Ledger.adopt(env.schema, "contacts", entries))
      await env.run(
        Ledger.adopt(env.schema, "contacts", [
          ["k-5", 19_000],
          ["k-6", 30_000],
        ]),
      )
      const read = await env.run(Stream.runCollect(Ledger.read(env.schema, "contacts")))
      const keys = [...read].map(([key]) => key)
      expect(keys).toHaveLength(count)
      expect(keys).toEqual([...keys].sort())
      const days = new Map(read)
      expect(days.get("k-5")).toBe(20_000 + 2) // the later day stays
      expect(days.get("k-6")).toBe(30_000)
      expect(await env.run(Stream.runCollect(Ledger.read(env.schema, "companies")))).toHaveLength(0)
    })

    it("answers which keys were bought, and how many it holds and how many are fresh", async () => {
      await env.run(
        Ledger.adopt(env.schema, "contacts", [
          ["a", 20_000],
          ["b", 20_025],
          ["c", 19_900],
          ["d'; --", 20_030],
        ]),
      )
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

    it("goes back into a state that says it is in the ledger, for the pipe", async () => {
      await env.run(
        Ledger.adopt(env.schema, "contacts", [
          ["a", 20_000],
          ["b", 20_001],
          ["c", 20_000],
        ]),
      )
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
    })

    it("forgets what a reset stream bought, and only that", async () => {
      await env.run(Ledger.adopt(env.schema, "contacts", [["a", 20_000]]))
      await env.run(Ledger.reset(env.schema, ["companies"]))
      expect(await rows()).toHaveLength(1)
      await env.run(Ledger.reset(env.schema, ["contacts"]))
      expect(await rows()).toHaveLength(0)
    })
  },
)
