#!/usr/bin/env node
/**
 * `npm run demo`: from a fresh clone, with no key, no Docker and no Postgres server: starts the
 * sandbox provider, syncs spec/examples/demo.json into a fresh embedded PGlite database under
 * ./.salesintel/demo, and prints the rows per table, the credits spent and the top technologies.
 */
import { readFile, rm } from "node:fs/promises"
import { fileURLToPath } from "node:url"
import { PGliteDatabase, Sql, Tables } from "@salesintel/postgres"
import { startSandbox } from "@salesintel/sandbox"
import { Effect } from "effect"
import * as Query from "./Query.ts"
import * as Sync from "./Sync.ts"

const configPath = fileURLToPath(new URL("../../../spec/examples/demo.json", import.meta.url))
const directory = "./.salesintel/demo"
const schema = Sql.defaultSchema

const main = async () => {
  const started = Date.now()
  const sandbox = await startSandbox({ port: 0 })
  process.stderr.write(`sandbox provider serving ${sandbox.url} (${sandbox.dataset.contactCount} contacts)\n`)
  try {
    const config = { ...(JSON.parse(await readFile(configPath, "utf8")) as object), base_url: sandbox.url }
    await rm(directory, { recursive: true, force: true })
    const program = Effect.gen(function* () {
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
      return { outcome, counts, top }
    })
    const { outcome, counts, top } = await Effect.runPromise(
      program.pipe(Effect.provide(PGliteDatabase.layer(directory))),
    )
    console.log(Sync.describe(outcome, `embedded PGlite in ${directory}`))
    console.log("Rows per table")
    console.log(counts)
    console.log("Top technologies by adoption (companies using them, share of companies synced)")
    console.log(top)
    console.log(
      `credits spent: ${outcome.creditsSpent} of ${outcome.creditBudget} (sandbox count: ${sandbox.accounts()["sandbox-full"]?.credits_charged ?? "?"})`,
    )
    console.log(
      `done in ${((Date.now() - started) / 1000).toFixed(1)} s. Explore: npx salesintel sql --pglite-dir ${directory} "SELECT * FROM contacts_by_department_level ORDER BY contacts DESC"`,
    )
    if (outcome.status !== "succeeded") process.exitCode = 1
  } finally {
    await sandbox.close()
  }
}

await main()
