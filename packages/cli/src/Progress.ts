/**
 * Progress of a sync for a person watching it: on a terminal, one live line on stderr redrawn in
 * place (carriage return, clear the line) that always fits the terminal's width, so it never wraps
 * into a second line the next redraw would leave behind; otherwise (a log file, CI) a plain line
 * every few seconds, whole. Never stdout: a pipeline may be reading it.
 *
 * Where the source estimated a stream's records (ESTIMATE traces), the line shows done of
 * estimated and the time left at the rate so far.
 *
 * Records are counted when they commit, and so are the credits shown as committed: those of the
 * records committed (one credit a record bought; the taxonomy is free). The budget counts a credit
 * when the page is bought, before its records are read, loaded and committed (pages read ahead,
 * batches in flight, a group of checkpoints waiting for the loader), so what is spent and not yet
 * committed is shown apart, as in flight, and the credits possibly charged without delivery (a
 * request that timed out) apart again: the committed figure and the records agree at each commit.
 *
 * Nothing is printed while there is nothing to say (no page read, no credit spent, nothing
 * committed): the read's free first steps would otherwise print a line of zeros.
 */

export interface Counts {
  /** Records committed with their state, in all and per stream. */
  readonly records: number
  readonly recordsByStream: ReadonlyMap<string, number>
  /** Each stream's latest row estimate (ESTIMATE traces), for the streams that sent one. */
  readonly estimatedByStream?: ReadonlyMap<string, number> | undefined
  /** Pages of records read. */
  readonly pages: number
  /** STATE messages committed with their data. */
  readonly checkpoints: number
  /** Credits the budget counted as spent (when a page or batch is bought). */
  readonly creditsSpent: number
  /** Of those, the credits of the records committed (one a record bought). */
  readonly creditsCommitted: number
  /** Of those spent, the credits possibly charged without delivery (never records). */
  readonly creditsUncertain?: number | undefined
  readonly creditBudget: number
  readonly elapsedMillis: number
}

const number = (value: number) => Math.round(value).toLocaleString("en-US")

const duration = (millis: number) => {
  const seconds = Math.floor(millis / 1000)
  const minutes = Math.floor(seconds / 60)
  const clock = `${minutes % 60}:${String(seconds % 60).padStart(2, "0")}`
  return minutes >= 60 ? `${Math.floor(minutes / 60)}:${clock.padStart(5, "0")}` : clock
}

/**
 * The records expected in all, when any stream was estimated: each estimated stream at least what
 * it has read (an estimate can fall short), the others at what they have read.
 */
export const expectedRecords = (counts: Counts): number | undefined => {
  const estimates = counts.estimatedByStream
  if (estimates === undefined || estimates.size === 0) return undefined
  let expected = counts.records
  for (const [stream, estimate] of estimates)
    expected += Math.max(0, estimate - (counts.recordsByStream.get(stream) ?? 0))
  return expected
}

/** Time left at the rate so far; undefined until there is both an estimate and a rate. */
export const millisLeft = (counts: Counts): number | undefined => {
  const expected = expectedRecords(counts)
  if (expected === undefined || counts.records === 0 || counts.elapsedMillis <= 0) return undefined
  return ((expected - counts.records) * counts.elapsedMillis) / counts.records
}

interface Part {
  readonly text: string
  /** Lower is kept longer when the line must be shortened. */
  readonly priority: number
  /** What comes between it and the part before it: ` · ` unless said. */
  readonly separator?: string
}

/** Credits committed, those bought and not yet committed (in flight), those possibly charged without delivery, and the budget. */
const creditParts = (counts: Counts): ReadonlyArray<Part> => {
  const uncertain = counts.creditsUncertain ?? 0
  const inFlight = Math.max(0, counts.creditsSpent - counts.creditsCommitted - uncertain)
  return [
    { text: `${number(counts.creditsCommitted)} credits committed`, priority: 2 },
    ...(inFlight > 0 ? [{ text: `${number(inFlight)} in flight`, priority: 2.5, separator: ", " }] : []),
    ...(uncertain > 0
      ? [{ text: `${number(uncertain)} possibly charged without delivery`, priority: 2.6, separator: ", " }]
      : []),
    { text: `(budget ${number(counts.creditBudget)})`, priority: 4.5, separator: " " },
  ]
}

