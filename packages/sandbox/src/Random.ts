// Seeded randomness. Records are derived from (seed, index, salt) by hashing rather than
// from a sequential generator, so any record can be rebuilt alone, in any order, and a
// contact keeps its identity when the dataset grows.

/** A 32-bit avalanche mix (lowbias32): every input bit flips about half the output bits. */
export const mix32 = (value: number): number => {
  let x = value >>> 0
  x ^= x >>> 16
  x = Math.imul(x, 0x7feb352d)
  x ^= x >>> 15
  x = Math.imul(x, 0x846ca68b)
  x ^= x >>> 16
  return x >>> 0
}

/** A uint32 hash of a seed, an index and a salt naming the field being drawn. */
export const hash = (seed: number, index: number, salt: number): number =>
  mix32(mix32(seed ^ Math.imul(salt + 1, 0x9e3779b9)) ^ mix32(index + Math.imul(salt, 0x85ebca6b)))

/** A uniform number in [0, 1) for (seed, index, salt). */
export const unit = (seed: number, index: number, salt: number): number =>
  hash(seed, index, salt) / 4294967296

/** An integer in [0, n) for (seed, index, salt). */
export const below = (seed: number, index: number, salt: number, n: number): number =>
  Math.floor(unit(seed, index, salt) * n)

/** A string's uint32 hash (FNV-1a, then mixed), e.g. to seed a stream per API key. */
export const hashString = (text: string): number => {
  let h = 0x811c9dc5
  for (let i = 0; i < text.length; i++) {
    h ^= text.charCodeAt(i)
    h = Math.imul(h, 0x01000193)
  }
  return mix32(h)
}

/** A sequential generator (mulberry32) for streams of decisions, such as fault injection. */
export class Prng {
  private state: number
  constructor(seed: number) {
    this.state = seed >>> 0
  }
  next(): number {
    this.state = (this.state + 0x6d2b79f5) >>> 0
    let t = this.state
    t = Math.imul(t ^ (t >>> 15), t | 1)
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61)
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296
  }
}

/** The inverse of an odd number modulo 2^32 (Newton's iteration doubles the correct bits each step). */
const inverseOdd = (odd: number): number => {
  let inv = odd
  for (let i = 0; i < 5; i++) inv = Math.imul(inv, 2 - Math.imul(odd, inv))
  return inv >>> 0
}

/**
 * A reversible scrambling of an index into an opaque token (base 36), so that ids such as
 * match_id look random but decode back to their index in O(1) without a lookup table.
 */
export class IdCodec {
  private readonly multiplier: number
  private readonly inverse: number
  private readonly offset: number
  constructor(seed: number, salt: number) {
    this.multiplier = (hash(seed, 0, salt) | 1) >>> 0
    this.inverse = inverseOdd(this.multiplier)
    this.offset = hash(seed, 1, salt)
  }
  encode(index: number): string {
    return ((Math.imul(index, this.multiplier) + this.offset) >>> 0).toString(36).padStart(7, "0")
  }
  /** The index a token encodes, or undefined when it is no token of this codec. */
  decode(token: string): number | undefined {
    if (!/^[0-9a-z]{7}$/.test(token)) return undefined
    const value = Number.parseInt(token, 36)
    if (value > 0xffffffff) return undefined
    return Math.imul((value - this.offset) >>> 0, this.inverse) >>> 0
  }
}

/** A reversible map of an index onto seven decimal digits (for phone numbers). */
export class DigitCodec {
  private static readonly modulus = 10_000_000
  private readonly multiplier: number
  private readonly inverse: number
  private readonly offset: number
  constructor(seed: number, salt: number) {
    // A multiplier coprime with 10 is invertible modulo 10^7.
    let m = 1_000_003 + (hash(seed, 0, salt) % 5_000_000)
    while (m % 2 === 0 || m % 5 === 0) m++
    this.multiplier = m
    this.inverse = modInverse(m, DigitCodec.modulus)
    this.offset = hash(seed, 1, salt) % DigitCodec.modulus
  }
  encode(index: number): string {
    return String((index * this.multiplier + this.offset) % DigitCodec.modulus).padStart(7, "0")
  }
  decode(digits: string): number {
    const value = Number(digits)
    const shifted = (value - this.offset + DigitCodec.modulus) % DigitCodec.modulus
    return Number((BigInt(shifted) * BigInt(this.inverse)) % BigInt(DigitCodec.modulus))
  }
}

const modInverse = (a: number, m: number): number => {
  let [oldR, r] = [a, m]
  let [oldS, s] = [1, 0]
  while (r !== 0) {
    const q = Math.floor(oldR / r)
    ;[oldR, r] = [r, oldR - q * r]
    ;[oldS, s] = [s, oldS - q * s]
  }
  return ((oldS % m) + m) % m
}
