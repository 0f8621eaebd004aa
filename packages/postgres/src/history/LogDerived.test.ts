/**
 * The tables kept with the observation log (LogDerived.ts) give the views over them exactly the
 * rows the views gave when they walked the whole log (testing/LogWalk.ts, the old SQL kept as the
 * reference), and the products in use are those of each company's latest observation: as a
 * property on Postgres, for random logs of three companies loaded in random batches (out of order,
 * reloads, a company forgotten in between and observed again), and as one example on every
 * backend; and a schema at version 11 with a log, migrated, gives the same rows.
 */
import type { Message } from "@salesintel/airbyte"
import * as Effect from "effect/Effect"
import * as Stream from "effect/Stream"
import fc from "fast-check"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { Database, transaction } from "../database/Database.ts"
import { ident, qualified } from "../database/Sql.ts"
import * as Forget from "../ledger/Forget.ts"
import * as Loader from "../load/Loader.ts"
import * as Ddl from "../migrate/Ddl.ts"
import { type Backend, backends, open } from "../testing/Backends.ts"
import { inUseWalk, logWalkViews } from "../testing/LogWalk.ts"
import { company, record, state } from "../testing/Records.ts"
import * as LogDerived from "./LogDerived.ts"

const all = await backends()
const postgres = all.find((backend) => backend.name === "postgres")

/** Observation times: two months' ends and starts in UTC, and ties across companies when drawn twice. */
const times = [
  "2026-01-03T10:00:00.000Z",
  "2026-01-20T10:00:00.000Z",
  "2026-01-31T23:30:00.000Z",
  "2026-02-01T00:30:00.000Z",
  "2026-02-14T10:00:00.000Z",
  "2026-03-05T10:00:00.000Z",
  "2026-03-28T10:00:00.000Z",
  "2026-06-02T10:00:00.000Z",
]
const products = ["A", "B", "C", "D", "E"] as const

/**
 * A product as an observation at time `at` (an index of `times`) lists it: C changes category in
 * March (labels move with time, the same for every company at one time), D has no category and E
 * no vendor (null keys).
 */
const technology = (product: (typeof products)[number], at: number) => ({
  category: product === "D" ? null : product === "E" || (product === "C" && at >= 5) ? "Sales" : "Marketing",
  subcategory: product === "E" ? "CRM" : "Automation",
  product,
  vendor: product === "E" ? null : `Vendor ${product}`,
  in_use: true,
})

interface Observed {
  readonly id: number
  readonly at: number
  readonly products: ReadonlyArray<(typeof products)[number]>
}

const observedRecord = (o: Observed) => ({
  ...company(o.id, []),
  technologies: o.products.map((product) => technology(product, o.at)),
  _salesintel_fetched_at: times[o.at],
})

/** One load: records of distinct companies (a batch upserts each company once), or a forget. */
type Step = { readonly load: ReadonlyArray<Observed> } | { readonly forget: number }

const loadMessages = (list: ReadonlyArray<Observed>): Array<Message.Message> => [
  ...list.map((o) => record("companies", observedRecord(o))),
  state("companies", { done: list.length }),
]

const forget = (schema: string, id: number) =>
  Effect.zipRight(
    Ddl.ensure(schema),
    transaction(
      Effect.gen(function* () {
        const found = yield* Forget.found(schema, {
          matchIds: [],
          emails: [],
          linkedinUrls: [],
          domains: [`c${id}.example.com`],
        })
        yield* Forget.rows(schema, found, false)
      }),
    ),
  )

type Env = Awaited<ReturnType<typeof open>>

const runSteps = async (env: Env, schema: string, steps: ReadonlyArray<Step>) => {
  for (const step of steps)
    if ("forget" in step) await env.run(forget(schema, step.forget))
    else await env.run(Loader.load(Stream.fromIterable(loadMessages(step.load)), { schema }))
}

const normal = (rows: ReadonlyArray<Record<string, unknown>>): Array<string> =>
  rows
    .map((row) =>
      JSON.stringify(
        Object.entries(row)
          .sort(([a], [b]) => a.localeCompare(b))
          .map(([key, value]) => [key, value instanceof Date ? value.toISOString() : String(value)]),
      ),
    )
    .sort()

/**
 * Each log-walking view's rows, from the view and from the old SQL over the same log; and the
 * products in use the loader keeps, against the log's latest observations.
 */
const compared = async (env: Env, schema: string) =>
  Promise.all([
    ...logWalkViews.map(async (view) => ({
      view: view.name,
      now: normal(await env.query(`SELECT * FROM ${qualified(schema, view.name)}`)),
      walked: normal(await env.query(`SELECT * FROM (${view.sql(schema)}) walked`)),
    })),
    (async () => ({
      view: inUseWalk.name,
      now: normal(await env.query(`SELECT ${inUseWalk.columns} FROM ${qualified(schema, inUseWalk.name)}`)),
      walked: normal(await env.query(inUseWalk.sql(schema))),
    }))(),
  ])

const expectSame = async (env: Env, schema: string) => {
  for (const { view, now, walked } of await compared(env, schema))
    expect({ view, rows: now }).toEqual({ view, rows: walked })
}

