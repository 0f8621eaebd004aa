/**
 * One stream's batch while it fills: each record's COPY lines written at once as UTF-8 bytes
 * into growing buffers (outside the JavaScript heap), with the record's key. When the batch
 * closes, the newest record per key wins (by when it was fetched; of two fetched at the same
 * time, or neither dated, the later to arrive): superseded records are cut out of the bytes, so
 * an older record behind a newer one in the input never replaces it. A batch
 * held as bytes costs about its COPY size and nothing per record, and leaves the garbage
 * collector nothing to move or trace; held as strings, thousands of records survived into the
 * old generation per batch and the heap grew to hundreds of megabytes before it was swept
 * (measured, see the README's Benchmark section).
 */
import type { Mapped } from "../schema/Mapping.ts"

/** An append-only byte buffer that doubles when full. Offsets stay valid as it grows. */
class Bytes {
  private buffer: Buffer<ArrayBuffer>
  length = 0

  constructor(initial: number) {
    this.buffer = Buffer.allocUnsafe(initial)
  }

  private reserve(room: number): void {
    if (this.length + room <= this.buffer.length) return
    const grown = Buffer.allocUnsafe(Math.max(this.buffer.length * 2, this.length + room))
    this.buffer.copy(grown, 0, 0, this.length)
    this.buffer = grown
  }

  /** Appends `text` and a newline. */
  line(text: string): void {
    // UTF-8 takes at most 3 bytes per UTF-16 code unit.
    this.reserve(text.length * 3 + 1)
    this.length += this.buffer.write(text, this.length, "utf8")
    this.buffer[this.length++] = 10
  }

  /** Appends `bytes` as they are. */
  append(bytes: Uint8Array): void {
    this.reserve(bytes.length)
    this.buffer.set(bytes, this.length)
    this.length += bytes.length
  }

  /** The bytes from `start` to `end`. A view: valid until the next write. */
  slice(start: number, end: number): Buffer<ArrayBuffer> {
    return this.buffer.subarray(start, end)
  }
}

/** A closed batch: COPY text-format data, one newline-terminated line per row. */
export interface Closed {
  /** Records received, superseded ones included. */
  readonly received: number
  /** The parent rows: the newest record per key, in the order of their arrival. */
  readonly rows: Uint8Array<ArrayBuffer>
  /** How many parent rows `rows` holds. */
  readonly rowCount: number
  /** Every record received, in arrival order (for append's history table). */
  readonly all: Uint8Array<ArrayBuffer>
  /** Per child table, the child rows of the records in `rows`. */
  readonly children: ReadonlyArray<Uint8Array<ArrayBuffer>>
}

/** A batch of one stream with `childTables` child tables. */
export class Builder {
  private readonly rows: Bytes
  private readonly children: ReadonlyArray<Bytes>
  // Per record received: where its line starts (its end is the next start) and where each of
  // its child tables' lines start.
  private readonly starts: Array<number> = []
  private readonly childStarts: Array<Array<number>>
  // The newest record per key (its index in `starts`), and per record when it was fetched
  // (Infinity when undated: it counts as fetched when loaded).
  private readonly latest = new Map<string, number>()
  private readonly fetchedAt: Array<number> = []

  constructor(childTables: number, initialBytes = 1 << 20) {
    this.rows = new Bytes(initialBytes)
    this.children = Array.from({ length: childTables }, () => new Bytes(initialBytes >> 2))
    this.childStarts = Array.from({ length: childTables }, () => [])
  }

  /** Records received so far. */
  get size(): number {
    return this.starts.length
  }

  /** Makes record `index` its key's, unless the key's record so far was fetched later. */
  private keep(key: string, index: number): void {
    const held = this.latest.get(key)
    if (held === undefined || (this.fetchedAt[held] as number) <= (this.fetchedAt[index] as number))
      this.latest.set(key, index)
  }

  add(record: Mapped): void {
    this.fetchedAt.push(record.fetchedAt ?? Number.POSITIVE_INFINITY)
    this.keep(record.key, this.starts.length)
    this.starts.push(this.rows.length)
    this.rows.line(record.line)
    for (let table = 0; table < this.children.length; table++) {
      const bytes = this.children[table] as Bytes
      ;(this.childStarts[table] as Array<number>).push(bytes.length)
      for (const line of record.children[table] ?? []) bytes.line(line)
    }
  }

  /**
   * Appends every record `later` received, as if added here after this builder's own (so a key
   * both hold keeps `later`'s record). `later` is left as it was (reset it to reuse it).
   */
  absorb(later: Builder): void {
    const offset = this.starts.length
    const rowBase = this.rows.length
    this.rows.append(later.rows.slice(0, later.rows.length))
    for (const start of later.starts) this.starts.push(rowBase + start)
    for (const at of later.fetchedAt) this.fetchedAt.push(at)
    for (let table = 0; table < this.children.length; table++) {
      const bytes = this.children[table] as Bytes
      const from = later.children[table] as Bytes
      const base = bytes.length
      bytes.append(from.slice(0, from.length))
      const starts = this.childStarts[table] as Array<number>
      for (const start of later.childStarts[table] as Array<number>) starts.push(base + start)
    }
    for (const [key, index] of later.latest) this.keep(key, offset + index)
  }

  /** Empties the builder for reuse, keeping its buffers (a fresh one allocates 1.5 MB). */
  reset(): void {
    this.rows.length = 0
    for (const bytes of this.children) bytes.length = 0
    this.starts.length = 0
    this.fetchedAt.length = 0
    for (const starts of this.childStarts) starts.length = 0
    this.latest.clear()
  }

  /** The batch's data. The builder must not be used afterwards. */
  close(): Closed {
    const received = this.starts.length
    const all = this.rows.slice(0, this.rows.length)
    if (this.latest.size === received)
      return {
        received,
        rows: all,
        rowCount: received,
        all,
        children: this.children.map((bytes) => bytes.slice(0, bytes.length)),
      }
    // Some key came more than once: keep each key's newest record, in the order of those.
    const kept = [...this.latest.values()].sort((a, b) => a - b)
    const pick = (bytes: Bytes, starts: ReadonlyArray<number>): Uint8Array<ArrayBuffer> =>
      Buffer.concat(
        kept.map((index) => bytes.slice(starts[index] as number, starts[index + 1] ?? bytes.length)),
      )
    return {
      received,
      rows: pick(this.rows, this.starts),
      rowCount: kept.length,
      all,
      children: this.children.map((bytes, table) => pick(bytes, this.childStarts[table] as Array<number>)),
    }
  }
}
