/**
 * Progress of a sync for a person watching it: on a terminal, one live line on stderr rewritten in
 * place; otherwise (a log file, CI) a plain line every few seconds. Never stdout: a pipeline may be
 * reading it.
 */

export interface Counts {
  readonly records: number
  readonly recordsByStream: ReadonlyMap<string, number>
  /** Pages of records read. */
  readonly pages: number
  /** STATE messages committed with their data. */
  readonly checkpoints: number
  readonly creditsSpent: number
  readonly creditBudget: number
  readonly elapsedMillis: number
}

const number = (value: number) => Math.round(value).toLocaleString("en-US")

const duration = (millis: number) => {
  const seconds = Math.floor(millis / 1000)
  return `${Math.floor(seconds / 60)}:${String(seconds % 60).padStart(2, "0")}`
}

/** One line: records (per stream), pages, checkpoints, credits of the budget, rate, elapsed time. */
export const render = (counts: Counts): string => {
  const perStream = [...counts.recordsByStream.entries()]
    .map(([stream, n]) => `${stream} ${number(n)}`)
    .join(", ")
  const rate = counts.elapsedMillis > 0 ? (counts.records * 1000) / counts.elapsedMillis : 0
  return [
    `${number(counts.records)} records${perStream.length > 0 ? ` (${perStream})` : ""}`,
    `${number(counts.pages)} pages`,
    `${number(counts.checkpoints)} checkpoints`,
    `${number(counts.creditsSpent)} of ${number(counts.creditBudget)} credits`,
    `${number(rate)} records/s`,
    duration(counts.elapsedMillis),
  ].join(" · ")
}

export interface Output {
  readonly isTTY?: boolean | undefined
  write(text: string): unknown
}

/** Decides when to print, so callers can report every message without flooding the output. */
export class Reporter {
  private lastPrinted = Number.NEGATIVE_INFINITY
  private printedLive = false

  constructor(
    private readonly output: Output,
    /** How often a plain (non-terminal) line is printed. */
    private readonly plainEveryMillis = 5_000,
    /** How often the live terminal line is redrawn. */
    private readonly liveEveryMillis = 100,
  ) {}

  update(counts: Counts, now: number): void {
    const live = this.output.isTTY === true
    if (now - this.lastPrinted < (live ? this.liveEveryMillis : this.plainEveryMillis)) return
    this.lastPrinted = now
    if (live) {
      this.output.write(`\r\x1b[K${render(counts)}`)
      this.printedLive = true
    } else {
      this.output.write(`${render(counts)}\n`)
    }
  }

  /** The final line, always printed. */
  finish(counts: Counts): void {
    this.output.write(`${this.printedLive ? "\r\x1b[K" : ""}${render(counts)}\n`)
  }
}
