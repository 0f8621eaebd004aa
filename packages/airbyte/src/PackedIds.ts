/**
 * A list of ids packed for the state: the bought set is the one part of the state that grows with
 * the data (13 bytes per id as a JSON list of `"m-0a1b2c3"` strings), so a large day's ids are
 * written as one string: `ids1:` and the base64 of a raw-deflated body, about 2.5 to 3 bytes per id.
 *
 * The body: the ids sorted and grouped by shape. Ids made of a prefix and a base-36 token of up
 * to 10 characters (`m-` + `0a1b2c3`, the provider's and the sandbox's shape) are stored as the
 * token's value, delta to the one before, as varints: random 32-bit tokens then take about two
 * bytes. Any other id is front-coded (the length shared with the id before, then the rest). Each
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
    const encoded = utf8.encode(value)
    this.varint(encoded.length)
    for (const byte of encoded) this.byte(byte)
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

/** The ids by shape: a prefix and a token width for the numbered ones, the rest as strings. */
const grouped = (ids: Iterable<string>) => {
  const numbered = new Map<string, { prefix: string; width: number; values: Array<number> }>()
  const strings: Array<string> = []
  for (const id of ids) {
    const start = tokenStart(id)
    if (start === -1) {
      strings.push(id)
      continue
    }
    const prefix = id.slice(0, start)
    const width = id.length - start
    const key = `${width}:${prefix}`
    let group = numbered.get(key)
    if (group === undefined) {
      group = { prefix, width, values: [] }
      numbered.set(key, group)
    }
    group.values.push(Number.parseInt(id.slice(start), 36))
  }
  return { numbered: [...numbered.values()], strings }
}

/** `ids` (distinct) packed: `ids1:` and base64. */
export const pack = (ids: Iterable<string>): string => {
  const { numbered, strings } = grouped(ids)
  const out = new Writer()
  out.varint(numbered.length + (strings.length > 0 ? 1 : 0))
  for (const group of numbered) {
    out.byte(tokenKind)
    out.text(group.prefix)
    out.varint(group.width)
    // A typed array sorts numbers as numbers, and fast.
    const values = Float64Array.from(group.values).sort()
    out.varint(values.length)
    let previous = 0
    for (const value of values) {
      out.varint(value - previous)
      previous = value
    }
  }
  if (strings.length > 0) {
    out.byte(stringKind)
    const sorted = strings.sort()
    out.varint(sorted.length)
    let previous = ""
    for (const id of sorted) {
      let shared = 0
      while (shared < previous.length && shared < id.length && previous[shared] === id[shared]) shared++
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