const parts = (counts: Counts): ReadonlyArray<Part> => {
  const expected = expectedRecords(counts)
  const estimates = counts.estimatedByStream
  const perStream = [...counts.recordsByStream.entries()]
    .map(([stream, n]) => {
      const estimate = estimates?.get(stream)
      return `${stream} ${number(n)}${estimate === undefined ? "" : `/${number(Math.max(estimate, n))}`}`
    })
    .join(", ")
  const rate = counts.elapsedMillis > 0 ? (counts.records * 1000) / counts.elapsedMillis : 0
  const left = millisLeft(counts)
  return [
    {
      text: `${number(counts.records)}${expected === undefined ? "" : ` of ~${number(expected)}`} records`,
      priority: 0,
    },
    ...(perStream.length > 0 ? [{ text: `(${perStream})`, priority: 5, separator: " " }] : []),
    { text: `${number(counts.pages)} pages`, priority: 6 },
    { text: `${number(counts.checkpoints)} checkpoints`, priority: 7 },
    ...creditParts(counts),
    { text: `${number(rate)} records/s`, priority: 4 },
    { text: duration(counts.elapsedMillis), priority: 3 },
    ...(left === undefined ? [] : [{ text: `~${duration(left)} left`, priority: 1 }]),
  ]
}

const join = (kept: ReadonlyArray<Part>) =>
  kept.reduce(
    (line, part, index) => (index === 0 ? part.text : `${line}${part.separator ?? " · "}${part.text}`),
    "",
  )

/** Whether there is anything to say yet: a page read, a credit spent or anything committed. */
export const hasNews = (counts: Counts): boolean =>
  counts.records > 0 || counts.pages > 0 || counts.checkpoints > 0 || counts.creditsSpent > 0

/**
 * One line: records (of the estimate, per stream), pages, checkpoints, credits committed and in
 * flight (of the budget), rate, elapsed time and time left. Given `width`, the least useful parts are left out until the
 * line fits, and a line that still does not is cut.
 */
export const render = (counts: Counts, width?: number): string => {
  const all = parts(counts)
  if (width === undefined) return join(all)
  let kept = all
  while (join(kept).length > width && kept.length > 1) {
    const dropped = kept.reduce((worst, part) => (part.priority > worst.priority ? part : worst))
    kept = kept.filter((part) => part !== dropped)
  }
  const line = join(kept)
  return line.length <= width ? line : `${line.slice(0, Math.max(0, width - 1))}…`
}

export interface Output {
  readonly isTTY?: boolean | undefined
  /** The terminal's width (process.stderr.columns); 80 is assumed on a terminal that does not say. */
  readonly columns?: number | undefined
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

  /** The live line's room: one column short of the width, so the cursor never wraps. */
  private liveWidth(): number {
    const columns = this.output.columns
    return Math.max(10, (columns !== undefined && columns > 0 ? columns : 80) - 1)
  }

  update(counts: Counts, now: number): void {
    const live = this.output.isTTY === true
    if (!hasNews(counts)) return
    if (now - this.lastPrinted < (live ? this.liveEveryMillis : this.plainEveryMillis)) return
    this.lastPrinted = now
    if (live) {
      this.output.write(`\r\x1b[K${render(counts, this.liveWidth())}`)
      this.printedLive = true
    } else {
      this.output.write(`${render(counts)}\n`)
    }
  }

  /** The final line, always printed: what was done (estimates no longer matter). */
  finish(counts: Counts): void {
    const live = this.output.isTTY === true
    const done = { ...counts, estimatedByStream: undefined }
    this.output.write(
      `${this.printedLive ? "\r\x1b[K" : ""}${render(done, live ? this.liveWidth() : undefined)}\n`,
    )
  }
}
