/**
 * The companies' bought set held by their table, on every backend: the keys the rows prove (each
 * domain, the whole name, trimmed and case-folded, on the latest row's fetched day), and a saved
 * state mended with them: a key it lacks added, a day that is not the rows' mended, packed days
 * read as the source reads them, everything else left as it was; the same mend in what
 * `salesintel-pg state` and the plan read (Ledger.exported).
 */
import { type Message, PackedIds } from "@salesintel/airbyte"
import * as Stream from "effect/Stream"
import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest"
import { qualified } from "../database/Sql.ts"
import * as Loader from "../load/Loader.ts"
import * as Ddl from "../migrate/Ddl.ts"
import { type Backend, backends, open } from "../testing/Backends.ts"
import { company, record, state } from "../testing/Records.ts"
import * as HeldCompanies from "./HeldCompanies.ts"
import * as Ledger from "./Ledger.ts"

const day = (iso: string) => Math.floor(Date.parse(iso) / 86_400_000)
const bought = (id: number, at: string, fields: Record<string, unknown> = {}) =>
  record("companies", { ...company(id), ...fields, _salesintel_fetched_at: at }) as Message.Message

describe("a companies state mended with what the table holds", () => {
  const held: HeldCompanies.Held = {
    domains: [
      [20_010, ["a.com", "b.com"]],
      [20_012, ["c.com"]],
    ],
    names: [[20_010, ["acme corp"]]],
  }

  it("adds what it lacks, mends another day, and leaves the rest as it was", () => {
    const saved = {
      domains: { "20000": ["a.com", "kept-by-another-spelling.com"] },
      contact_domains: { "20012": ["c.com"] },
      pending_contact_domains: ["d.com"],
      unmatched: { domains: ["nothing.com"] },
    }
    const { state, mended } = HeldCompanies.mendState(saved, held)
    expect(mended).toEqual({ added: 2, redated: 1 })
    expect(state).toEqual({
      domains: { "20000": ["kept-by-another-spelling.com"], "20010": ["a.com", "b.com"] },
      contact_domains: { "20012": ["c.com"] },
      names: { "20010": ["acme corp"] },
      pending_contact_domains: ["d.com"],
      unmatched: { domains: ["nothing.com"] },
    })
    // In step: the very state, untouched.
    const again = HeldCompanies.mendState(state, held)
    expect(again.mended).toEqual({ added: 0, redated: 0 })
    expect(again.state).toBe(state)
  })

  it("reads packed days as the source does, and makes a state where none was saved", () => {
    const packed = { domains: { "20010": PackedIds.pack(["a.com", "b.com", "c.com"]) }, names: {} }
    const { mended } = HeldCompanies.mendState(packed, held)
    expect(mended).toEqual({ added: 1, redated: 1 })
    expect(HeldCompanies.mendState(undefined, held).state).toEqual({
      domains: { "20010": ["a.com", "b.com"], "20012": ["c.com"] },
      names: { "20010": ["acme corp"] },
    })
  })

  it("leaves a state whose sets do not decode as it is (the source refuses it with its path)", () => {
    for (const broken of [
      { domains: [] },
      { names: { yesterday: ["x"] } },
      { domains: { "1": "ids1:@@" } },
    ]) {
      const { state, mended } = HeldCompanies.mendState(broken, held)
      expect(state).toBe(broken)
      expect(mended).toEqual({ added: 0, redated: 0 })
    }
  })
})

describe.each((await backends()).map((backend): [string, Backend] => [backend.name, backend]))(
  "the companies held by their table on %s",
  (_, backend) => {
    let env: Awaited<ReturnType<typeof open>>
    beforeAll(async () => {
      env = await open(backend, "HeldCompanies")
    })
    afterAll(async () => {
      await env?.close()
    })
    beforeEach(async () => {
      await env.run(Ddl.ensure(env.schema))
      await env.query(`TRUNCATE ${qualified(env.schema, "companies")} CASCADE`)
    })
    const load = (messages: ReadonlyArray<Message.Message>) =>
      env.run(Loader.load(Stream.fromIterable(messages), { schema: env.schema }))

    it("proves each domain and the whole name of a row, trimmed and case-folded, on its latest day", async () => {
      await load([
        bought(1, "2026-11-20T10:00:00Z", { company_domains: [" A.example ", "b.example", ""] }),
        bought(2, "2026-11-22T10:00:00Z", { company_domains: ["b.example"], company_name: " Acme  Corp " }),
        bought(3, "2026-11-21T10:00:00Z", { company_domains: null, company_name: null }),
        state("companies", {}),
      ])
      const keys = await env.run(HeldCompanies.held(env.schema))
      const byKey = (days: HeldCompanies.Held["domains"]) =>
        Object.fromEntries(days.flatMap(([on, held]) => held.map((key) => [key, on])))
      expect(byKey(keys.domains)).toEqual({
        "a.example": day("2026-11-20T00:00:00Z"),
        "b.example": day("2026-11-22T00:00:00Z"),
      })
      expect(byKey(keys.names)).toEqual({
        "company 1": day("2026-11-20T00:00:00Z"),
        "acme  corp": day("2026-11-22T00:00:00Z"),
        // The nested block's name, as the company_name column takes it.
        "company 3": day("2026-11-21T00:00:00Z"),
      })
      // A schema without the table holds nothing.
      expect(await env.run(HeldCompanies.held(`${env.schema}_none`))).toEqual({ domains: [], names: [] })
    })

    it("is mended into what salesintel-pg state and the plan read, whatever _state says", async () => {
      await load([bought(7, "2026-11-20T10:00:00Z"), state("companies", { domains: {} })])
      const fetched = String(day("2026-11-20T00:00:00Z"))
      const expected = { domains: { [fetched]: ["c7.example.com"] }, names: { [fetched]: ["company 7"] } }
      const saved = await env.run(Ledger.exported(env.schema, []))
      expect(saved.map((entry) => [entry.stream.stream_descriptor.name, entry.stream.stream_state])).toEqual([
        ["companies", expected],
      ])
      const stale = await env.run(
        Ledger.exported(env.schema, [
          {
            type: "STREAM",
            stream: {
              stream_descriptor: { name: "companies" },
              stream_state: { domains: { "20000": ["c7.example.com"] }, names: {} },
            },
          },
        ]),
      )
      expect(stale[0]?.stream.stream_state).toEqual(expected)
    })
  },
)
