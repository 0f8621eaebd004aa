/**
 * The bought set: what a stream holds (contacts by match id, emails looked up, company domains and
 * names), each with the day it was bought. It is the incremental cursor of this product: every
 * path that buys diffs against it (`due`) and records into it (`record`), so a key bought by one
 * path (a full refresh, a direct read, a listing, an email) is not bought again by another.
 *
 * In the state it is the one part that grows with the data, so its checkpoints are amortised
 * (`cadence`): after every page while it is small, then every 1/50 of what it holds. Kept in the
 * destination's ledger instead (`fromLedger`, bought/BoughtLedger.ts), the state carries only a
 * marker, a checkpoint is due after every page whatever is held, and memory holds only what this
 * run bought and the keys being sorted: each is looked up (`resolve`, a listed page at a time)
 * before it is asked about, and what the lookup said is dropped once the caller has sorted it
 * (`settle`), so a sync that meets a million held keys does not keep them.
 */
import { Streams } from "@salesintel/airbyte"
import * as Chunk from "effect/Chunk"
import * as Effect from "effect/Effect"
import * as Option from "effect/Option"
import type * as Scope from "effect/Scope"
import * as Stream from "effect/Stream"
import * as Checkpoints from "../read/Checkpoints.ts"
import { StateError } from "../StateError.ts"
import { BoughtLedger, type DatedAhead, type Entry, type Ledger, type LedgerError } from "./BoughtLedger.ts"
import { DatedSet, type DatedSetJson, type DatedSetOutput, isDue } from "./DatedSet.ts"

/** Entries a state held, moved into the ledger this many at a time. */
const adoptSlice = 20_000

/** A set kept in the ledger: where, and what it held when the run began. */
interface InLedger {
  readonly ledger: Ledger
  readonly stream: string
  readonly held: number
  readonly fresh: number
  readonly ahead: DatedAhead | undefined
}

/** Keys looked up in the ledger at a time (one statement each). */
const lookupSlice = 5_000

/** A key asked about before `resolve` looked it up: a bug in the caller, never read as "not bought". */
export class NotLookedUp extends Error {
  constructor(key: string) {
    super(`the bought set was asked about "${key}" before it was looked up in the ledger`)
  }
}

/** What a lookup said of a key: the day the ledger holds it at (null: not held), and its sorts to come. */
interface LookedUp {
  readonly day: number | null
  pending: number
}

/** How many times each key occurs in `keys`: each occurrence is sorted, and settled, once. */
const occurrences = (keys: Iterable<string>): Map<string, number> => {
  const counts = new Map<string, number>()
  for (const key of keys) counts.set(key, (counts.get(key) ?? 0) + 1)
  return counts
}

export class BoughtSet {
  /**
   * In a ledger: the keys looked up and not yet sorted by every caller that asked (a page read
   * ahead may ask about a key before an earlier page's caller has settled it).
   */
  private readonly lookedUp = new Map<string, LookedUp>()
  /** In a ledger: what this run's purchases added to its counts (a key not held; one not held fresh). */
  private readonly gained = { held: 0, fresh: 0 }

  private constructor(
    /**
     * The keys it knows with their days: all of them from a state; in a ledger, those bought by
     * this run. Marked: recorded by this run (a key listed again was bought by an earlier piece of
     * it).
     */
    private readonly set: DatedSet,
    /** The run's day: what a key bought now is recorded at, and what refresh ages count to. */
    readonly today: number,
    /** A key bought this many days ago or more is due again; undefined: never. */
    readonly refreshAfterDays: number | undefined,
    /** Held in the destination's ledger, which the loader writes with the records. */
    private readonly ledger: InLedger | undefined,
  ) {}

  static fromJson(json: DatedSetJson | undefined, today: number, refreshAfterDays: number | undefined) {
    return new BoughtSet(DatedSet.fromJson(json), today, refreshAfterDays, undefined)
  }

  /**
   * The set of `stream` held in `ledger`. What `json` holds (a state written before the ledger, or
   * through the pipe) is moved into the ledger first, so dropping it from the state loses nothing.
   * Only the ledger's counts are read here: its keys are looked up as they are met (`resolve`).
   */
  static fromLedger(
    json: DatedSetJson | undefined,
    ledger: Ledger,
    stream: string,
    today: number,
    refreshAfterDays: number | undefined,
  ): Effect.Effect<BoughtSet, LedgerError> {
    return Effect.gen(function* () {
      const saved = DatedSet.fromJson(json)
      // In slices: a state's million ids are not copied into one array of pairs.
      if (saved.size > 0)
        yield* Stream.runForEachChunk(
          Stream.rechunk(Stream.fromIterable(saved.entries()), adoptSlice),
          (slice) => ledger.adopt(stream, Chunk.toReadonlyArray(slice)),
        )
      const { held, fresh, ahead } = yield* ledger.holdings(stream, today, refreshAfterDays)
      return new BoughtSet(DatedSet.fromJson(undefined), today, refreshAfterDays, {
        ledger,
        stream,
        held,
        fresh,
        ahead,
      })
    })
  }

