/**
 * The change tables on every backend: a first observation is no change, a reload of the same
 * data adds nothing, a new observation records exactly the adoptions, drops and job changes
 * that differ from the rows it replaces, in every sync mode, stamped with the run.
 */
import type { Catalog, Message } from "@salesintel/airbyte"
import * as Stream from "effect/Stream"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { qualified } from "../database/Sql.ts"
import * as Loader from "../load/Loader.ts"
import * as Ddl from "../migrate/Ddl.ts"
import * as Runs from "../runs/Runs.ts"
import { type Backend, backends, open } from "../testing/Backends.ts"
import { company, contact, record, state } from "../testing/Records.ts"

const all = await backends()

const companyMessages = (companies: ReadonlyArray<Record<string, unknown>>): Array<Message.Message> => [
  ...companies.map((data) => record("companies", data)),
  state("companies", { done: companies.length }),
]
const contactMessages = (contacts: ReadonlyArray<Record<string, unknown>>): Array<Message.Message> => [
  ...contacts.map((data) => record("contacts", data)),
  state("contacts", { done: contacts.length }),
]

describe.each(all.map((backend): [string, Backend] => [backend.name, backend]))(
  "change tables on %s",
  (_, backend) => {
    let env: Awaited<ReturnType<typeof open>>
    beforeAll(async () => {
      env = await open(backend, `Changes "odd" Schema`)
    })
    afterAll(async () => {
      await env?.close()
    })
    const table = (name: string) => qualified(env.schema, name)
    const load = (messages: ReadonlyArray<Message.Message>, options: Loader.LoadOptions = {}) =>
      env.run(Loader.load(Stream.fromIterable(messages), { schema: env.schema, ...options }))
    const reset = async () => {
      await env.run(Ddl.ensure(env.schema))
      await env.query(
        `TRUNCATE ${["contacts", "companies", "company_technologies", "technology_changes", "job_changes", "_state"].map(table).join(", ")}`,
      )
    }
    const technologyChanges = async () =>
      (
        await env.query(
          `SELECT company_id::int AS company_id, product, change, run_id::int AS run_id,
             first_observed_at IS NOT NULL AS has_first, last_seen_at IS NOT NULL AS has_last
           FROM ${table("technology_changes")} ORDER BY change_id`,
        )
      ).map((row) => ({ ...row }))
    const jobChanges = async () =>
      (
        await env.query(
          `SELECT match_id, from_company_id::int AS from_company, to_company_id::int AS to_company,
             from_job_title, to_job_title, from_job_level, to_job_level, changed
           FROM ${table("job_changes")} ORDER BY change_id`,
        )
      ).map((row) => ({ ...row }))

    for (const mode of ["append_dedup", "overwrite", "append"] as const) {
      it(`records adoptions and drops of a company observed again (${mode})`, async () => {
        await reset()
        const syncModes: Catalog.DestinationSyncModes = { companies: mode }
        await load(companyMessages([company(1, ["A", "B"]), company(2, ["A"])]), { syncModes })
        // The first observation is not a change.
        expect(await technologyChanges()).toEqual([])
        await load(companyMessages([company(1, ["A", "B"]), company(2, ["A"])]), { syncModes })
        expect(await technologyChanges()).toEqual([])
        const runId = await env.run(Runs.start(env.schema))
        // Company 3 is new (no change); 1 drops A and adopts C; 2 marks A no longer in use.
        const notInUse = {
          ...company(2, ["A"]),
          technologies: [{ ...company(2, ["A"]).technologies[0], in_use: false }],
        }
        await load(companyMessages([company(1, ["B", "C"]), notInUse, company(3, ["D"])]), {
          syncModes,
          runId,
        })
        const expected = [
          { company_id: 1, product: "C", change: "adopted", run_id: runId, has_first: true, has_last: true },
          { company_id: 1, product: "A", change: "dropped", run_id: runId, has_first: false, has_last: true },
          { company_id: 2, product: "A", change: "dropped", run_id: runId, has_first: false, has_last: true },
        ]
        const sorted = (rows: ReadonlyArray<Record<string, unknown>>) =>
          [...rows].sort((a, b) => JSON.stringify(a).localeCompare(JSON.stringify(b)))
        expect(sorted(await technologyChanges())).toEqual(sorted(expected))
        // The same data again adds nothing; A back in use at 2 is an adoption.
        await load(companyMessages([company(1, ["B", "C"]), notInUse]), { syncModes })
        expect(await technologyChanges()).toHaveLength(3)
        await load(companyMessages([company(2, ["A"])]), { syncModes })
        expect((await technologyChanges()).slice(3)).toEqual([
          { company_id: 2, product: "A", change: "adopted", run_id: null, has_first: true, has_last: true },
        ])
      })
    }

    it("records job changes of contacts observed again, and nothing for a reload", async () => {
      await reset()
      await load(contactMessages([contact(1), contact(2), contact(3)]))
      expect(await jobChanges()).toEqual([])
      await load(contactMessages([contact(1), contact(2), contact(3)]))
      expect(await jobChanges()).toEqual([])
      const moved = contact(1, { company_id: 2000, company: { id: 2000, name: "Elsewhere" } })
      const promoted = contact(2, { job_level: "dir", job_title: "IT Director" })
      await load(contactMessages([moved, promoted, contact(3), contact(4)]))
      expect(await jobChanges()).toEqual([
        {
          match_id: "m-1",
          from_company: 1001,
          to_company: 2000,
          from_job_title: "IT Manager",
          to_job_title: "IT Manager",
          from_job_level: "vp",
          to_job_level: "vp",
          changed: ["company"],
        },
        {
          match_id: "m-2",
          from_company: 1002,
          to_company: 1002,
          from_job_title: "IT Manager",
          to_job_title: "IT Director",
          from_job_level: "mgr",
          to_job_level: "dir",
          changed: ["title", "level"],
        },
      ])
      await load(contactMessages([moved, promoted, contact(4)]))
      expect(await jobChanges()).toHaveLength(2)
    })

    it("compares only what both observations carry: a field excluded in either is not a change", async () => {
      await reset()
      const without = (data: Record<string, unknown>, ...fields: ReadonlyArray<string>) =>
        Object.fromEntries(Object.entries(data).filter(([field]) => !fields.includes(field)))
      await load(contactMessages([contact(1), contact(2)]))
      await load(companyMessages([company(1, ["A", "B"])]))
      // exclude_fields: ["job_title"], ["technologies"]: absent from the records, not changed.
      await load(
        contactMessages([without(contact(1), "job_title"), without(contact(2), "company", "company_id")]),
      )
      await load(companyMessages([without(company(1, ["A", "B"]), "technologies")]))
      expect(await jobChanges()).toEqual([])
      expect(await technologyChanges()).toEqual([])
      // Excluded no more: the observation before did not carry them, so nothing is compared yet.
      await load(contactMessages([contact(1), contact(2)]))
      await load(companyMessages([company(1, ["A", "B"])]))
      expect(await jobChanges()).toEqual([])
      expect(await technologyChanges()).toEqual([])
      // Carried by both: a real change is still one.
      await load(contactMessages([contact(1, { job_title: "CIO" })]))
      await load(companyMessages([company(1, ["A"])]))
      expect((await jobChanges()).map((row) => row.changed)).toEqual([["title"]])
      expect((await technologyChanges()).map((row) => [row.product, row.change])).toEqual([["B", "dropped"]])
    })

    it("keeps no change of records after the last STATE (rolled back with them)", async () => {
      await reset()
      await load(companyMessages([company(1, ["A"])]))
      await load([record("companies", company(1, ["B"]))])
      expect(await technologyChanges()).toEqual([])
    })
  },
)
