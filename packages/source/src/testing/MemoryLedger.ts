/**
 * A ledger in memory, for tests of the bought set in a ledger (bought/BoughtLedger.ts): its rows
 * (key to day, a later day kept), what was moved into it from a state, and how many keys each
 * lookup asked about, so a test can say what a read looked up.
 */
import * as Effect from "effect/Effect"
import type { DatedAhead, Entry, Ledger } from "../bought/BoughtLedger.ts"
import { isDue } from "../bought/DatedSet.ts"

/** What `days` holds after tomorrow, as a ledger says it. */
const aheadOf = (days: ReadonlyArray<number>, today: number): DatedAhead | undefined => {
  const ahead = days.filter((day) => day > today + 1)
  return ahead.length === 0
    ? undefined
    : { keys: ahead.length, days: new Set(ahead).size, first: Math.min(...ahead), last: Math.max(...ahead) }
}

export const memoryLedger = (entries: Iterable<Entry> = [], doneEntries: Iterable<Entry> = []) => {
  const rows = new Map<string, number>(entries)
  const adopted: Array<Entry> = []
  /** The known identities done (`_known_done`), and those moved into it from a state. */
  const done = new Map<string, number>(doneEntries)
  const adoptedDone: Array<Entry> = []
  /** The identities each lookup of those done asked about. */
  const askedDone: Array<number> = []
  /** The keys each lookup asked about. */
  const asked: Array<number> = []
  const ledger: Ledger = {
    lookup: (_, keys) =>
      Effect.sync(() => {
        asked.push(keys.length)
        return keys.flatMap((key): Array<Entry> => {
          const day = rows.get(key)
          return day === undefined ? [] : [[key, day]]
        })
      }),
    holdings: (_, today, refreshAfterDays) =>
      Effect.sync(() => {
        const days = [...rows.values()]
        const ahead = aheadOf(days, today)
        return {
          held: rows.size,
          fresh: days.filter((day) => refreshAfterDays === undefined || !isDue(day, today, refreshAfterDays))
            .length,
          ...(ahead === undefined ? {} : { ahead }),
        }
      }),
    adopt: (_, moved) =>
      Effect.sync(() => {
        adopted.push(...moved)
        for (const [key, day] of moved) rows.set(key, Math.max(day, rows.get(key) ?? day))
      }),
    lookupDone: (_, keys) =>
      Effect.sync(() => {
        askedDone.push(keys.length)
        return keys.flatMap((key): Array<Entry> => {
          const day = done.get(key)
          return day === undefined ? [] : [[key, day]]
        })
      }),
    adoptDone: (_, moved) =>
      Effect.sync(() => {
        adoptedDone.push(...moved)
        for (const [key, day] of moved) done.set(key, Math.max(day, done.get(key) ?? day))
      }),
    aheadDone: (_, today) => Effect.sync(() => aheadOf([...done.values()], today)),
  }
  return { ledger, rows, adopted, asked, done, adoptedDone, askedDone }
}
