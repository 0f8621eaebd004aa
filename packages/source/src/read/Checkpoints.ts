/**
 * When to write a checkpoint whose size grows with the data (the set of ids bought): after every
 * page while it is small, then whenever the records since the last one reach 1/`ratio` of it.
 * The bytes of state written stay proportional to the records emitted (instead of growing with
 * their square), and a run killed without warning re-buys at most 1/`ratio` of what it holds.
 */
import * as Effect from "effect/Effect"
import * as Ref from "effect/Ref"

export interface Amortized {
  /** Counts `records` just emitted; true when a checkpoint is due now. */
  readonly due: (records: number) => Effect.Effect<boolean>
}

export const amortized = (stateEntries: () => number, ratio = 50): Effect.Effect<Amortized> =>
  Effect.map(Ref.make(0), (recordsSince) => ({
    due: (records) =>
      Ref.modify(recordsSince, (since) => {
        const total = since + records
        return total < Math.max(1, Math.floor(stateEntries() / ratio)) ? [false, total] : [true, 0]
      }),
  }))
