/**
 * A list of ids packed for the state: the bought set is the one part of the state that grows with
 * the data (13 bytes per id as a JSON list of `"m-0a1b2c3"` strings), so a large day's ids are
 * written as one string: `ids1:` and the base64 of a raw-deflated body, about 2.5 to 3 bytes per id.
 *
 * The body: the ids sorted and grouped by shape. Ids made of a prefix and a base-36 token of up
 * to 10 characters (`m-` + `0a1b2c3`, the provider's and the sandbox's shape), `minRun` or more of
 * one shape, are stored as the token's value, delta to the one before, as varints: random 32-bit
 * tokens then take about two bytes. Any other id (an email, a domain) is front-coded (the length
 * shared with the id before, then the rest). Each
 * id comes back exactly as it was written (the token's width is kept, so leading zeros too).
 *
 * Here, with the protocol, because both ends read it: the source writes and reads its bought sets
 * so, and the loader reads them back to mend a saved state from its tables (salesintel-pg state).
 */
import { deflateRawSync, inflateRawSync } from "node:zlib"

export const packedPrefix = "ids1:"

/** Tokens of up to 10 base-36 digits fit a safe integer (36^10 < 2^53). */
const maxTokenLength = 10

const isBase36 = (code: number) => (code >= 48 && code <= 57) || (code >= 97 && code <= 122)

/** Where an id's token starts: its last run of base-36 digits, at most 10 of them (-1: none). */
const tokenStart = (id: string): number => {
  let start = id.length
  while (start > 0 && id.length - start < maxTokenLength && isBase36(id.charCodeAt(start - 1))) start--
  return start === id.length ? -1 : start
}

const utf8 = new TextEncoder()
const text = new TextDecoder("utf-8", { fatal: true })

/** Bytes appended as they come, in a buffer that doubles when full. */
class Writer {
  private bytes = new Uint8Array(1024)
  private length = 0
  private scratch = new Uint8Array(256)

  byte(value: number): void {
    if (this.length === this.bytes.length) {
      const grown = new Uint8Array(this.bytes.length * 2)
      grown.set(this.bytes)
      this.bytes = grown
    }
    this.bytes[this.length++] = value
  }

  /** A non-negative safe integer, 7 bits a byte, low bits first. */
  varint(value: number): void {
    let rest = value
    while (rest >= 0x80) {
      this.byte((rest % 0x80) + 0x80)
      rest = Math.floor(rest / 0x80)
    }
    this.byte(rest)
  }

  text(value: string): void {
    // Encoded into one buffer kept between calls (at most three bytes a UTF-16 unit), not a new
    // array per id.
    if (this.scratch.length < value.length * 3) this.scratch = new Uint8Array(value.length * 3)
    const { written } = utf8.encodeInto(value, this.scratch)
    this.varint(written)
    for (let i = 0; i < written; i++) this.byte(this.scratch[i] ?? 0)
  }

  done(): Uint8Array {
    return this.bytes.subarray(0, this.length)
  }
}

class Reader {
  private at = 0
  constructor(private readonly bytes: Uint8Array) {}

  byte(): number {
    const value = this.bytes[this.at++]
    if (value === undefined) throw new Error("the packed ids end too soon")
    return value
  }

  varint(): number {
    let value = 0
    let scale = 1
    for (;;) {
      const byte = this.byte()
      value += (byte % 0x80) * scale
      if (byte < 0x80) return value
      scale *= 0x80
      if (scale > 2 ** 56) throw new Error("a number in the packed ids is too long")
    }
  }

  text(): string {
    const length = this.varint()
    if (this.at + length > this.bytes.length) throw new Error("the packed ids end too soon")
    const value = text.decode(this.bytes.subarray(this.at, this.at + length))
    this.at += length
    return value
  }

  get finished(): boolean {
    return this.at === this.bytes.length
  }
}

const tokenKind = 0
const stringKind = 1

/**
 * Ids of one shape (prefix and token width) are stored as numbers only in a run of at least this
 * many: an email's last run of base-36 digits is its top-level domain (`...@acme.com`), so every
 * email would otherwise be a group of its own (its whole prefix written out, no front-coding), and
 * the grouping alone took 48 MB of garbage for 100,000 emails at every checkpoint.
 */
const minRun = 4

const isLowSurrogate = (code: number) => code >= 0xdc00 && code <= 0xdfff

/** Whether `a` and `b` agree on their first `length` characters. */
const samePrefix = (a: string, b: string, length: number): boolean => {
  for (let i = 0; i < length; i++) if (a.charCodeAt(i) !== b.charCodeAt(i)) return false
  return true
}

