/**
 * Pages that do not decode whole, and pages that carry a record twice (issue 44, case 8), through
 * `salesintel sync` in process against the sandbox (credits as it counts them), on PGlite and a
 * real Postgres.
 *
 * - A credited page with contacts the provider sent without `match_id` (the sandbox's
 *   `no_match_id_rate`, the same contacts on every request, preview included): its charge is
 *   counted, its good records land, the bad ones are kept whole in `_rejected` with the reason and
 *   counted in the summary and in `_sync_runs`, and the next run is not blocked by them on the free
 *   preview and buys nothing twice.
 * - A page with records sent twice (the sandbox's `duplicate_rate`): each copy is charged, as the
 *   provider charges per record on the page; the summary's credits are the charge and its records
 *   the rows.
 */
import { Readable } from "node:stream"
import { type Message, Ndjson } from "@salesintel/airbyte"
import { Sync } from "@salesintel/cli"
import { Ledger, Loader } from "@salesintel/postgres"
import { Commands } from "@salesintel/source"
import * as Effect from "effect/Effect"
import * as Stream from "effect/Stream"
import { describe, expect, it } from "vitest"
import { messageProblems } from "../packages/airbyte/src/testing/AirbyteSchema.ts"
import { loadRun } from "../packages/postgres/src/LoadRun.ts"
import { backends } from "../packages/postgres/src/testing/Backends.ts"
import { sandboxForFile } from "./sandbox.ts"
import { targetOn } from "./target.ts"
import { configOver, contactsCatalog, searchA, searchB, truthSandbox } from "./truth.ts"

const sandbox = sandboxForFile(truthSandbox)

type Config = ReturnType<typeof configOver>

/** The pipe's catalog: the contacts, and the records their pages carry that do not decode. */
const withRejected = {
  streams: [
    ...contactsCatalog.streams,
    { stream: { name: "_rejected" }, sync_mode: "incremental", destination_sync_mode: "append" },
  ],
}

/** The sandbox's contacts by email (a rejected record has no match_id to find it by). */
let emails: Map<string, number> | undefined
const indexOfEmail = (): Map<string, number> => {
  if (emails === undefined) {
    emails = new Map()
    for (let index = 0; index < sandbox.dataset.contactCount; index++)
      emails.set(String(sandbox.dataset.contact(index).email), index)
  }
  return emails
}

