import { describe, expect, it } from "vitest"
import { DatedSet, epochDay } from "./DatedSet.ts"

describe("DatedSet", () => {
  it("round-trips through its compact JSON, grouped by day", () => {
    const set = new DatedSet()
    set.add("m-1", 20_000)
    set.add("m-2", 20_001)
    set.add("m-3", 20_000)
    set.add("m-1", 19_000) // an older day never replaces a newer one
    expect(set.toJson()).toEqual({ "20000": ["m-1", "m-3"], "20001": ["m-2"] })
    expect(DatedSet.fromJson(set.toJson()).toJson()).toEqual(set.toJson())
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

  it("counts days in UTC", () => {
    expect(epochDay(Date.parse("1970-01-02T00:00:00Z"))).toBe(1)
    expect(epochDay(Date.parse("1970-01-01T23:59:59Z"))).toBe(0)
  })
})
