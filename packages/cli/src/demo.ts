#!/usr/bin/env node
/**
 * `npm run demo`: from a fresh clone, with no key, no Docker and no Postgres server: starts the
 * sandbox provider, syncs spec/examples/demo.json into a fresh embedded PGlite database under
 * ./.salesintel/demo as of 31 days ago, lets the provider's data move on one generation, syncs
 * again today (what is older than refresh_after_days is bought again, and what changed is kept),
 * and prints the rows per table, the credits spent, the top technologies, the recent adoptions,
 * the displacements and the champion moves.
 */
import { readFile, rm } from "node:fs/promises"
import { fileURLToPath } from "node:url"
import { PGliteDatabase, Sql, Tables } from "@salesintel/postgres"
import { startSandbox } from "@salesintel/sandbox"
import * as Effect from "effect/Effect"
import * as Query from "./Query.ts"
import * as Sync from "./Sync.ts"

const configPath = fileURLToPath(new URL("../../../spec/examples/demo.json", import.meta.url))
const directory = "./.salesintel/demo"
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

const main = async () => {
  const started = Date.now()
  const sandbox = await startSandbox({ port: 0 })
  process.stderr.write(`sandbox provider serving ${sandbox.url} (${sandbox.dataset.contactCount} contacts)\n`)
  try {
    const config = { ...(JSON.parse(await readFile(configPath, "utf8")) as object), base_url: sandbox.url }
    await rm(directory, { recursive: true, force: true })
    const program = Effect.gen(function* () {
      // A month ago, then today after the provider's data moved on: the refresh finds what changed.
      const first = yield* Sync.sync({
        config,
        schema,
        progress: process.stderr,
        startedAt: started - monthAgo,
      })
      yield* Effect.promise(() => nextGeneration(sandbox.url))
      const outcome = yield* Sync.sync({ config, schema, progress: process.stderr })
      const counts = yield* Query.sql(
        schema,
        Tables.allTables
          .map((table) => `SELECT '${table.name}' AS "table", count(*) AS rows FROM ${Sql.ident(table.name)}`)
          .join(" UNION ALL "),
      )
      const top = yield* Query.sql(
        schema,
        "SELECT product, vendor, category, companies, share FROM technology_adoption_by_product ORDER BY companies DESC, product LIMIT 10",
      )
      const adoptions = yield* Query.sql(
        schema,
        "SELECT product, category, count(*) AS adoptions, string_agg(company_name, ', ' ORDER BY company_name) AS companies FROM recent_technology_adoptions GROUP BY product, category ORDER BY adoptions DESC, product LIMIT 5",
      )
      const displacements = yield* Query.sql(
        schema,
        "SELECT company_name, subcategory, dropped_product AS dropped, adopted_product AS adopted, to_char(adopted_at, 'YYYY-MM-DD') AS seen_on FROM technology_displacements ORDER BY company_name, dropped LIMIT 5",
      )
      const champions = yield* Query.sql(
        schema,
        "SELECT display_name, left_company_name AS left_company, joined_company_name AS joined_company, count(*) AS products_there, CASE WHEN bool_and(joined_company_uses IS NULL) THEN 'not observed' ELSE (count(*) FILTER (WHERE joined_company_uses))::text END AS also_at_new_company FROM champion_moves GROUP BY match_id, display_name, left_company_name, joined_company_name ORDER BY products_there DESC, display_name LIMIT 5",
      )
      return { first, outcome, counts, top, adoptions, displacements, champions }
    })
    const { first, outcome, counts, top, adoptions, displacements, champions } = await Effect.runPromise(
      program.pipe(Effect.provide(PGliteDatabase.layer(directory))),
    )
    console.log(Sync.describe(first, `embedded PGlite in ${directory} (as of 31 days ago)`))
    console.log(Sync.describe(outcome, `embedded PGlite in ${directory} (today, a refresh)`))
    console.log("Rows per table")
    console.log(counts)
    console.log("Top technologies by adoption (companies using them, share of companies synced)")
    console.log(top)
    console.log("Technologies adopted in the last 30 days (recent_technology_adoptions)")
    console.log(adoptions)
    console.log("Products replaced by a rival of their subcategory (technology_displacements)")
    console.log(displacements)
    console.log("Contacts who left a company and the products in use there (champion_moves)")
    console.log(champions)
    console.log(
      `credits spent: ${first.creditsSpent} + ${outcome.creditsSpent}, each run's budget ${outcome.creditBudget} (sandbox count: ${sandbox.accounts()["sandbox-full"]?.credits_charged ?? "?"})`,
    )
    console.log(
      `done in ${((Date.now() - started) / 1000).toFixed(1)} s. Explore: npx salesintel sql --pglite-dir ${directory} "SELECT * FROM contacts_by_department_level ORDER BY contacts DESC"`,
    )
    if (outcome.status === "failed" || outcome.status === "interrupted") process.exitCode = 1
  } finally {
    await sandbox.close()
  }
}

await main()
