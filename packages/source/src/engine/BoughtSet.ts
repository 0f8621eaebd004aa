/**
 * The bought set: what a stream holds (contacts by match id, emails looked up, company domains and
 * names), each with the day it was bought. It is the incremental cursor of this product: every
 * path that buys diffs against it (`due`) and records into it (`record`), so a key bought by one
 * path (a full refresh, a direct read, a listing, an email) is not bought again by another.
 *
 * In the state it is the one part that grows with the data, so its checkpoints are amortised
 * (`cadence`): after every page while it is small, then every 1/50 of what it holds. Kept in the
 * destination's ledger instead (`fromLedger`, engine/BoughtLedger.ts), the state carries only a
 * marker, and a checkpoint is due after every page whatever is held.
 */
import { Streams } from "@salesintel/airbyte"
import { Chunk, Effect, Option, Stream } from "effect"
import * as Checkpoints from "../components/Checkpoints.ts"
import { StateError } from "../StateError.ts"
import { BoughtLedger, type Ledger, type LedgerError } from "./BoughtLedger.ts"
import { DatedSet, type DatedSetJson, type DatedSetOutput } from "./DatedSet.ts"

/** Entries a state held, moved into the ledger this many at a time. */
const adoptSlice = 20_000

export class BoughtSet {
  private constructor(
    /** Marked: recorded by this run (a key listed again was bought by an earlier piece of it). */
    private readonly set: DatedSet,
    /** The run's day: what a key bought now is recorded at, and what refresh ages count to. */
    readonly today: number,
    /** A key bought this many days ago or more is due again; undefined: never. */
    readonly refreshAfterDays: number | undefined,
    /** Held in the destination's ledger, which the loader writes with the records. */
    readonly inLedger: boolean,
  ) {}

  static fromJson(json: DatedSetJson | undefined, today: number, refreshAfterDays: number | undefined) {
    return new BoughtSet(DatedSet.fromJson(json), today, refreshAfterDays, false)
  }

  /**
   * The set of `stream` held in `ledger`. What `json` holds (a state written before the ledger, or
   * through the pipe) is moved into the ledger first, so dropping it from the state loses nothing.
   */
  static fromLedger(
    json: DatedSetJson | undefined,
    ledger: Ledger,
    stream: string,
    today: number,
    refreshAfterDays: number | undefined,
  ): Effect.Effect<BoughtSet, LedgerError> {
    const set = DatedSet.fromJson(json)
    return Effect.gen(function* () {
      // In slices: a state's million ids are not copied into one array of pairs.
      if (set.size > 0)
        yield* Stream.runForEachChunk(
          Stream.rechunk(Stream.fromIterable(set.entries()), adoptSlice),
          (slice) => ledger.adopt(stream, Chunk.toReadonlyArray(slice)),
        )
      yield* Stream.runForEachChunk(ledger.read(stream), (entries) =>
        Effect.sync(() => {
          for (const [key, day] of entries) set.add(key, day)
        }),
      )
      return new BoughtSet(set, today, refreshAfterDays, true)
    })
  }

  get size(): number {
    return this.set.size
  }

  has(key: string): boolean {
    return this.set.has(key)
  }

  /** Not bought yet, or bought long enough ago to be due again. */
  due(key: string): boolean {
    return this.set.needsBuying(key, this.today, this.refreshAfterDays)
  }

  /** Records `keys` as bought today. */
  record(keys: Iterable<string>): void {
    for (const key of keys) this.set.add(key, this.today, true)
  }

  /** Bought by this run, by any path. */
  boughtThisRun(key: string): boolean {
    return this.set.marked(key)
  }

  /** Some key is bought and not due: a search may return contacts this set already holds. */
  hasFresh(): boolean {
    return this.set.hasFresh(this.today, this.refreshAfterDays)
  }

  /** Keys bought and not due again. */
  countFresh(): number {
    return this.set.countFresh(this.today, this.refreshAfterDays)
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
    return this.inLedger ? Streams.inLedger : this.set.toJson()
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
    return Checkpoints.amortized(() => (this.inLedger ? 0 : this.set.size))
  }
}
