import * as Either from "effect/Either"
import * as Schema from "effect/Schema"
import { describe, expect, it } from "vitest"
import { DatedSet, DatedSetJson, epochDay, isDue, packAt } from "./DatedSet.ts"

/** The state's JSON read back as a source reads it. */
const decode = (json: unknown) => DatedSet.fromJson(Schema.decodeUnknownSync(DatedSetJson)(json))

describe("DatedSet", () => {
  it("round-trips through its compact JSON, grouped by day", () => {
    const set = new DatedSet()
    set.add("m-1", 20_000)
    set.add("m-2", 20_001)
    set.add("m-3", 20_000)
    set.add("m-1", 19_000) // an older day never replaces a newer one
    expect(set.toJson()).toEqual({ "20000": ["m-1", "m-3"], "20001": ["m-2"] })
    expect(decode(set.toJson()).toJson()).toEqual(set.toJson())
  })

  it("packs a day of many ids into one string, and reads it back exactly", () => {
    const set = new DatedSet()
    const ids = Array.from(
      { length: 5_000 },
      (_, i) => `m-${((i * 2_654_435_761) >>> 0).toString(36).padStart(7, "0")}`,
    )
    for (const id of ids) set.add(id, 20_000)
    const few = Array.from({ length: packAt - 1 }, (_, i) => `other-${i}`)
    for (const id of few) set.add(id, 20_001)
    const json = set.toJson()
    const packed = json["20000"]
    expect(typeof packed).toBe("string")
    // A shorter day stays a readable list.
    expect(json["20001"]).toEqual(few)
    const bytesPerId = JSON.stringify(packed).length / ids.length
    expect(bytesPerId).toBeLessThan(3.5)
    const back = decode(JSON.parse(JSON.stringify(json)))
    expect(back.size).toBe(ids.length + few.length)
    for (const id of [...ids, ...few]) expect(back.has(id)).toBe(true)
  })

  it("packs ids of any shape: leading zeros, long tokens, no token, non-ASCII", () => {
    const set = new DatedSet()
    const odd = [
      "m-0000000",
      "m-000001",
      "abcdefghijklmnopqrstuvwxyz",
      "UPPER-CASE",
      "é-ünïcødé-1",
      "",
      "9",
      ...Array.from({ length: packAt }, (_, i) => `x${i}`),
    ]
    for (const id of odd) set.add(id, 20_000)
    const back = decode(set.toJson())
    expect(back.size).toBe(odd.length)
    for (const id of odd) expect(back.has(id)).toBe(true)
  })

  it("refuses packed ids that do not unpack, with the day's path", () => {
    const result = Schema.decodeUnknownEither(DatedSetJson)({ "20000": "ids1:not-base64!" })
    expect(Either.isLeft(result)).toBe(true)
    if (Either.isLeft(result)) expect(String(result.left)).toMatch(/\["20000"\][\s\S]*do not unpack/)
  })

  it("needs buying when unknown or older than refresh_after_days", () => {
    const set = DatedSet.fromJson({ "100": ["old"], "129": ["recent"] })
    expect(set.needsBuying("new", 130, 30)).toBe(true)
    expect(set.needsBuying("old", 130, 30)).toBe(true)
    expect(set.needsBuying("recent", 130, 30)).toBe(false)
    expect(set.needsBuying("old", 130, undefined)).toBe(false)
  })

  it("has a fresh key only while some key needs no buying (what lets a search be read directly)", () => {
    const set = DatedSet.fromJson({ "100": ["old"], "129": ["recent"] })
    expect(set.hasFresh(130, 30)).toBe(true)
    expect(set.hasFresh(159, 30)).toBe(false)
    expect(set.hasFresh(130, undefined)).toBe(true)
    expect(new DatedSet().hasFresh(130, undefined)).toBe(false)
    // Agrees with needsBuying: no fresh key means every key needs buying.
    for (const today of [120, 130, 140, 158, 159, 200])
      expect(set.hasFresh(today, 30)).toBe(!["old", "recent"].every((key) => set.needsBuying(key, today, 30)))
  })

  it("counts the keys not due again, as needsBuying sees them", () => {
    const set = DatedSet.fromJson({ "100": ["old"], "129": ["recent", "other"] })
    const keys = ["old", "recent", "other"]
    for (const refresh of [undefined, 1, 30, 31])
      expect(set.countFresh(130, refresh)).toBe(
        keys.filter((key) => !set.needsBuying(key, 130, refresh)).length,
      )
    expect(set.countFresh(130, 30)).toBe(2)
  })

  it("ages a day after today as bought today: held until it has passed and aged, due at once with 0", () => {
    // Day 99,999 (2243) read on day 20,784 (2026): held for any refresh but 0; no overflow at the
    // largest day a state can hold (999,999: its day times two still fits the Uint32Array).
    for (const day of [99_999, 999_999]) {
      const set = DatedSet.fromJson({ [String(day)]: ["ahead"] })
      expect(set.dayOf("ahead")).toBe(day)
      expect(isDue(day, 20_784, 30)).toBe(false)
      expect(set.needsBuying("ahead", 20_784, 30)).toBe(false)
      expect(set.needsBuying("ahead", day + 29, 30)).toBe(false)
      expect(set.needsBuying("ahead", day + 30, 30)).toBe(true)
      expect(set.needsBuying("ahead", 20_784, 0)).toBe(true)
      expect([set.countFresh(20_784, 30), set.countFresh(20_784, 0)]).toEqual([1, 0])
      expect(set.hasFresh(20_784, 0)).toBe(false)
    }
  })

  it("records a key bought by this run on its day, even one the set dated ahead", () => {
    const set = DatedSet.fromJson({ "99999": ["ahead"], "20000": ["old"] })
    set.record("ahead", 20_784)
    set.record("old", 20_784)
    set.add("merged", 20_000)
    set.add("merged", 99_999)
    expect(set.toJson()).toEqual({ "20784": ["old", "ahead"], "99999": ["merged"] })
    expect([set.marked("ahead"), set.marked("merged")]).toEqual([true, false])
  })

  it("counts days in UTC", () => {
    expect(epochDay(Date.parse("1970-01-02T00:00:00Z"))).toBe(1)
    expect(epochDay(Date.parse("1970-01-01T23:59:59Z"))).toBe(0)
  })
})
