/**
 * A set of keys (match ids, emails, domains) with the day each was last bought: what incremental
 * reads diff against so that nothing is bought twice, and what refresh_after_days ages.
 *
 * It is the one part of the state that grows with the data, so it is kept compact both ways: in
 * memory the keys' bytes in a KeyTable (bought/KeyTable.ts) and a day number per key in a typed
 * array, 33 to 50 bytes a key where a Map (and a Set of this run's keys) took 81; in the state JSON
 * grouped by day, each key written once
 * with no per-key timestamp: a short day as a list (`{"20413": ["m-1", "m-2"]}`), a day of `packAt`
 * ids or more packed into one string (PackedIds.ts in @salesintel/airbyte), about a quarter of the list's bytes.
 */
import { PackedIds as Packed } from "@salesintel/airbyte"
import * as Effect from "effect/Effect"
import * as ParseResult from "effect/ParseResult"
import * as Schema from "effect/Schema"
import { KeyTable } from "./KeyTable.ts"

/** Days since 1970-01-01 (UTC). */
export const epochDay = (millis: number): number => Math.floor(millis / 86_400_000)

/** A day number as a JSON key: "20413" (days since 1970-01-01). */
const DayKey = Schema.String.pipe(Schema.pattern(/^(0|[1-9]\d{0,5})$/)).annotations({
  // What a refused key's error says it expected.
  description: 'a day number as the key (days since 1970-01-01, such as "20413")',
})

/**
 * Whether a key bought on `day` is due again on `today`: its age is `refreshAfterDays` or more. A
 * day after today (a worker's clock ahead, a state edited by hand) is as old as one bought today:
 * held until its day has passed and aged, and due at once when every run buys again (0). Days are
 * at most six digits (DayKey), so the difference is exact.
 */
export const isDue = (day: number, today: number, refreshAfterDays: number): boolean =>
  Math.max(0, today - day) >= refreshAfterDays

/** A day's ids packed into one string (PackedIds.ts in @salesintel/airbyte), read back as the list it holds. */
const PackedIds = Schema.transformOrFail(
  Schema.String.pipe(Schema.startsWith(Packed.packedPrefix)).annotations({
    description: `a list of ids, or ids packed as a string starting "${Packed.packedPrefix}"`,
  }),
  Schema.Array(Schema.String),
  {
    strict: true,
    decode: (packed, _, ast) =>
      Effect.try({
        try: () => Packed.unpack(packed),
        catch: (error) =>
          new ParseResult.Type(ast, packed, `packed ids that do not unpack (${(error as Error).message})`),
      }),
    encode: (ids) => ParseResult.succeed(Packed.pack(ids)),
  },
)

/**
 * The JSON form: day number (as a string key) to the keys bought that day, as a list, or packed
 * into one string when the day has many (`packAt` or more). A key that is not a day is refused with
 * its path: skipped, its ids would be bought again.
 */
export const DatedSetJson = Schema.Record({
  key: DayKey,
  value: Schema.Union(Schema.Array(Schema.String), PackedIds),
})
export type DatedSetJson = typeof DatedSetJson.Type
/** The form written to the state: a day's ids as a list, or packed. */
export type DatedSetOutput = Readonly<Record<string, ReadonlyArray<string> | string>>

/** A day with this many ids or more is written packed (a shorter list stays readable). */
export const packAt = 64

export class DatedSet {
  private readonly keys = new KeyTable()
  /** By key number: the day it was bought, times two, plus one when `add` marked it. */
  private values = new Uint32Array(1 << 8)

  static fromJson(json: DatedSetJson | undefined): DatedSet {
    const set = new DatedSet()
    // Every day key passed DatedSetJson, so each is an integer.
    for (const [day, keys] of Object.entries(json ?? {})) for (const key of keys) set.add(key, Number(day))
    return set
  }

  get size(): number {
    return this.keys.size
  }

  /**
   * Records `key` as bought on `day`, keeping the later day if it was already there. `mark` tags it
   * (a bought set marks what its own run bought); a mark stays once set.
   */
  add(key: string, day: number, mark = false): void {
    this.put(key, day, mark, false)
  }

