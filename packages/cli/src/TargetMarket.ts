/**
 * The config's `market` into the target's `market` table, at the start of a sync (before anything
 * is bought). Each name is checked against the taxonomy the target holds, or, when it holds none,
 * against free lookups of the names (4.5): a name neither knows is refused with the entry's path
 * and the nearest name. A config without `market` leaves the table as it is, so a market changed
 * in SQL holds.
 */
import { Client } from "@salesintel/core"
import { type Database, History } from "@salesintel/postgres"
import { Config, Market } from "@salesintel/source"
import * as Data from "effect/Data"
import * as Effect from "effect/Effect"
import * as Either from "effect/Either"

/** Why the market was not written: a name the taxonomy does not know, or the lookup failed. */
export class MarketRefused extends Data.TaggedError("MarketRefused")<{ readonly description: string }> {
  override get message(): string {
    return this.description
  }
}

/** Writes `config.market` into `schema`'s market table; how many entries, or none when absent. */
export const write = (
  schema: string,
  config: Config.SourceConfig,
  keySource: string | undefined,
): Effect.Effect<number | undefined, MarketRefused | Database.DatabaseError, Database.Database> =>
  Effect.gen(function* () {
    const market = config.market
    if (market === undefined) return undefined
    const held = yield* History.Market.taxonomyNames(schema)
    const known =
      held.products.length > 0
        ? held
        : yield* Market.lookUp(market).pipe(
            Effect.provide(Client.layerFetch(Config.connectionOf(config), { keySource })),
            Effect.mapError(
              (error) =>
                new MarketRefused({
                  description: `market: the taxonomy lookups that check its names failed (${error.message}); nothing was bought`,
                }),
            ),
          )
    const entries = Market.entriesOf(market, known)
    if (Either.isLeft(entries))
      return yield* new MarketRefused({
        description: `invalid config: ${entries.left.map((problem) => `${problem.path}: ${problem.message}`).join("; ")}; nothing was bought`,
      })
    yield* History.Market.replace(schema, entries.right)
    return entries.right.length
  })
