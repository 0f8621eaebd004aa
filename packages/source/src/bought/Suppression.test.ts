import { mkdtempSync, rmSync, writeFileSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import * as Either from "effect/Either"
import { describe, expect, it } from "vitest"
import * as Suppression from "./Suppression.ts"

describe("Suppression: keyed hashes of the people and companies forgotten", () => {
  const key = Suppression.newKey()

  it("hashes an identifier however it is written, and keeps it out of the hash", () => {
    expect(Suppression.hash(key, "email", " Jane.Doe@Example.com ")).toBe(
      Suppression.hash(key, "email", "jane.doe@example.com"),
    )
    expect(Suppression.hash(key, "linkedin_url", "https://www.linkedin.com/in/jane/")).toBe(
      Suppression.hash(key, "linkedin_url", "linkedin.com/in/jane"),
    )
    expect(Suppression.hash(key, "domain", "WWW.Example.com")).toBe(
      Suppression.hash(key, "domain", "example.com"),
    )
    const hashed = Suppression.hash(key, "email", "jane.doe@example.com")
    expect(hashed).not.toContain("jane")
    // Another target's key gives another hash: the list is tested only with its own key.
    expect(Suppression.hash(Suppression.newKey(), "email", "jane.doe@example.com")).not.toBe(hashed)
    // The kind is hashed too: a match id equal to a domain is not that domain.
    expect(Suppression.hash(key, "match_id", "example.com")).not.toBe(
      Suppression.hash(key, "domain", "example.com"),
    )
  })

  it("matches what a list holds, under each list's own key", () => {
    const other = Suppression.newKey()
    const matcher = Suppression.matcher([
      { key, hashes: new Set([Suppression.hash(key, "match_id", "m-1")]) },
      { key: other, hashes: new Set([Suppression.hash(other, "domain", "acme.com")]) },
    ])
    expect(matcher.empty).toBe(false)
    expect(matcher.has("match_id", "m-1")).toBe(true)
    expect(matcher.has("match_id", "m-2")).toBe(false)
    expect(matcher.has("domain", "https://acme.com/")).toBe(true)
    expect(matcher.has("email", undefined)).toBe(false)
    expect(Suppression.none.empty).toBe(true)
    expect(Suppression.matcher([{ key, hashes: new Set() }]).empty).toBe(true)
  })

  it("reads an export file, and refuses one that does not decode, naming its path", () => {
    const dir = mkdtempSync(join(tmpdir(), "salesintel-suppression-"))
    try {
      const good = join(dir, "good.json")
      writeFileSync(good, JSON.stringify({ salesintel_suppressions: 1, key, hashes: ["abc"] }))
      const read = Suppression.fromFile(good)
      expect(Either.isRight(read) && read.right.hashes.has("abc")).toBe(true)
      const bad = join(dir, "bad.json")
      writeFileSync(bad, JSON.stringify({ hashes: [] }))
      expect(Suppression.fromFile(bad)).toEqual(
        Either.left(
          expect.stringContaining(
            `suppress_file: ${bad}: expected a file written by salesintel forget --export`,
          ),
        ),
      )
      expect(Suppression.fromFile(join(dir, "missing.json"))).toEqual(
        Either.left(expect.stringContaining(`suppress_file: cannot read ${join(dir, "missing.json")}`)),
      )
    } finally {
      rmSync(dir, { recursive: true, force: true })
    }
  })
})