  get inLedger(): boolean {
    return this.ledger !== undefined
  }

  /** In a ledger: the keys it dated after tomorrow when the run began (bought/Ahead.ts). */
  get aheadInLedger(): DatedAhead | undefined {
    return this.ledger?.ahead
  }

  /** Whether `key` can be answered from memory: from a state always; in a ledger once looked up. */
  private known(key: string): boolean {
    return this.ledger === undefined || this.ledger.held === 0 || this.set.has(key) || this.lookedUp.has(key)
  }

  /**
   * Looks `keys` up in the ledger, so that `has` and `due` can answer for them until each
   * occurrence is settled (`settle`); nothing to do for a set from a state, or a ledger that held
   * nothing when the run began (all it can hold then is what this run bought, which is in memory),
   * or a key this run bought.
   */
  resolve(keys: Iterable<string>): Effect.Effect<void, LedgerError> {
    const inLedger = this.ledger
    if (inLedger === undefined || inLedger.held === 0) return Effect.void
    return Effect.suspend(() => {
      const counts = occurrences(keys)
      const unknown: Array<string> = []
      for (const [key, count] of counts) {
        const entry = this.lookedUp.get(key)
        // Counted now, so that no settle drops it while the others are looked up.
        if (entry !== undefined) entry.pending += count
        else if (this.set.has(key)) counts.delete(key)
        else unknown.push(key)
      }
      const slices = Array.from({ length: Math.ceil(unknown.length / lookupSlice) }, (_, index) =>
        unknown.slice(index * lookupSlice, (index + 1) * lookupSlice),
      )
      return Effect.forEach(slices, (slice) => inLedger.ledger.lookup(inLedger.stream, slice)).pipe(
        Effect.flatMap((answers) => Effect.sync(() => this.remember(unknown, counts, answers))),
        // A failed lookup leaves nothing for its caller to settle.
        Effect.tapError(() =>
          Effect.sync(() => {
            const notCounted = new Set(unknown)
            for (const [key, count] of counts) if (!notCounted.has(key)) this.release(key, count)
          }),
        ),
      )
    })
  }

  /** What the lookups said of `unknown`, kept for each occurrence the callers will sort. */
  private remember(
    unknown: ReadonlyArray<string>,
    counts: ReadonlyMap<string, number>,
    answers: ReadonlyArray<ReadonlyArray<Entry>>,
  ): void {
    const days = new Map(answers.flat())
    for (const key of unknown) {
      const count = counts.get(key) ?? 0
      const entry = this.lookedUp.get(key)
      // Another caller looked it up meanwhile: one answer, both callers' sorts.
      if (entry !== undefined) entry.pending += count
      else this.lookedUp.set(key, { day: days.get(key) ?? null, pending: count })
    }
  }

  /**
   * Looks `keys` up as `resolve` does, and settles them once the scope closes: for keys asked about
   * from before a read's first purchase to its end (the emails' contacts: counted for the estimate,
   * bought, then the emails marked done), looked up once for all of it.
   */
  resolveScoped(keys: ReadonlyArray<string>): Effect.Effect<void, LedgerError, Scope.Scope> {
    return Effect.acquireRelease(this.resolve(keys), () => Effect.sync(() => this.settle(keys)))
  }

  /**
   * The caller has sorted these keys (one occurrence each, as `resolve` was given them): what their
   * lookup said is dropped once every caller that asked has sorted them. Asked about again, a key
   * is looked up again.
   */
  settle(keys: Iterable<string>): void {
    for (const key of keys) this.release(key, 1)
  }

  private release(key: string, count: number): void {
    const entry = this.lookedUp.get(key)
    if (entry === undefined) return
    entry.pending -= count
    if (entry.pending <= 0) this.lookedUp.delete(key)
  }

  get size(): number {
    return this.ledger === undefined ? this.set.size : this.ledger.held + this.gained.held
  }

  /** The day `key` was bought: by this run or in the state's set; in a ledger, as its lookup found it. */
  private dayOf(key: string): number | undefined {
    if (!this.known(key)) throw new NotLookedUp(key)
    return this.set.dayOf(key) ?? this.lookedUp.get(key)?.day ?? undefined
  }

