/**
 * The bought set: what a stream holds (contacts by match id, emails looked up, company domains and
 * names), each with the day it was bought. It is the incremental cursor of this product: every
 * path that buys diffs against it (`due`) and records into it (`record`), so a key bought by one
 * path (a full refresh, a direct read, a listing, an email) is not bought again by another.
 *
 * It is the one part of the state that grows with the data, so its checkpoints are amortised
 * (`cadence`): after every page while it is small, then every 1/50 of what it holds.
 */
import type { Effect } from "effect"
import * as Checkpoints from "../components/Checkpoints.ts"
import { DatedSet, type DatedSetJson, type DatedSetOutput } from "../DatedSet.ts"

export class BoughtSet {
  /** The keys recorded by this run (a key listed again was bought by an earlier piece of it). */
  private readonly recorded = new Set<string>()

  private constructor(
    private readonly set: DatedSet,
    /** The run's day: what a key bought now is recorded at, and what refresh ages count to. */
    readonly today: number,
    /** A key bought this many days ago or more is due again; undefined: never. */
    readonly refreshAfterDays: number | undefined,
  ) {}

  static fromJson(json: DatedSetJson | undefined, today: number, refreshAfterDays: number | undefined) {
    return new BoughtSet(DatedSet.fromJson(json), today, refreshAfterDays)
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
    for (const key of keys) {
      this.set.add(key, this.today)
      this.recorded.add(key)
    }
  }

  /** Bought by this run, by any path. */
  boughtThisRun(key: string): boolean {
    return this.recorded.has(key)
  }

  /** Some key is bought and not due: a search may return contacts this set already holds. */
  hasFresh(): boolean {
    return this.set.hasFresh(this.today, this.refreshAfterDays)
  }

  /** Keys bought and not due again. */
  countFresh(): number {
    return this.set.countFresh(this.today, this.refreshAfterDays)
  }

  toJson(): DatedSetOutput {
    return this.set.toJson()
  }

  /** When a checkpoint of this set is due, counted in records emitted since the last one. */
  cadence(): Effect.Effect<Checkpoints.Amortized> {
    return Checkpoints.amortized(() => this.set.size)
  }
}