  /**
   * Records `key` as bought by this run on `today`, marked: the day it was bought, even where the
   * set dated it after today (a clock ahead), so a key bought again is no longer held by that day.
   */
  record(key: string, today: number): void {
    this.put(key, today, true, true)
  }

  private put(key: string, day: number, mark: boolean, exactly: boolean): void {
    const before = this.keys.size
    const index = this.keys.add(key)
    if (index === before && index === this.values.length) {
      const grown = new Uint32Array(this.values.length * 2)
      grown.set(this.values)
      this.values = grown
    }
    const previous = index === before ? undefined : (this.values[index] ?? 0)
    const latest = previous === undefined || exactly ? day : Math.max(previous >>> 1, day)
    this.values[index] = latest * 2 + (mark || (previous ?? 0) % 2 === 1 ? 1 : 0)
  }

  has(key: string): boolean {
    return this.keys.indexOf(key) >= 0
  }

  /** Added with `mark`. */
  marked(key: string): boolean {
    const index = this.keys.indexOf(key)
    return index >= 0 && (this.values[index] ?? 0) % 2 === 1
  }

  /** How many keys were added with `mark`. */
  countMarked(): number {
    let marked = 0
    for (let index = 0; index < this.keys.size; index++) marked += (this.values[index] ?? 0) % 2
    return marked
  }

  /** The day `key` was bought, if it was. */
  dayOf(key: string): number | undefined {
    const index = this.keys.indexOf(key)
    return index < 0 ? undefined : (this.values[index] ?? 0) >>> 1
  }

  /** Every key with its day. */
  *entries(): IterableIterator<[string, number]> {
    for (let index = 0; index < this.keys.size; index++)
      yield [this.keys.keyAt(index), (this.values[index] ?? 0) >>> 1]
  }

  /**
   * Whether each key is fresh on `today`: bought less than `refreshAfterDays` before it, or marked
   * (bought by this run: with refresh_after_days 0 everything bought before is due, never what the
   * run itself just bought).
   */
  private *freshness(today: number, refreshAfterDays: number): IterableIterator<boolean> {
    for (let index = 0; index < this.keys.size; index++) {
      const value = this.values[index] ?? 0
      yield value % 2 === 1 || !isDue(value >>> 1, today, refreshAfterDays)
    }
  }

  /** Not bought yet, or bought `refreshAfterDays` or more days before `today` (and not marked). */
  needsBuying(key: string, today: number, refreshAfterDays: number | undefined): boolean {
    const day = this.dayOf(key)
    if (day === undefined) return true
    return refreshAfterDays !== undefined && !this.marked(key) && isDue(day, today, refreshAfterDays)
  }

  /** Some key is fresh (see `freshness`; every key, when `refreshAfterDays` is unset). */
  hasFresh(today: number, refreshAfterDays: number | undefined): boolean {
    if (refreshAfterDays === undefined) return this.size > 0
    for (const fresh of this.freshness(today, refreshAfterDays)) if (fresh) return true
    return false
  }

  /** Keys bought and not yet due again (needsBuying false) on `today`. */
  countFresh(today: number, refreshAfterDays: number | undefined): number {
    if (refreshAfterDays === undefined) return this.size
    let count = 0
    for (const fresh of this.freshness(today, refreshAfterDays)) if (fresh) count++
    return count
  }

  toJson(): DatedSetOutput {
    const byDay = new Map<number, Array<string>>()
    for (let index = 0; index < this.keys.size; index++) {
      const day = (this.values[index] ?? 0) >>> 1
      const key = this.keys.keyAt(index)
      let keys = byDay.get(day)
      if (keys === undefined) {
        keys = []
        byDay.set(day, keys)
      }
      keys.push(key)
    }
    const json: Record<string, ReadonlyArray<string> | string> = {}
    for (const day of [...byDay.keys()].sort((a, b) => a - b)) {
      const keys = byDay.get(day) ?? []
      json[String(day)] = keys.length >= packAt ? Packed.pack(keys) : keys
    }
    return json
  }
}
