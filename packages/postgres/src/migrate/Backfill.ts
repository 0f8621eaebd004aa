/**
 * Re-derives a stream's typed columns and child tables from the `_raw` its rows keep: how a
 * migration fills columns and tables a newer version added (company size, location parts, sites,
 * social profiles) for records loaded before it, without buying them again. Each row goes
 * through the stream's own mapping (Tables.ts), so the backfill writes what a load of the same
 * record would; rows keep their `_synced_at`. A row whose `_raw` no longer decodes is left as it is.
 */
import { Message } from "@salesintel/airbyte"
import * as Effect from "effect/Effect"
import * as Either from "effect/Either"
import { Database, type DatabaseError } from "../database/Database.ts"
import { ident, qualified } from "../database/Sql.ts"
import * as Batch from "../merge/Batch.ts"
import * as Merge from "../merge/Merge.ts"
import type { StreamMapping } from "../schema/Mapping.ts"

/** What a backfill did, per stream. */
export interface Backfilled {
  readonly stream: string
  readonly rows: number
  /** Rows whose `_raw` did not decode (left unchanged). */
  readonly skipped: number
}

/** Keys as parameters: a bigint key may come back as a JS bigint, which goes back as text. */
const asParameter = (value: unknown): unknown => (typeof value === "bigint" ? String(value) : value)

/** Re-derives every row of `mapping`'s table, `pageSize` rows per round (keyset paging). */
export const backfill = (
  schema: string,
  mapping: StreamMapping,
  pageSize = 2_000,
): Effect.Effect<Backfilled, DatabaseError, Database> =>
  Effect.gen(function* () {
    const db = yield* Database
    const keys = mapping.table.primaryKey.map(ident)
    const keyList = keys.join(", ")
    const placeholders = keys.map((_, index) => `$${index + 1}`).join(", ")
    const page = (after: ReadonlyArray<unknown> | undefined) =>
      db.query(
        `SELECT ${keyList}, "_raw"::text AS "_salesintel_raw" FROM ${qualified(schema, mapping.table.name)}
WHERE "_raw" IS NOT NULL${after === undefined ? "" : ` AND (${keyList}) > (${placeholders})`}
ORDER BY ${keyList} LIMIT ${pageSize}`,
        after ?? [],
      )
    yield* Merge.prepare(mapping)
    const counts = { rows: 0, skipped: 0 }
    let after: ReadonlyArray<unknown> | undefined
    for (;;) {
      const rows = yield* page(after)
      if (rows.length === 0) break
      const builder = new Batch.Builder(mapping.children.length)
      for (const row of rows) {
        const text = String(row._salesintel_raw)
        const data = JSON.parse(text) as Message.JsonObject
        const mapped = mapping.map({ ...Message.record(mapping.stream, data, 0), dataText: text })
        if (Either.isLeft(mapped)) counts.skipped++
        else builder.add(mapped.right)
      }
      counts.rows += builder.size
      if (builder.size > 0) yield* Merge.mergeBatch(schema, mapping, builder.close(), "rederive")
      const last = rows[rows.length - 1] as Record<string, unknown>
      after = mapping.table.primaryKey.map((key) => asParameter(last[key]))
      if (rows.length < pageSize) break
    }
    return { stream: mapping.stream, ...counts }
  })
