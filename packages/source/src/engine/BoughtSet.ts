/**
 * The bought set: what a stream holds (contacts by match id, emails looked up, company domains and
 * names), each with the day it was bought. It is the incremental cursor of this product: every
 * path that buys diffs against it (`due`) and records into it (`record`), so a key bought by one
 * path (a full refresh, a direct read, a listing, an email) is not bought again by another.
 *
 * In the state it is the one part that grows with the data, so its checkpoints are amortised
 * (`cadence`): after every page while it is small, then every 1/50 of what it holds. Kept in the
 * destination's ledger instead (`fromLedger`, engine/BoughtLedger.ts), the state carries only a
 * marker, a checkpoint is due after every page whatever is held, and memory holds only the keys
 * this run met: each is looked up (`resolve`, a listed page at a time) before it is asked about.
 */
import { Streams } from "@salesintel/airbyte"
import { Chunk, Effect, Option, Stream } from "effect"
import * as Checkpoints from "../components/Checkpoints.ts"
import { StateError } from "../StateError.ts"
import { BoughtLedger, type Ledger, type LedgerError } from "./BoughtLedger.ts"
import { DatedSet, type DatedSetJson, type DatedSetOutput } from "./DatedSet.ts"
import { KeyTable } from "./KeyTable.ts"

/** Entries a state held, moved into the ledger this many at a time. */
const adoptSlice = 20_000

/** A set kept in the ledger: where, and what it held when the run began. */
interface InLedger {
  readonly ledger: Ledger
  readonly stream: string
  readonly held: number
  readonly fresh: number
}

/** Keys looked up in the ledger at a time (one statement each). */
const lookupSlice = 5_000

/** A key asked about before `resolve` looked it up: a bug in the caller, never read as "not bought". */
export class NotLookedUp extends Error {
  constructor(key: string) {
    super(`the bought set was asked about "${key}" before it was looked up in the ledger`)
  }
}

export class BoughtSet {
  /** In a ledger: keys looked up and not found there. */
  private readonly absent = new KeyTable()
  /** In a ledger: what this run's purchases added to its counts (a key not held; one not held fresh). */
  private readonly gained = { held: 0, fresh: 0 }

  private constructor(
    /**
     * The keys it knows with their days: all of them from a state; in a ledger, those looked up and
     * found there, and those bought by this run. Marked: recorded by this run (a key listed again
     * was bought by an earlier piece of it).
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
      const { held, fresh } = yield* ledger.holdings(stream, today, refreshAfterDays)
      return new BoughtSet(DatedSet.fromJson(undefined), today, refreshAfterDays, {
        ledger,
        stream,
        held,
        fresh,
      })
    })
  }

  get inLedger(): boolean {
    return this.ledger !== undefined
  }

  /** Whether `key` can be answered from memory: from a state always; in a ledger once looked up. */
  private known(key: string): boolean {
    return (
      this.ledger === undefined ||
      this.ledger.held === 0 ||
      this.set.has(key) ||
      this.absent.indexOf(key) >= 0
    )
  }

  /**
   * Looks `keys` up in the ledger, so that `has` and `due` can answer for them; nothing to do for a
   * set from a state, or a ledger that held nothing when the run began (all it can hold then is
   * what this run bought, which is in memory).
   */
  resolve(keys: Iterable<string>): Effect.Effect<void, LedgerError> {
    const inLedger = this.ledger
    if (inLedger === undefined || inLedger.held === 0) return Effect.void
    const unknown = [...new Set(keys)].filter((key) => !this.known(key))
    const slices = Array.from({ length: Math.ceil(unknown.length / lookupSlice) }, (_, index) =>
      unknown.slice(index * lookupSlice, (index + 1) * lookupSlice),
    )
    return Effect.forEach(
      slices,
      (slice) =>
        Effect.map(inLedger.ledger.lookup(inLedger.stream, slice), (found) => {
          for (const [key, day] of found) this.set.add(key, day)
          for (const key of slice) if (!this.set.has(key)) this.absent.add(key)
        }),
      { discard: true },
    )
  }

  get size(): number {
    return this.ledger === undefined ? this.set.size : this.ledger.held + this.gained.held
  }

  /** Bought, by this run or before (in a ledger: a key `resolve` looked up, or this run bought). */
  has(key: string): boolean {
    if (!this.known(key)) throw new NotLookedUp(key)
    return this.set.has(key)
  }

  /** Not bought yet, or bought long enough ago to be due again. */
  due(key: string): boolean {
    if (!this.known(key)) throw new NotLookedUp(key)
    return this.set.needsBuying(key, this.today, this.refreshAfterDays)
  }

  /** Records `keys` as bought today. */
  record(keys: Iterable<string>): void {
    for (const key of keys) {
      // In a ledger, what its counts (taken when the run began) gain: a key not held, or held stale.
      if (this.ledger !== undefined && !this.set.marked(key)) {
        if (!this.set.has(key)) this.gained.held++
        if (this.set.needsBuying(key, this.today, this.refreshAfterDays)) this.gained.fresh++
      }
      this.set.add(key, this.today, true)
    }
  }

  /** Bought by this run, by any path. */
  boughtThisRun(key: string): boolean {
    return this.set.marked(key)
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
   * behind (the group commit of packages/postgres/src/CommitGroup.ts), so a sync at full speed is
   * not held to a commit per page.
   */
  cadence(): Effect.Effect<Checkpoints.Amortized> {
    return Checkpoints.amortized(() => (this.ledger !== undefined ? 0 : this.set.size))
  }
}
