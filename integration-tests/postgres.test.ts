/**
 * The source's read stream straight into the loader, in process, on embedded PGlite (the path
 * `salesintel sync` takes): every stream lands, the saved state feeds an incremental rerun that
 * buys nothing, and the run is recorded.
 */
import { Catalog } from "@salesintel/airbyte"
import { Database, Loader, PGliteDatabase, Runs } from "@salesintel/postgres"
import { Commands } from "@salesintel/source"
import * as Effect from "effect/Effect"
import * as ManagedRuntime from "effect/ManagedRuntime"
import { afterAll, describe, expect, it } from "vitest"
import { fastPace, sandboxForFile } from "./sandbox.ts"

const sandbox = sandboxForFile({ seed: 7, contacts: 20_000, companies: 2_000 })
const runtime = ManagedRuntime.make(PGliteDatabase.layer())
const schema = "salesintel"

afterAll(async () => {
  await runtime.dispose()
})

describe("source -> loader in process", () => {
  it("syncs every stream, and the saved state makes the rerun free", { timeout: 120_000 }, async () => {
    const config = {
      api_key: "sandbox-full",
      requests_per_minute: fastPace,
      base_url: sandbox.url,
      credit_budget: 5_000,
      retry: { initial_delay_ms: 5, max_delay_ms: 50 },
      contacts: {
        searches: [{ name: "it-vps", filters: { job_departments: ["it_is"], job_levels: ["vp"] } }],
      },
      companies: { domains: [sandbox.dataset.companies[0]!.domain, sandbox.dataset.companies[1]!.domain] },
      taxonomy: { products: ["cloud"] },
    }
    const catalog = {
      streams: [
        {
          stream: { name: "taxonomy_categories" },
          sync_mode: "full_refresh",
          destination_sync_mode: "overwrite",
        },
        {
          stream: { name: "taxonomy_products" },
          sync_mode: "full_refresh",
          destination_sync_mode: "overwrite",
        },
        { stream: { name: "contacts" }, sync_mode: "incremental", destination_sync_mode: "append_dedup" },
        { stream: { name: "companies" }, sync_mode: "incremental", destination_sync_mode: "append_dedup" },
      ],
    } as const
    const sync = Effect.gen(function* () {
      const state = yield* Loader.SavedState.read(schema)
      const summary = yield* Loader.load(Commands.read({ config, catalog, state }), {
        schema,
        syncModes: Catalog.destinationSyncModes(catalog),
      })
      const runId = yield* Runs.start(schema)
      yield* Runs.finish(schema, runId, { status: "succeeded", streams: {} })
      return { summary, runId }
    })
    const first = await runtime.runPromise(sync)
    expect(first.summary.sourceErrors).toEqual([])
    expect(first.summary.uncommittedRecords).toBe(0)
    const contacts = first.summary.streams.contacts?.records ?? 0
    expect(contacts).toBeGreaterThan(0)
    const rows = await runtime.runPromise(
      Effect.flatMap(Database.Database, (db) =>
        db.query(
          "SELECT (SELECT count(*) FROM salesintel.contacts)::int AS contacts, (SELECT count(*) FROM salesintel.company_technologies)::int AS technologies",
        ),
      ),
    )
    expect(rows[0]?.contacts).toBe(contacts)
    expect(Number(rows[0]?.technologies)).toBeGreaterThan(0)
    const saved = await runtime.runPromise(Loader.SavedState.read(schema))
    expect(saved.map((entry) => entry.stream.stream_descriptor.name).sort()).toEqual([
      "companies",
      "contacts",
      "taxonomy_categories",
      "taxonomy_products",
    ])
    sandbox.reset()
    const second = await runtime.runPromise(sync)
    expect(second.summary.streams.contacts?.records ?? 0).toBe(0)
    expect(sandbox.charged() ?? 0).toBe(0)
  })
})
