/**
 * `npm run demo`'s program (DemoRun.ts) into a PGlite directory of the test's own: each list it
 * prints says "top N of M" when it shows fewer rows than there are, M counted here from the
 * views of the database the demo wrote (the demo's data has more products adopted in the last
 * 30 days than the five it lists).
 */
import { mkdtempSync, rmSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { Database, PGliteDatabase, Sql } from "@salesintel/postgres"
import * as Effect from "effect/Effect"
import { afterAll, describe, expect, it } from "vitest"
import * as DemoLists from "../packages/cli/src/DemoLists.ts"
import * as DemoRun from "../packages/cli/src/DemoRun.ts"
import { runTag } from "../packages/postgres/src/testing/RunTag.ts"

const home = mkdtempSync(join(tmpdir(), `salesintel-demo-${runTag()}-`))
afterAll(() => rmSync(home, { recursive: true, force: true }))

/** Rows of `query` over the demo's schema, read from its PGlite directory. */
const rowsOf = (directory: string, query: string) =>
  Effect.runPromise(
    Effect.flatMap(Database.Database, (db) => db.query(query)).pipe(
      Effect.provide(PGliteDatabase.layer(directory)),
    ),
  )

describe("npm run demo", () => {
  it("says top N of M for every list it cuts, M what the views hold", { timeout: 180_000 }, async () => {
    const directory = join(home, "demo")
    const printed: Array<string> = []
    const exitCode = await DemoRun.run({
      directory,
      print: (text) => printed.push(text),
      progress: { isTTY: false, write: () => true },
    })
    expect(exitCode).toBe(0)
    const output = printed.join("\n")
    const view = (name: string) => Sql.qualified(Sql.defaultSchema, name)
    // Counted here, not with the lists' own queries: products adopted (by category), replacements,
    // contacts who moved (by the companies left and joined), products in use.
    const [counts] = await rowsOf(
      directory,
      `SELECT
         (SELECT count(DISTINCT (product, category))::int FROM ${view("recent_technology_adoptions")}) AS adopted,
         (SELECT count(*)::int FROM ${view("technology_displacements")}) AS displacements,
         (SELECT count(DISTINCT (match_id, left_company_name, joined_company_name))::int FROM ${view("champion_moves")}) AS moves,
         (SELECT count(*)::int FROM ${view("technology_adoption_by_product")}) AS products`,
    )
    const totals = new Map<DemoLists.List, number>([
      [DemoLists.recentAdoptions, Number(counts?.adopted)],
      [DemoLists.displacements, Number(counts?.displacements)],
      [DemoLists.championMoves, Number(counts?.moves)],
      [DemoLists.topTechnologies, Number(counts?.products)],
    ])
    // The case: 7 products adopted in the last 30 days, 5 listed.
    expect(totals.get(DemoLists.recentAdoptions)).toBeGreaterThan(DemoLists.recentAdoptions.limit)
    expect(output).toContain(
      `Technologies adopted in the last 30 days (recent_technology_adoptions): top 5 of ${totals.get(DemoLists.recentAdoptions)}\n`,
    )
    for (const [list, total] of totals) {
      const heading =
        total > list.limit ? `${list.title}: top ${list.limit} of ${total}\n` : `${list.title}\n`
      expect(output, list.title).toContain(heading)
      // The rows under the heading are as many as it says.
      const table = output.slice(output.indexOf(heading) + heading.length)
      expect(/\((\d+) rows?\)/.exec(table)?.[1], list.title).toBe(String(Math.min(total, list.limit)))
    }
  })
})
