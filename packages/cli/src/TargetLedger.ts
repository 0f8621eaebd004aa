/**
 * The source's bought ledger (BoughtLedger in @salesintel/source) on the sync's own database: the
 * `_bought` table the loader writes with the records it commits (Ledger in @salesintel/postgres),
 * and `_known_done`, the known contacts looked up, written from the `_known_done` stream's records.
 * Given to the source by `sync` only: the source on its own keeps its bought set in its state.
 */
import { Database, Ledger } from "@salesintel/postgres"
import { BoughtLedger, type HeldKeys } from "@salesintel/source"
import * as Effect from "effect/Effect"

export const onDatabase = (schema: string, db: Database.DatabaseService): BoughtLedger.Ledger => {
  const failed = (error: Database.DatabaseError) =>
    new BoughtLedger.LedgerError({ description: error.message })
  return {
    lookup: (stream, keys) =>
      Ledger.lookup(schema, stream, keys).pipe(
        Effect.provideService(Database.Database, db),
        Effect.mapError(failed),
      ),
    holdings: (stream, today, refreshAfterDays) =>
      Ledger.holdings(schema, stream, today, refreshAfterDays).pipe(
        Effect.provideService(Database.Database, db),
        Effect.mapError(failed),
      ),
    adopt: (stream, entries) =>
      Ledger.adopt(schema, stream, entries).pipe(
        Effect.provideService(Database.Database, db),
        Effect.mapError(failed),
      ),
    lookupDone: (stream, keys) =>
      Ledger.KnownDone.lookup(schema, stream, keys).pipe(
        Effect.provideService(Database.Database, db),
        Effect.mapError(failed),
      ),
    adoptDone: (stream, entries) =>
      Ledger.KnownDone.adopt(schema, stream, entries).pipe(
        Effect.provideService(Database.Database, db),
        Effect.mapError(failed),
      ),
    aheadDone: (stream, today) =>
      Ledger.KnownDone.ahead(schema, stream, today).pipe(
        Effect.provideService(Database.Database, db),
        Effect.mapError(failed),
      ),
  }
}

/** The keys the target's records give a substream (HeldKeys in @salesintel/source), read as it begins. */
export const heldOnDatabase = (schema: string, db: Database.DatabaseService): HeldKeys.Held => ({
  keys: (key) =>
    Ledger.DerivedKeys.keys(schema, key).pipe(
      Effect.provideService(Database.Database, db),
      Effect.mapError((error) => new BoughtLedger.LedgerError({ description: error.message })),
    ),
})