  /** A key bought on `day` (undefined: never) is to be bought now: never bought, or bought long enough ago. */
  private needsBuying(day: number | undefined): boolean {
    if (day === undefined) return true
    return this.refreshAfterDays !== undefined && isDue(day, this.today, this.refreshAfterDays)
  }

  /** Bought, by this run or before (in a ledger: a key `resolve` looked up, or this run bought). */
  has(key: string): boolean {
    return this.dayOf(key) !== undefined
  }

  /** Not bought yet, or bought long enough ago to be due again; never what this run bought. */
  due(key: string): boolean {
    return !this.set.marked(key) && this.needsBuying(this.dayOf(key))
  }

  /** Records `keys` as bought today. */
  record(keys: Iterable<string>): void {
    for (const key of keys) {
      // In a ledger, what its counts (taken when the run began) gain: a key not held, or held stale
      // (one recorded without a lookup, as a page whose lookup failed, counts as not held).
      if (this.ledger !== undefined && !this.set.marked(key)) {
        const before = this.known(key) ? this.dayOf(key) : undefined
        if (before === undefined) this.gained.held++
        if (this.needsBuying(before)) this.gained.fresh++
      }
      this.set.record(key, this.today)
    }
  }

  /** Bought by this run, by any path. */
  boughtThisRun(key: string): boolean {
    return this.set.marked(key)
  }

  /** How many keys held when the run began it has not bought again (a full refresh leaves them out). */
  heldNotBoughtAgain(): number {
    if (this.ledger === undefined) return this.set.size - this.set.countMarked()
    // In a ledger the set holds this run's purchases only; `gained.held` of them were not held.
    return this.ledger.held - (this.set.size - this.gained.held)
  }

  /** Some key is bought and not due: a search may return contacts this set already holds. */
  hasFresh(): boolean {
    return this.ledger === undefined
      ? this.set.hasFresh(this.today, this.refreshAfterDays)
      : this.countFresh() > 0
  }

  /** Keys bought and not due again. */
  countFresh(): number {
    return this.ledger === undefined
      ? this.set.countFresh(this.today, this.refreshAfterDays)
      : this.ledger.fresh + this.gained.fresh
  }

  /**
   * The set a stream's state saved (`saved`: its keys by day, or the ledger marker), from the
   * ledger when the read has one (what the state holds moves there), from the state otherwise. A
   * state whose set is in a ledger this read does not have is refused: read as empty, it would buy
   * every key again.
   */
  static saved(
    saved: DatedSetJson | typeof Streams.inLedger | undefined,
    stream: Streams.StreamName,
    today: number,
    refreshAfterDays: number | undefined,
  ): Effect.Effect<BoughtSet, StateError | LedgerError> {
    const json = saved === Streams.inLedger ? undefined : saved
    return Effect.flatMap(
      Effect.serviceOption(BoughtLedger),
      (ledger): Effect.Effect<BoughtSet, StateError | LedgerError> => {
        if (Option.isSome(ledger))
          return BoughtSet.fromLedger(json, ledger.value, stream, today, refreshAfterDays)
        if (saved !== Streams.inLedger)
          return Effect.succeed(BoughtSet.fromJson(json, today, refreshAfterDays))
        return Effect.fail(
          new StateError({
            stream,
            path: Streams.ledgers[stream]?.stateField ?? "(root)",
            description: `it is "${Streams.inLedger}": what was bought is in the _bought table of the database a sync loaded, not in this state`,
            advice:
              "Give the state that `salesintel-pg state` prints for that database (it holds them), or run `salesintel sync` on it.",
          }),
        )
      },
    )
  }

  /** Its state form: the keys by day, or the marker of a set held in the ledger. */
  toJson(): DatedSetOutput | typeof Streams.inLedger {
    return this.ledger !== undefined ? Streams.inLedger : this.set.toJson()
  }

  /**
   * When a checkpoint of this set is due, counted in records emitted since the last one: every
   * 1/50 of what it holds (every page while that is under one). In a ledger the checkpoint is small
   * whatever is held, so it is due after every page: a kill re-buys only what was not committed.
   * The loader commits a checkpoint at once when it keeps up, and several together when it falls
   * behind (the group commit of packages/postgres/src/load/CommitGroup.ts), so a sync at full speed is
   * not held to a commit per page. `alongside`: the entries of other sets the same checkpoint
   * carries (the contacts' identities looked up), counted with this set's.
   */
  cadence(alongside: () => number = () => 0): Effect.Effect<Checkpoints.Amortized> {
    return Checkpoints.amortized(() => this.inState() + alongside())
  }

  /** The entries a checkpoint of this set writes: none when the ledger holds it (a marker). */
  inState(): number {
    return this.ledger !== undefined ? 0 : this.set.size
  }
}
