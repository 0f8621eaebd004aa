import fc from "fast-check"
import { describe, expect, it } from "vitest"
import type { Mapped } from "../schema/Mapping.ts"
import { Builder } from "./Batch.ts"

const text = (bytes: Uint8Array): string => Buffer.from(bytes).toString("utf8")

const mapped = (key: string, version: number, phones: number, fetchedAt?: number): Mapped => ({
  key,
  line: `${key}\tv${version}\tcafé ✓ 𝄞`,
  children: [Array.from({ length: phones }, (_, position) => `${key}\t${position}\tv${version}`)],
  ...(fetchedAt === undefined ? {} : { fetchedAt }),
})

/** Records with keys, child counts and fetch times (undefined: undated), for the properties below. */
const datedRecords = fc.array(
  fc.tuple(
    fc.constantFrom("k1", "k2", "k3", "ключ"),
    fc.nat(3),
    fc.option(fc.integer({ min: 1, max: 4 }), { nil: undefined }),
    fc.boolean(),
  ),
  { maxLength: 60 },
)

describe("Batch.Builder", () => {
  it("keeps every record in order when keys are unique, and their child rows", () => {
    const builder = new Builder(1, 16)
    builder.add(mapped("a", 1, 2))
    builder.add(mapped("b", 1, 0))
    builder.add(mapped("c", 1, 1))
    expect(builder.size).toBe(3)
    const closed = builder.close()
    expect(closed).toMatchObject({ received: 3, rowCount: 3 })
    expect(text(closed.rows)).toBe("a\tv1\tcafé ✓ 𝄞\nb\tv1\tcafé ✓ 𝄞\nc\tv1\tcafé ✓ 𝄞\n")
    expect(text(closed.all)).toBe(text(closed.rows))
    expect(closed.children.map(text)).toEqual(["a\t0\tv1\na\t1\tv1\nc\t0\tv1\n"])
  })

  it("keeps the latest record per key, in the order of their latest arrival, with that record's children only", () => {
    const builder = new Builder(1, 16)
    builder.add(mapped("a", 1, 2))
    builder.add(mapped("b", 1, 1))
    builder.add(mapped("a", 2, 1))
    const closed = builder.close()
    expect(closed).toMatchObject({ received: 3, rowCount: 2 })
    expect(text(closed.rows)).toBe("b\tv1\tcafé ✓ 𝄞\na\tv2\tcafé ✓ 𝄞\n")
    expect(closed.children.map(text)).toEqual(["b\t0\tv1\na\t0\tv2\n"])
    // Append's history gets every record received, superseded ones too.
    expect(
      text(closed.all)
        .split("\n")
        .filter(Boolean)
        .map((line) => line.split("\t")[1]),
    ).toEqual(["v1", "v1", "v2"])
  })

  it("keeps the newest record per key by fetch time, not the last to arrive: an older one behind it is cut out", () => {
    const builder = new Builder(1, 16)
    builder.add(mapped("a", 1, 1, 2_000))
    builder.add(mapped("a", 2, 2, 1_000))
    builder.add(mapped("b", 1, 1, 1_000))
    builder.add(mapped("b", 2, 1, 1_000))
    const closed = builder.close()
    expect(text(closed.rows)).toBe("a\tv1\tcafé ✓ 𝄞\nb\tv2\tcafé ✓ 𝄞\n")
    expect(closed.children.map(text)).toEqual(["a\t0\tv1\nb\t0\tv2\n"])
    // An undated record counts as fetched when loaded: newer than any dated one.
    const undated = new Builder(1, 16)
    undated.add(mapped("a", 1, 0))
    undated.add(mapped("a", 2, 0, 5_000))
    expect(text(undated.close().rows)).toBe("a\tv1\tcafé ✓ 𝄞\n")
  })

  it("keeps, for any records, split into covered parts anywhere, each key's newest (the later of equals), in arrival order", () => {
    fc.assert(
      fc.property(datedRecords, (records) => {
        const first = new Builder(1, 8)
        const later = new Builder(1, 8)
        const kept = new Map<string, { index: number; at: number }>()
        records.forEach(([key, phones, at, cut], version) => {
          later.add(mapped(key, version, phones, at))
          const time = at ?? Number.POSITIVE_INFINITY
          const held = kept.get(key)
          if (held === undefined || held.at <= time) kept.set(key, { index: version, at: time })
          if (cut) {
            first.absorb(later)
            later.reset()
          }
        })
        first.absorb(later)
        const closed = first.close()
        const expected = [...kept.entries()]
          .sort(([, a], [, b]) => a.index - b.index)
          .map(([key, { index }]) => `${key}\tv${index}\tcafé ✓ 𝄞\n`)
          .join("")
        expect(closed.received).toBe(records.length)
        expect(text(closed.rows)).toBe(expected)
      }),
    )
  })

  it("agrees with a plain model for any sequence of keys and child counts (growing past its first buffer)", () => {
    fc.assert(
      fc.property(
        fc.array(fc.tuple(fc.constantFrom("k1", "k2", "k3", "ключ", "k\u{1F600}"), fc.nat(3)), {
          maxLength: 60,
        }),
        (records) => {
          const builder = new Builder(1, 8)
          const model = new Map<string, Mapped>()
          const all: Array<string> = []
          records.forEach(([key, phones], version) => {
            const record = mapped(key, version, phones)
            builder.add(record)
            model.delete(key)
            model.set(key, record)
            all.push(`${record.line}\n`)
          })
          const closed = builder.close()
          const latest = [...model.values()]
          expect(closed.received).toBe(records.length)
          expect(closed.rowCount).toBe(latest.length)
          expect(text(closed.rows)).toBe(latest.map((record) => `${record.line}\n`).join(""))
          expect(text(closed.all)).toBe(all.join(""))
          expect(text(closed.children[0] ?? new Uint8Array())).toBe(
            latest.flatMap((record) => (record.children[0] ?? []).map((line) => `${line}\n`)).join(""),
          )
        },
      ),
    )
  })

  it("absorbing a builder, reset and refilled in turn, is one builder that received all the records (any split, any keys)", () => {
    fc.assert(
      fc.property(
        fc.array(fc.tuple(fc.constantFrom("k1", "k2", "k3", "ключ", "k\u{1F600}"), fc.nat(3), fc.boolean()), {
          maxLength: 60,
        }),
        (records) => {
          const whole = new Builder(1, 8)
          const first = new Builder(1, 8)
          const later = new Builder(1, 8)
          records.forEach(([key, phones, cut], version) => {
            const record = mapped(key, version, phones)
            whole.add(record)
            later.add(record)
            // A STATE here: what came since the last one joins the records it covers.
            if (cut) {
              first.absorb(later)
              later.reset()
            }
          })
          first.absorb(later)
          const [expected, actual] = [whole.close(), first.close()]
          expect(actual.received).toBe(expected.received)
          expect(actual.rowCount).toBe(expected.rowCount)
          expect(text(actual.rows)).toBe(text(expected.rows))
          expect(text(actual.all)).toBe(text(expected.all))
          expect(actual.children.map(text)).toEqual(expected.children.map(text))
        },
      ),
    )
  })
})
