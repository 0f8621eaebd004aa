/**
 * The report's numbers, read from a synced schema, one subject a folder: the overview (technology
 * adoption by category, by product and by company size band, contacts by department and level,
 * the credits of each run: overview/OverviewData.ts), what changed (changes/ChangesData.ts), what
 * the observations mean (intelligence/IntelligenceData.ts) and the user's market
 * (market/MarketData.ts). Read only: it never creates or changes anything (`requireSynced` checks
 * the tables are there first).
 */
import { Database } from "@salesintel/postgres"
import * as Data from "effect/Data"
import * as Effect from "effect/Effect"
import * as ChangesData from "./changes/ChangesData.ts"
import * as IntelligenceData from "./intelligence/IntelligenceData.ts"
import * as MarketData from "./market/MarketData.ts"
import * as OverviewData from "./overview/OverviewData.ts"

export class NotSynced extends Data.TaggedError("NotSynced")<{ readonly description: string }> {
  override get message(): string {
    return this.description
  }
}

export interface ReportData extends OverviewData.Overview {
  /** What the refreshes found changed (changes/ChangesData.ts). */
  readonly changes: ChangesData.ChangeReport
  /** What the observations mean: install base, displacements, champion moves (intelligence/IntelligenceData.ts). */
  readonly intelligence: IntelligenceData.IntelligenceReport
  /** Ours against the rivals', the accounts to act on, what is used beside ours (market/MarketData.ts). */
  readonly market: MarketData.MarketReport
}

export interface Limits extends OverviewData.Limits {
  /** Products whose install base is charted month by month (the most in use). */
  readonly trendProducts: number
  /** Replacements and champion products listed (the most frequent). */
  readonly intelligenceRows: number
  /** Market opportunities listed (the latest). */
  readonly opportunities: number
  /** Products listed beside ours (the most used together). */
  readonly affinity: number
}

export const defaultLimits: Limits = {
  products: 20,
  bandCategories: 6,
  runs: 100,
  trendProducts: 6,
  intelligenceRows: 15,
  opportunities: 25,
  affinity: 15,
}

/** The tables (and the view) the report requires: a sync creates them all. */
export const requiredTables: ReadonlyArray<string> = OverviewData.requiredTables

/** Fails with NotSynced when `schema` lacks a table the report reads (no sync has run into it). */
export const requireSynced = (schema: string, target: string) =>
  Effect.gen(function* () {
    const db = yield* Database.Database
    const rows = yield* db.query(
      "SELECT table_name::text AS name FROM information_schema.tables WHERE table_schema = $1 AND table_name = ANY($2::text[])",
      [schema, requiredTables],
    )
    const present = new Set(rows.map((row) => String(row.name)))
    const absent = requiredTables.filter((name) => !present.has(name))
    if (absent.length > 0)
      return yield* new NotSynced({
        description: `no synced data in schema "${schema}" of ${target}: ${absent.join(", ")} ${absent.length === 1 ? "is" : "are"} missing (run \`salesintel sync\` into it first, or pass the --schema it used)`,
      })
  })

/** Everything the report shows, after checking the schema was synced into. */
export const read = (schema: string, target: string, limits: Limits = defaultLimits) =>
  Effect.gen(function* () {
    yield* requireSynced(schema, target)
    return {
      ...(yield* OverviewData.read(schema, limits)),
      changes: yield* ChangesData.read(schema, limits.products),
      intelligence: yield* IntelligenceData.read(schema, {
        trendProducts: limits.trendProducts,
        rows: limits.intelligenceRows,
      }),
      market: yield* MarketData.read(schema, {
        opportunities: limits.opportunities,
        affinity: limits.affinity,
      }),
    } satisfies ReportData
  })
