/**
 * A set of string keys numbered in the order they were added, held in typed arrays instead of a
 * Map: the keys' UTF-8 bytes one after another in one byte array, and an open-addressing hash
 * table of entry numbers. A bought set holds every contact a customer ever bought (hundreds of
 * thousands, a million), so its size per key is what sets the sync's memory: with the day of each
 * key beside it (DatedSet), 33 bytes an id at 259,424 sandbox ids and 50 at 1,000,000 (room to grow
 * included), where the Map and Set of strings it replaced took 81 (heap and array buffers after a
 * full collection, `node --expose-gc`). Callers keep what they know of each key in arrays indexed
 * by its number.
 *
 * Keys are compared as UTF-8, so a string with a lone surrogate (no match id, email or domain has
 * one) reads as the same key with U+FFFD in its place. Web-standard only (TextEncoder/TextDecoder,
 * typed arrays).
 */

const encoder = new TextEncoder()
const decoder = new TextDecoder()
/** No entry in this slot. */
const empty = -1

/** 32-bit FNV-1a over `length` bytes of `bytes` from `start`. */
const hash = (bytes: Uint8Array, start: number, length: number): number => {
  let h = 0x811c9dc5
  for (let i = start; i < start + length; i++) h = Math.imul(h ^ (bytes[i] ?? 0), 0x01000193)
  return h >>> 0
}

export class KeyTable {
  /** The keys' bytes, entry after entry. */
  private bytes = new Uint8Array(1 << 12)
  private bytesUsed = 0
  /** Where each entry's bytes end (an entry starts where the one before ends). */
  private ends = new Uint32Array(1 << 8)
  /** Entry numbers by hash, `empty` where none; at most half full. */
  private slots = new Int32Array(1 << 9).fill(empty)
  /** The key being looked up, as UTF-8. */
  private scratch = new Uint8Array(256)
  private count = 0

  get size(): number {
    return this.count
  }

  /** The bytes its arrays take (what it holds, and room to grow into). */
  get byteLength(): number {
    return this.bytes.byteLength + this.ends.byteLength + this.slots.byteLength + this.scratch.byteLength
  }

  /** The key's number, or -1 when it is not in the table. */
  indexOf(key: string): number {
    const length = this.encode(key)
    return this.slotEntry(this.findSlot(hash(this.scratch, 0, length), length))
  }

  /** The key's number, adding it when new (the next number: `size` before the call). */
  add(key: string): number {
    const length = this.encode(key)
    const slot = this.findSlot(hash(this.scratch, 0, length), length)
    const found = this.slotEntry(slot)
    if (found !== empty) return found
    const index = this.count
    this.append(length)
    this.slots[slot] = index
    this.count++
    if (this.count * 2 > this.slots.length) this.rehash(this.slots.length * 2)
    return index
  }

  /** The key numbered `index`. */
  keyAt(index: number): string {
    return decoder.decode(this.bytes.subarray(this.start(index), this.ends[index]))
  }

  private start(index: number): number {
    return index === 0 ? 0 : (this.ends[index - 1] ?? 0)
  }

  private slotEntry(slot: number): number {
    return this.slots[slot] ?? empty
  }

  /** `key` as UTF-8 into the scratch bytes; its length. */
  private encode(key: string): number {
    // UTF-8 takes at most 3 bytes per UTF-16 unit.
    if (key.length * 3 > this.scratch.length) this.scratch = new Uint8Array(key.length * 3)
    return encoder.encodeInto(key, this.scratch).written
  }

  /** The slot holding the scratch key, or the empty slot where it would go. */
  private findSlot(keyHash: number, length: number): number {
    const mask = this.slots.length - 1
    for (let slot = keyHash & mask; ; slot = (slot + 1) & mask) {
      const entry = this.slotEntry(slot)
      if (entry === empty || this.equalsScratch(entry, length)) return slot
    }
  }

  private equalsScratch(entry: number, length: number): boolean {
    const start = this.start(entry)
    if ((this.ends[entry] ?? 0) - start !== length) return false
    for (let i = 0; i < length; i++) if (this.bytes[start + i] !== this.scratch[i]) return false
    return true
  }

  /** The scratch key as the next entry. */
  private append(length: number): void {
    if (this.bytesUsed + length > this.bytes.length) {
      const grown = new Uint8Array(Math.max(this.bytes.length * 2, this.bytesUsed + length))
      grown.set(this.bytes.subarray(0, this.bytesUsed))
      this.bytes = grown
    }
    this.bytes.set(this.scratch.subarray(0, length), this.bytesUsed)
    this.bytesUsed += length
    if (this.count === this.ends.length) {
      const grown = new Uint32Array(this.ends.length * 2)
      grown.set(this.ends)
      this.ends = grown
    }
    this.ends[this.count] = this.bytesUsed
  }

  private rehash(capacity: number): void {
    const slots = new Int32Array(capacity).fill(empty)
    const mask = capacity - 1
    for (let entry = 0; entry < this.count; entry++) {
      const start = this.start(entry)
      let slot = hash(this.bytes, start, (this.ends[entry] ?? 0) - start) & mask
      while (slots[slot] !== empty) slot = (slot + 1) & mask
      slots[slot] = entry
    }
    this.slots = slots
  }
}
