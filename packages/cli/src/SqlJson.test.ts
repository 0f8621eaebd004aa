/**
 * `salesintel sql --format json` on each backend: counts (int8 from count(*), numeric from sum of
 * int8) are JSON numbers while exact, text past 2^53; a numeric's fraction keeps its scale.
 */
import { Database } from "@salesintel/postgres"
import * as Effect from "effect/Effect"
import { describe, expect, it } from "vitest"
import { backends, open } from "../../postgres/src/testing/Backends.ts"
import * as Query from "./Query.ts"

describe.each(await backends())("sql --format json on $name", (backend) => {
  it("prints counts as JSON numbers where they fit in 2^53", { timeout: 120_000 }, async () => {
    const db = await open(backend, "cli sql json counts")
    try {
      await db.run(
        Effect.flatMap(Database.Database, (database) => database.exec(`CREATE SCHEMA "${db.schema}"`)),
      )
      const output = await db.run(
        Query.sql(
          db.schema,
          `SELECT count(*) AS companies, sum(n::int8) AS credits, max(n::int8) * 2 AS doubled
             FROM generate_series(1, 3472) AS n;
           SELECT 9007199254740991::int8 AS largest, 9007199254740992::int8 AS past,
             123456789012345678901234567890::numeric AS huge, 1.50::numeric AS scaled, 42::numeric AS whole`,
          { format: "json" },
        ),
      )
      expect(output).toBe(
        `${JSON.stringify([{ companies: 3472, credits: 6_029_128, doubled: 6944 }])}\n` +
          `[{"largest":9007199254740991,"past":"9007199254740992","huge":"123456789012345678901234567890","scaled":"1.50","whole":42}]\n`,
      )
    } finally {
      await db.close()
    }
  })
})
