/**
 * The leftovers check minds only its own run: what appeared during the run and carries its tag is
 * a leftover; what another program made meanwhile (no tag, or another run's) is not.
 */
import { describe, expect, it } from "vitest"
import { leftovers, newRunTag } from "./RunTag.ts"

describe("a test run's leftovers", () => {
  it("are what appeared with the run's tag, never a foreign schema or database", () => {
    const tag = newRunTag()
    const other = newRunTag()
    expect(tag).toMatch(/^t[0-9a-z]+$/)
    expect(other).not.toBe(tag)
    const before = new Set(['schema "public"', 'database "test"', `schema "old ${tag} x"`])
    const after = new Set([
      ...before,
      `schema "ledger ${tag} ab12cd"`,
      'schema "someone_elses"',
      'database "their_db"',
      `schema "chaos_${other}_1"`,
      `database "made ${tag}"`,
    ])
    expect(leftovers(before, after, tag)).toEqual([`schema "ledger ${tag} ab12cd"`, `database "made ${tag}"`])
    expect(leftovers(before, before, tag)).toEqual([])
  })
})
