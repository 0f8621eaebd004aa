/**
 * The people and companies a target was asked to forget (`salesintel forget`), as keyed hashes:
 * `_suppressed` holds one hash per identifier and no identifier in the clear, `_suppression_key`
 * the target's random key, made once. A sync passes both to the read, which buys none of them.
 * The hashing itself is the source's (Suppression.ts in @salesintel/source): this module only keeps
 * what it is given.
 */
import * as Effect from "effect/Effect"
import { Database, type DatabaseError } from "../database/Database.ts"
import { qualified } from "../database/Sql.ts"
import type { TableShape } from "../schema/Table.ts"

export const suppressedTable: TableShape = {
  name: "_suppressed",
  doc: "the people and companies forgotten (salesintel forget): a keyed hash (HMAC-SHA256) per identifier, none in the clear; no sync buys them",
  primaryKey: ["hash"],
  columns: [
    {
      name: "hash",
      type: "text",
      notNull: true,
      doc: "HMAC-SHA256 of kind:identifier under _suppression_key",
    },
    { name: "kind", type: "text", notNull: true, doc: "match_id, email, linkedin_url or domain" },
    {
      name: "forgotten_at",
      type: "timestamptz",
      notNull: true,
      default: "now()",
      doc: "when it was forgotten",
    },
  ],
}

export const keyTable: TableShape = {
  name: "_suppression_key",
  doc: "the random key _suppressed's hashes are made with, created once per target (one row)",
  primaryKey: ["id"],
  columns: [
    { name: "id", type: "integer", notNull: true, default: "1", doc: "always 1: one key per target" },
    { name: "key", type: "text", notNull: true, doc: "32 random bytes, base64" },
    { name: "created_at", type: "timestamptz", notNull: true, default: "now()", doc: "when it was made" },
  ],
}

export interface Held {
  readonly key: string
  readonly hashes: ReadonlyArray<string>
}

const tableExists = (schema: string, table: string) =>
  Effect.map(
    Effect.flatMap(Database, (db) =>
      db.query("SELECT to_regclass($1) IS NOT NULL AS present", [qualified(schema, table)]),
    ),
    (rows) => rows[0]?.present === true,
  )

/** The target's suppressions, or undefined when it has none (or predates them). */
export const held = (schema: string): Effect.Effect<Held | undefined, DatabaseError, Database> =>
  Effect.gen(function* () {
    if (!(yield* tableExists(schema, keyTable.name))) return undefined
    const db = yield* Database
    const [row] = yield* db.query(`SELECT key FROM ${qualified(schema, keyTable.name)} WHERE id = 1`)
    if (typeof row?.key !== "string") return undefined
    const rows = yield* db.query(`SELECT hash FROM ${qualified(schema, suppressedTable.name)}`)
    return { key: row.key, hashes: rows.map((r) => String(r.hash)) }
  })

/** The target's key: the one it holds, else `made()` stored as its key (inside the caller's transaction). */
export const keyOf = (schema: string, made: () => string): Effect.Effect<string, DatabaseError, Database> =>
  Effect.gen(function* () {
    const db = yield* Database
    const table = qualified(schema, keyTable.name)
    yield* db.query(`INSERT INTO ${table} (id, key) VALUES (1, $1) ON CONFLICT (id) DO NOTHING`, [made()])
    const [row] = yield* db.query(`SELECT key FROM ${table} WHERE id = 1`)
    return String(row?.key)
  })

/** Adds hashes (each once); how many were new. */
export const add = (
  schema: string,
  entries: ReadonlyArray<{ readonly hash: string; readonly kind: string }>,
): Effect.Effect<number, DatabaseError, Database> =>
  entries.length === 0
    ? Effect.succeed(0)
    : Effect.flatMap(Database, (db) =>
        Effect.map(
          db.query(
            `WITH added AS (INSERT INTO ${qualified(schema, suppressedTable.name)} (hash, kind)
SELECT * FROM unnest($1::text[], $2::text[]) ON CONFLICT (hash) DO NOTHING RETURNING 1)
SELECT count(*)::int AS n FROM added`,
            [entries.map((entry) => entry.hash), entries.map((entry) => entry.kind)],
          ),
          (rows) => Number(rows[0]?.n ?? 0),
        ),
      )