/** The steps of the example: out of order, a reload, a forget, the forgotten company observed again. */
const example: ReadonlyArray<Step> = [
  {
    load: [
      { id: 1, at: 4, products: ["A", "B"] },
      { id: 2, at: 4, products: ["A", "D"] },
    ],
  },
  {
    load: [
      { id: 1, at: 0, products: ["A"] },
      { id: 2, at: 1, products: ["D", "E"] },
    ],
  },
  {
    load: [
      { id: 1, at: 2, products: ["C"] },
      { id: 3, at: 5, products: ["C", "E"] },
    ],
  },
  { load: [{ id: 1, at: 4, products: ["A", "B"] }] },
  { forget: 2 },
  {
    load: [
      { id: 1, at: 6, products: ["B", "C"] },
      { id: 2, at: 6, products: ["A"] },
      { id: 3, at: 3, products: [] },
    ],
  },
  {
    load: [
      { id: 2, at: 7, products: ["B"] },
      { id: 1, at: 3, products: ["A", "C"] },
    ],
  },
]

describe.each(all.map((backend): [string, Backend] => [backend.name, backend]))(
  "the tables kept with the observation log on %s",
  (_, backend) => {
    let env: Env
    beforeAll(async () => {
      env = await open(backend, "log derived")
    })
    afterAll(async () => {
      await env?.close()
    })

    it("give the views the rows the log walk gives: out of order, reloads, a forget", async () => {
      await runSteps(env, env.schema, example)
      const views = await compared(env, env.schema)
      // The example has rows in every view (a displacement: company 1 drops A for C, 8 days apart).
      for (const { now } of views) expect(now.length).toBeGreaterThan(0)
      await expectSame(env, env.schema)
    })

    it("a schema at version 11 with a log, migrated, gives the same rows", async () => {
      const schema = env.schema
      const before = await compared(env, schema)
      // Version 11 as it was: no derived tables, no index of products, no `_known_done`, no version 12 or later.
      await env.run(
        Effect.flatMap(Database, (db) =>
          db.exec(
            [
              ...LogDerived.tables.map((table) => `DROP TABLE ${qualified(schema, table.name)} CASCADE`),
              `DROP INDEX ${qualified(schema, "technology_observations_product")}`,
              `DROP TABLE ${qualified(schema, "_known_done")}`,
              `DELETE FROM ${qualified(schema, "_schema_version")} WHERE version >= 12`,
            ].join(";\n"),
          ),
        ),
      )
      await env.run(Ddl.ensure(schema))
      const [version] = await env.query(
        `SELECT max(version)::int AS v FROM ${qualified(schema, "_schema_version")}`,
      )
      expect(version?.v).toBe(Ddl.currentVersion)
      expect(await compared(env, schema)).toEqual(before)
      await expectSame(env, schema)
    })
  },
)

/** Observations of up to three companies at distinct times each, with products drawn. */
const observations = fc
  .array(
    fc.record({
      id: fc.integer({ min: 1, max: 3 }),
      at: fc.integer({ min: 0, max: times.length - 1 }),
      products: fc.subarray([...products]),
    }),
    { minLength: 1, maxLength: 12 },
  )
  .map((list) => list.filter((o, index) => list.findIndex((p) => p.id === o.id && p.at === o.at) === index))

/** The observations in a drawn order, some loaded again, cut into loads, maybe a forget among them. */
const stepsOf = fc
  .tuple(
    observations,
    fc.array(fc.nat(), { maxLength: 4 }),
    fc.option(fc.tuple(fc.integer({ min: 1, max: 3 }), fc.nat())),
    fc.array(fc.boolean(), { minLength: 20, maxLength: 20 }),
  )
  .chain(([list, reloads, forgot, cuts]) =>
    fc
      .shuffledSubarray(
        [...list, ...reloads.flatMap((i) => list.slice(i % list.length, (i % list.length) + 1))],
        {
          minLength: list.length + reloads.length,
        },
      )
      .map((ordered) => {
        const steps: Array<Step> = []
        let current: Array<Observed> = []
        for (const [index, o] of ordered.entries()) {
          if (current.some((held) => held.id === o.id) || (cuts[index % cuts.length] ?? false)) {
            if (current.length > 0) steps.push({ load: current })
            current = []
          }
          current.push(o)
        }
        if (current.length > 0) steps.push({ load: current })
        if (forgot !== null) steps.splice(forgot[1] % (steps.length + 1), 0, { forget: forgot[0] })
        return steps
      }),
  )

describe.skipIf(postgres === undefined)("the tables kept with the observation log, as a property", () => {
  let env: Env
  beforeAll(async () => {
    if (postgres !== undefined) env = await open(postgres, "log derived property")
  })
  afterAll(async () => {
    await env?.close()
  })

  it("for random logs loaded in random batches, the views give the log walk's rows", async () => {
    let run = 0
    await fc.assert(
      fc.asyncProperty(stepsOf, async (steps) => {
        const schema = `${env.schema} ${run++}`
        try {
          await runSteps(env, schema, steps)
          await expectSame(env, schema)
        } finally {
          await env.query(`DROP SCHEMA IF EXISTS ${ident(schema)} CASCADE`)
        }
      }),
      {
        numRuns: 40,
        // A failure is still reported when shrinking it is cut short; the suite stays in minutes.
        interruptAfterTimeLimit: 120_000,
        // Found by a run in CI: two drops of C in one month at one time, its labels from two times.
        examples: [
          [
            [
              {
                load: [
                  { id: 1, at: 7, products: [] },
                  { id: 3, at: 0, products: ["C"] },
                ],
              },
              {
                load: [
                  { id: 1, at: 0, products: ["D"] },
                  { id: 3, at: 7, products: ["A", "B", "D"] },
                ],
              },
              { load: [{ id: 1, at: 5, products: ["C"] }] },
            ],
          ],
        ],
      },
    )
  }, 300_000)
})
