/**
 * A stream's ESTIMATE figures, as its read goes (Read.ts says them in ESTIMATE traces): the records its definition expects (the sum of the latest Estimate
 * output of each key, never below what it has emitted), and bytes from the average size of the
 * first `sampleSize` records (measured once: serializing every record to count bytes would cost
 * CPU).
 */
const utf8 = new TextEncoder()

export class Estimate {
  private readonly byKey = new Map<string, number>()
  private expected = 0
  private estimated = false
  private sampled = 0
  private sampledBytes = 0

  constructor(private readonly sampleSize = 100) {}

  /** `records` expected from the work under `key`, replacing what that key said before. */
  set(key: string, records: number): void {
    this.expected += records - (this.byKey.get(key) ?? 0)
    this.byKey.set(key, records)
    this.estimated = true
  }

  /** Counts one record into the size sample; true when this record completed the sample (and an estimate exists). */
  sample(data: unknown): boolean {
    if (this.sampled >= this.sampleSize) return false
    this.sampled++
    this.sampledBytes += utf8.encode(JSON.stringify(data)).length
    return this.sampled === this.sampleSize && this.estimated
  }

  rows(emitted: number): number {
    return Math.max(this.expected, emitted)
  }

  /** Undefined until some record has been sized. */
  bytes(emitted: number): number | undefined {
    return this.sampled === 0 ? undefined : (this.sampledBytes / this.sampled) * this.rows(emitted)
  }
}
