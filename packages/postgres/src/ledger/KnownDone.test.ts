/**
 * `_known_done` on every backend: written from the `_known_done` stream's records in the
 * transaction of the STATE after them (never without it), a later day winning; looked up, adopted
 * from a state, written into the state for the pipe and the plan (merged with a set the state
 * holds); forgotten by a reset, by an overwrite that did not look them up again, and by
 * `salesintel forget` (by email, match id, profile URL, and a held person's name).
 */
import { type Message, PackedIds, Streams } from "@salesintel/airbyte"
import * as Effect from "effect/Effect"
import * as Stream from "effect/Stream"
import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest"
import { qualified } from "../database/Sql.ts"
import * as Loader from "../load/Loader.ts"
import * as SavedState from "../load/SavedState.ts"
import * as Ddl from "../migrate/Ddl.ts"
import { type Backend, backends, open } from "../testing/Backends.ts"
import { contact, record, state } from "../testing/Records.ts"
import * as Forget from "./Forget.ts"
import * as KnownDone from "./KnownDone.ts"
import * as Ledger from "./Ledger.ts"

const all = await backends()

const day = (iso: string) => Math.floor(Date.parse(iso) / 86_400_000)
const done = (keys: ReadonlyArray<string>, at: string) =>
  record(Streams.knownDone.name, { stream: "contacts", keys, _salesintel_fetched_at: at }) as Message.Message