/** By length, then as strings: ids of one prefix and token width then sit together, by value. */
const byLengthThenValue = (a: string, b: string) => a.length - b.length || (a < b ? -1 : a > b ? 1 : 0)

/** A run of `candidates[from]` to `candidates[to - 1]`, all of one prefix and token width. */
interface Run {
  readonly prefix: string
  readonly width: number
  readonly from: number
  readonly to: number
}

/**
 * The ids by shape, in one pass over them sorted by length then value: each run of `minRun` or more
 * ids of one prefix and token width (their tokens then ascend, as fixed-width base 36 sorts), and
 * the rest as strings, sorted for front-coding.
 */
const grouped = (ids: Iterable<string>) => {
  const candidates: Array<string> = []
  const strings: Array<string> = []
  for (const id of ids) (tokenStart(id) === -1 ? strings : candidates).push(id)
  candidates.sort(byLengthThenValue)
  const runs: Array<Run> = []
  let from = 0
  while (from < candidates.length) {
    const first = candidates[from] ?? ""
    const start = tokenStart(first)
    let to = from + 1
    for (; to < candidates.length; to++) {
      const id = candidates[to] ?? ""
      if (id.length !== first.length || tokenStart(id) !== start || !samePrefix(id, first, start)) break
    }
    if (to - from >= minRun)
      runs.push({ prefix: first.slice(0, start), width: first.length - start, from, to })
    else for (let i = from; i < to; i++) strings.push(candidates[i] ?? "")
    from = to
  }
  return { candidates, runs, strings: strings.sort() }
}

/** `ids` (distinct) packed: `ids1:` and base64. */
export const pack = (ids: Iterable<string>): string => {
  const { candidates, runs, strings } = grouped(ids)
  const out = new Writer()
  out.varint(runs.length + (strings.length > 0 ? 1 : 0))
  for (const run of runs) {
    out.byte(tokenKind)
    out.text(run.prefix)
    out.varint(run.width)
    out.varint(run.to - run.from)
    let previous = 0
    for (let i = run.from; i < run.to; i++) {
      const value = Number.parseInt((candidates[i] ?? "").slice(run.prefix.length), 36)
      out.varint(value - previous)
      previous = value
    }
  }
  if (strings.length > 0) {
    out.byte(stringKind)
    out.varint(strings.length)
    let previous = ""
    for (const id of strings) {
      let shared = 0
      while (shared < previous.length && shared < id.length && previous[shared] === id[shared]) shared++
      // Never between the two halves of a character outside the BMP: the rest would begin with a
      // lone surrogate, which UTF-8 cannot carry.
      if (shared > 0 && isLowSurrogate(id.charCodeAt(shared))) shared--
      out.varint(shared)
      out.text(id.slice(shared))
      previous = id
    }
  }
  return packedPrefix + deflateRawSync(out.done()).toString("base64")
}

/** The ids of a packed list, in order of shape and value; throws with what is wrong. */
export const unpack = (packed: string): ReadonlyArray<string> => {
  if (!packed.startsWith(packedPrefix)) throw new Error(`expected packed ids starting ${packedPrefix}`)
  const base64 = packed.slice(packedPrefix.length)
  if (!/^[A-Za-z0-9+/]*={0,2}$/.test(base64)) throw new Error("the packed ids are not base64")
  // Bounded: a state cannot make the source inflate more than a billion bytes.
  const body = inflateRawSync(Buffer.from(base64, "base64"), { maxOutputLength: 2 ** 30 })
  const input = new Reader(new Uint8Array(body))
  const ids: Array<string> = []
  const groups = input.varint()
  for (let group = 0; group < groups; group++) {
    const kind = input.byte()
    if (kind === tokenKind) {
      const prefix = input.text()
      const width = input.varint()
      const count = input.varint()
      let value = 0
      for (let i = 0; i < count; i++) {
        value += input.varint()
        ids.push(prefix + value.toString(36).padStart(width, "0"))
      }
    } else if (kind === stringKind) {
      const count = input.varint()
      let previous = ""
      for (let i = 0; i < count; i++) {
        const shared = input.varint()
        previous = previous.slice(0, shared) + input.text()
        ids.push(previous)
      }
    } else throw new Error(`unknown group kind ${kind} in the packed ids`)
  }
  if (!input.finished) throw new Error("the packed ids have bytes past their end")
  return ids
}
