/**
 * What `npm run demo` runs (demo.ts is its entry): from a fresh clone, with no key, no Docker and no Postgres server: starts the
 * sandbox provider, syncs spec/examples/demo.json into a fresh embedded PGlite database under
 * ./.salesintel/demo as of 31 days ago, lets the provider's data move on one generation, syncs
 * again today (what is older than refresh_after_days is bought again, and what changed is kept),
 * and prints the rows per table, the credits spent, the top technologies, the recent adoptions,
 * the displacements and the champion moves, each list saying "top N of M" when it shows fewer
 * rows than there are (DemoLists.ts).
 */
import { readFile, rm } from "node:fs/promises"
import { fileURLToPath } from "node:url"
import { PGliteDatabase, Schema, Sql } from "@salesintel/postgres"
import { startSandbox } from "@salesintel/sandbox"
import * as Effect from "effect/Effect"
import * as DemoLists from "./DemoLists.ts"
import * as Query from "./Query.ts"
import * as Sync from "./Sync.ts"

const configPath = fileURLToPath(new URL("../../../spec/examples/demo.json", import.meta.url))
const schema = Sql.defaultSchema
const monthAgo = 31 * 86_400_000

/** The provider's data moves on one generation (some technologies and jobs change). */
const nextGeneration = async (url: string): Promise<void> => {
  const response = await fetch(`${url}/_sandbox/dataset`, {
    method: "POST",
    body: JSON.stringify({ generation: 1 }),
  })
  await response.text()
  if (!response.ok) throw new Error(`the sandbox refused the next generation (${response.status})`)
}

export interface Options {
  /** The PGlite directory, made afresh (npm run demo: ./.salesintel/demo). */
  readonly directory: string
  /** Where the results go, a line (or table) at a time (npm run demo: the console). */
  readonly print: (text: string) => void
  /** Where the syncs' progress goes (npm run demo: stderr). */
  readonly progress: Sync.SyncOptions["progress"]
}

/** The demo: both syncs, then what landed; the exit code it asks for (1: the refresh failed). */
export const run = async ({ directory, print, progress }: Options): Promise<number> => {
  const started = Date.now()
  const sandbox = await startSandbox({ port: 0 })
  progress.write(`sandbox provider serving ${sandbox.url} (${sandbox.dataset.contactCount} contacts)\n`)
  try {
    const config = { ...(JSON.parse(await readFile(configPath, "utf8")) as object), base_url: sandbox.url }
    await rm(directory, { recursive: true, force: true })
    const program = Effect.gen(function* () {
      // A month ago, then today after the provider's data moved on: the refresh finds what changed.
      const first = yield* Sync.sync({ config, schema, progress, startedAt: started - monthAgo })
      yield* Effect.promise(() => nextGeneration(sandbox.url))
      const outcome = yield* Sync.sync({ config, schema, progress })
      const counts = yield* Query.sql(
        schema,
        Schema.Tables.allTables
          .map((table) => `SELECT '${table.name}' AS "table", count(*) AS rows FROM ${Sql.ident(table.name)}`)
          .join(" UNION ALL "),
      )
      const lists = yield* Effect.forEach(DemoLists.all, (list) => DemoLists.render(schema, list))
      return { first, outcome, counts, lists }
    })
    const { first, outcome, counts, lists } = await Effect.runPromise(
      program.pipe(Effect.provide(PGliteDatabase.layer(directory))),
    )
    print(Sync.describe(first, `embedded PGlite in ${directory} (as of 31 days ago)`))
    print(Sync.describe(outcome, `embedded PGlite in ${directory} (today, a refresh)`))
    print("Rows per table")
    print(counts)
    for (const list of lists) print(list)
    print(
      `credits spent: ${first.creditsSpent} + ${outcome.creditsSpent}, each run's budget ${outcome.creditBudget} (sandbox count: ${sandbox.accounts()["sandbox-full"]?.credits_charged ?? "?"})`,
    )
    print(
      `done in ${((Date.now() - started) / 1000).toFixed(1)} s. Explore: npx salesintel sql --pglite-dir ${directory} "SELECT * FROM contacts_by_department_level ORDER BY contacts DESC"`,
    )
    return outcome.status === "failed" || outcome.status === "interrupted" ? 1 : 0
  } finally {
    await sandbox.close()
  }
}