describe.each(all.map((backend): [string, Backend] => [backend.name, backend]))(
  "the known identities done on %s",
  (_, backend) => {
    let env: Awaited<ReturnType<typeof open>>
    beforeAll(async () => {
      env = await open(backend, "KnownDone")
    })
    afterAll(async () => {
      await env?.close()
    })
    beforeEach(async () => {
      await env.run(Ddl.ensure(env.schema))
      await env.query(
        `TRUNCATE ${qualified(env.schema, "_known_done")}, ${qualified(env.schema, "contacts")}, ${qualified(env.schema, "_state")} CASCADE`,
      )
    })
    const load = (messages: ReadonlyArray<Message.Message>, options: Partial<Loader.LoadOptions> = {}) =>
      env.run(Loader.load(Stream.fromIterable(messages), { schema: env.schema, ...options }))
    const rows = async () =>
      (await env.query(`SELECT key, day FROM ${qualified(env.schema, "_known_done")} ORDER BY key`)).map(
        (row) => [row.key, Number(row.day)],
      )

    it("commits with the STATE after them, a later day winning, and never without one", async () => {
      await load([done(["a@x.com", "match_id:m-1"], "2026-11-20T10:00:00Z"), state("contacts", {})])
      await load([done(["a@x.com"], "2026-11-21T10:00:00Z"), state("contacts", {})])
      await load([done(["a@x.com"], "2026-11-19T10:00:00Z"), state("contacts", {})])
      // The input ends before a STATE covers them: rolled back with the records around them.
      await load([done(["b@x.com"], "2026-11-21T10:00:00Z")])
      expect(await rows()).toEqual([
        ["a@x.com", day("2026-11-21T00:00:00Z")],
        ["match_id:m-1", day("2026-11-20T00:00:00Z")],
      ])
      const found = await env.run(KnownDone.lookup(env.schema, "contacts", ["a@x.com", "b@x.com"]))
      expect(found).toEqual([["a@x.com", day("2026-11-21T00:00:00Z")]])
    })

    it("says what it dates after tomorrow (a clock ahead wrote it), and nothing when none is", async () => {
      const today = day("2026-11-21T00:00:00Z")
      await load([done(["a@x.com"], "2026-11-22T10:00:00Z"), state("contacts", {})])
      expect(await env.run(KnownDone.ahead(env.schema, "contacts", today))).toBeUndefined()
      await load([
        done(["b@x.com", "c@x.com"], "2029-08-20T10:00:00Z"),
        done(["d@x.com"], "2029-08-22T10:00:00Z"),
        state("contacts", {}),
      ])
      expect(await env.run(KnownDone.ahead(env.schema, "contacts", today))).toEqual({
        keys: 3,
        days: 2,
        first: day("2029-08-20T00:00:00Z"),
        last: day("2029-08-22T00:00:00Z"),
      })
      expect(await env.run(KnownDone.ahead(env.schema, "companies", today))).toBeUndefined()
    })

    it("refuses a record that is not one, naming the stream", async () => {
      const failed = await env.run(
        Effect.flip(
          Loader.load(
            Stream.fromIterable([record(Streams.knownDone.name, { stream: "contacts", keys: "a@x.com" })]),
            { schema: env.schema },
          ),
        ),
      )
      expect(failed.message).toContain("_known_done")
      expect(failed.message).toContain("keys")
    })

    it("adopts a state's set and writes itself into the state, merged with the set a state holds", async () => {
      await env.run(
        KnownDone.adopt(env.schema, "contacts", [
          ["a@x.com", 20_000],
          ["a@x.com", 20_002],
        ]),
      )
      await load([done(["b@x.com"], "2026-11-21T10:00:00Z"), state("contacts", { emails: "ledger" })])
      const [saved] = await env.run(Ledger.exported(env.schema, [...(await savedStates())]))
      expect(saved?.stream.stream_state).toMatchObject({
        emails: { "20002": ["a@x.com"], [String(day("2026-11-21T00:00:00Z"))]: ["b@x.com"] },
      })
      // A set a pipe's load wrote (a day packed) is kept beside the table's.
      const packed = Array.from({ length: 70 }, (_, index) => `p${index}@x.com`)
      const merged = await env.run(
        KnownDone.intoState(env.schema, "contacts", { "20002": PackedIds.pack(packed) }),
      )
      const day20002 = merged?.["20002"]
      expect(Array.isArray(day20002) ? [...day20002].sort() : day20002).toEqual([...packed, "a@x.com"].sort())
    })

    it("forgets them on a reset, and when an overwrite ends without looking them up again", async () => {
      await load([done(["old@x.com", "kept@x.com"], "2026-11-20T10:00:00Z"), state("contacts", {})])
      const overwrite = { syncModes: { contacts: "overwrite" as const } }
      await load(
        [record("contacts", contact(1)), done(["kept@x.com"], "2026-11-21T10:00:00Z"), state("contacts", {})],
        overwrite,
      )
      expect((await rows()).map(([key]) => key)).toEqual(["kept@x.com"])
      await env.run(Ledger.reset(env.schema, ["companies"]))
      expect(await rows()).toHaveLength(1)
      await env.run(Ledger.reset(env.schema, ["contacts"]))
      expect(await rows()).toHaveLength(0)
    })

    it("salesintel forget deletes a person's identities: email, match id, profile URL and name", async () => {
      const person = contact(7, {
        email: "Dana@X.com",
        social_profiles: [{ type: "linkedin", url: "https://www.linkedin.com/in/dana/" }],
        company_domains: ["c7.example.com"],
      })
      await load([record("contacts", person), state("contacts", {})])
      const name = `name:${String(person.first_name).toLowerCase()}|${String(person.last_name).toLowerCase()}|`
      const domains = (person.company_domains as ReadonlyArray<string> | undefined) ?? []
      expect(domains.length).toBeGreaterThan(0)
      const keys = [
        "dana@x.com",
        `match_id:${person.match_id}`,
        "linkedin:https://linkedin.com/in/dana",
        `${name}${domains[0]}`,
        "someone.else@x.com",
      ]
      await load([done(keys, "2026-11-20T10:00:00Z"), state("contacts", {})])
      const found = await env.run(
        Forget.found(env.schema, { matchIds: [], emails: ["dana@x.com"], linkedinUrls: [], domains: [] }),
      )
      const counted = await env.run(Forget.rows(env.schema, found, false))
      expect(counted).toContainEqual({ table: "_known_done", rows: 4 })
      expect((await rows()).map(([key]) => key)).toEqual(["someone.else@x.com"])
    })

    const savedStates = () => env.run(SavedState.read(env.schema))
  },
)