describe.each(await backends())("pages that do not decode whole, on $name", (backend) => {
  const target = targetOn(backend, "e2e bad pages", sandbox)
  const { fresh, table, count } = target
  const database = () => target.database
  /** `salesintel sync`, in process, however it ends: its outcome and what the sandbox charged. */
  const sync = (json: Config) => target.syncAsIs(json)

  it("keeps a credited page's good records, rejects the bad ones whole, and is not blocked after", async () => {
    await fresh()
    const key = sandbox.key()
    sandbox.setFaults({ no_match_id_rate: 0.05 }, key)
    const json = configOver(sandbox.url, key, { searches: [searchA, searchB] })

    const first = await sync(json)
    expect(first.outcome.error).toBeUndefined()
    expect(first.outcome.status).toBe("succeeded")
    const rows = await target.rows("contacts")
    const rejected = await database().query(
      `SELECT stream, key, reason, record, run_id FROM ${table("_rejected")} ORDER BY reason`,
    )
    // Every record paid for is a row or a rejected record; the run's credits are the charge.
    expect(rejected.length).toBeGreaterThan(0)
    expect(rows).toBeGreaterThan(rejected.length)
    expect(rows + rejected.length).toBe(first.charged)
    expect(first.outcome.creditsSpent).toBe(first.charged)
    expect(first.outcome.creditsUncertain).toBe(0)
    for (const row of rejected) {
      expect(row.stream).toBe("contacts")
      expect(row.key).toBeNull()
      expect(String(row.reason)).toContain("match_id")
      expect(Number(row.run_id)).toBe(first.outcome.runId)
      // Whole: the provider's record as sent (its email names the contact in the sandbox).
      const record = (typeof row.record === "string" ? JSON.parse(row.record) : row.record) as Record<
        string,
        unknown
      >
      expect(record.match_id).toBeUndefined()
      const { match_id: _, ...sent } = sandbox.dataset.contact(indexOfEmail().get(String(record.email)) ?? -1)
      expect(record).toEqual(sent)
    }
    // Said in the summary and in the run's row: nothing paid for disappears silently.
    const contacts = first.outcome.streams.find((stream) => stream.stream === "contacts")
    expect(contacts?.records).toBe(rows)
    expect(contacts?.rejected).toBe(rejected.length)
    expect(Sync.describe(first.outcome, "db")).toContain(`${rejected.length} rejected`)
    expect(first.printed).toContain("contacts: a record did not decode (search_results[")
    const runRow = await database().query(
      `SELECT streams->'contacts'->>'rejected' AS rejected FROM ${table("_sync_runs")} WHERE id = $1`,
      [first.outcome.runId],
    )
    expect(Number(runRow[0]?.rejected)).toBe(rejected.length)
    // The ledger holds the rows' keys, not the rejected records (they have none).
    expect(await count(`SELECT count(*)::int AS n FROM ${table("_bought")} WHERE stream = 'contacts'`)).toBe(
      rows,
    )

    // The next run lists the searches on the free preview, bad records and all: not blocked, and
    // nothing bought twice.
    const previews = () => sandbox.requests(key)["people.preview"]?.["200"] ?? 0
    const listedBefore = previews()
    const second = await sync(json)
    expect(second.outcome.error).toBeUndefined()
    expect(second.outcome.status).toBe("succeeded")
    // It read the free listing, whose pages carry the same bad records, and said so.
    expect(previews()).toBeGreaterThan(listedBefore)
    expect(second.printed).toContain("listed contacts did not decode (search_results[")
    expect(second.charged).toBe(0)
    expect(second.outcome.creditsSpent).toBe(0)
    expect(await target.rows("contacts")).toBe(rows)
    expect(await target.rows("_rejected")).toBe(rejected.length)
  })

  /**
   * `salesintel-pg state | source-salesintel read --state - | salesintel-pg load`, in process: the
   * source's messages as the text it prints (each checked against the Airbyte protocol's schema),
   * loaded by the loader's run from that text.
   */
  const pipe = async (json: Config, catalog: unknown = withRejected) => {
    const state = await database().run(
      Effect.flatMap(Loader.SavedState.read(database().schema), (saved) =>
        Ledger.exported(database().schema, saved),
      ),
    )
    const before = sandbox.charged(json.api_key)
    const messages = await Effect.runPromise(
      Stream.runCollect(Commands.read({ config: json, catalog, state })),
    )
    for (const message of messages) expect(messageProblems(JSON.parse(Ndjson.serialize(message)))).toEqual([])
    const text = [...messages].map((message: Message.Message) => Ndjson.serialize(message)).join("")
    const outcome = await database().run(
      loadRun(Readable.from([text]), {
        schema: database().schema,
        syncModes: undefined,
        batchSize: 5_000,
        onSourceMessage: () => Effect.void,
        onStateCommitted: () => Effect.void,
      }),
    )
    return { outcome, text, charged: sandbox.charged(json.api_key) - before }
  }

  it("through the pipe: the rejected records are protocol records the loader keeps", async () => {
    await fresh()
    const key = sandbox.key()
    sandbox.setFaults({ no_match_id_rate: 0.05 }, key)
    const json = configOver(sandbox.url, key, { searches: [searchA] })
    const first = await pipe(json)
    expect(first.outcome.status).toBe("succeeded")
    const rows = await target.rows("contacts")
    const rejected = await count(
      `SELECT count(*)::int AS n FROM ${table("_rejected")} WHERE stream = 'contacts' AND reason LIKE '%match_id: is missing' AND record ? 'email' AND NOT record ? 'match_id'`,
    )
    expect(rejected).toBeGreaterThan(0)
    expect(rows + rejected).toBe(first.charged)
    expect(first.outcome.summary.rejected).toEqual({ contacts: rejected })
    const runRow = await database().query(
      `SELECT streams->'contacts'->>'rejected' AS rejected FROM ${table("_sync_runs")} WHERE id = $1`,
      [first.outcome.runId],
    )
    expect(Number(runRow[0]?.rejected)).toBe(rejected)
    // Loading the same text again adds no row: one row per stream and record.
    await database().run(
      loadRun(Readable.from([first.text]), {
        schema: database().schema,
        syncModes: undefined,
        batchSize: 5_000,
        onSourceMessage: () => Effect.void,
        onStateCommitted: () => Effect.void,
      }),
    )
    expect(await target.rows("_rejected")).toBe(rejected)
    // The next pipe, from the state the target exports, lists the search (bad records and all) and
    // buys nothing.
    const second = await pipe(json)
    expect(second.outcome.status).toBe("succeeded")
    expect(second.charged).toBe(0)
  })

  it("through the pipe, a catalog without _rejected gets each rejected record whole in a WARN, not a record", async () => {
    await fresh()
    const key = sandbox.key()
    sandbox.setFaults({ no_match_id_rate: 0.05 }, key)
    // A destination may refuse a record of a stream it was not configured for: none is sent.
    const first = await pipe(configOver(sandbox.url, key, { searches: [searchA] }), contactsCatalog)
    expect(first.outcome.status).toBe("succeeded")
    const rows = await target.rows("contacts")
    const lines = first.text.split("\n").filter((line) => line.length > 0)
    expect(lines.filter((line) => line.includes('"stream":"_rejected"'))).toEqual([])
    const said = lines
      .map((line) => JSON.parse(line) as { type: string; log?: { level: string; message: string } })
      .filter((message) => message.log?.message.includes("so here it is whole: {") === true)
    expect(said.length).toBe(first.charged - rows)
    expect(said.length).toBeGreaterThan(0)
    expect(await target.rows("_rejected")).toBe(0)
  })

  it("stops buying once most records do not decode: the provider's records changed, not a record", async () => {
    await fresh()
    const key = sandbox.key()
    // Every contact without its match_id: what a change of the provider's shape looks like.
    sandbox.setFaults({ no_match_id_rate: 1 }, key)
    const json = configOver(sandbox.url, key, { searches: [searchA, searchB] })
    const first = await sync(json)
    expect(first.outcome.status).toBe("failed")
    expect(first.outcome.error).toContain("the provider's records have changed shape")
    // What was paid for is counted and kept: every record charged is in _rejected.
    const rejected = await target.rows("_rejected")
    expect(rejected).toBe(first.charged)
    expect(first.outcome.creditsSpent).toBe(first.charged)
    expect(first.outcome.streams.find((stream) => stream.stream === "contacts")?.rejected).toBe(rejected)
    // A page's worth and the pages in flight with it, not the searches' 352.
    expect(first.charged).toBeLessThan(200)
    expect(first.printed).toContain("ERROR (system_error) people.search")
  })

  it("counts a record sent twice on a page as the provider charges it, and lands it once", async () => {
    await fresh()
    const key = sandbox.key()
    sandbox.setFaults({ duplicate_rate: 0.05 }, key)
    const domains = sandbox.dataset.companies.slice(0, 120).map((company) => company.domain)
    const json = { ...configOver(sandbox.url, key, { searches: [searchA, searchB] }), companies: { domains } }
    const first = await sync(json)
    expect(first.outcome.error).toBeUndefined()
    const rowsOf = target.rows
    const rows = { contacts: await rowsOf("contacts"), companies: await rowsOf("companies") }
    const outcome = (stream: string) => first.outcome.streams.find((s) => s.stream === stream)
    // Copies were sent, and charged: more records charged than rows.
    expect(first.charged).toBeGreaterThan(rows.contacts + rows.companies)
    // The summary: each stream's records are its rows, the credits what the provider charged.
    expect(outcome("contacts")?.records).toBe(rows.contacts)
    expect(outcome("companies")?.records).toBe(rows.companies)
    expect(first.outcome.creditsSpent).toBe(first.charged)
    expect((outcome("contacts")?.credits ?? 0) + (outcome("companies")?.credits ?? 0)).toBe(first.charged)
    const second = await sync(json)
    expect(second.outcome.error).toBeUndefined()
    expect(second.charged).toBe(0)
  })
})
