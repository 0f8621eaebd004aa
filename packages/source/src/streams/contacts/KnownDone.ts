/**
 * The known identities done (looked up, and every contact they matched held, or none matched),
 * each with the day: a run looks up only those due (never done, or done `refresh_after_days` ago).
 *
 * Two homes, as the contacts bought have (bought/BoughtSet.ts). In the state (the source on its
 * own, the Airbyte platform, PyAirbyte): a dated set in the `emails` field, held in memory and
 * written into each checkpoint. In the destination (`salesintel sync`, whose BoughtLedger is the
 * target's database): the field says "ledger", the identities due are looked up a chunk at a time
 * (`dueOf`), and those done go out as records of the `_known_done` stream (Streams.knownDone) that
 * the loader writes in the transaction of the checkpoint after them. So 100,000 CRM emails are
 * neither kept in the run's memory nor packed into every checkpoint, and a run killed at any
 * moment looks up again only what had not committed.
 */
import { Streams } from "@salesintel/airbyte"
import * as Effect from "effect/Effect"
import * as Option from "effect/Option"
import * as Ahead from "../../bought/Ahead.ts"
import { BoughtLedger, type Ledger, type LedgerError } from "../../bought/BoughtLedger.ts"
import { BoughtSet } from "../../bought/BoughtSet.ts"
import { DatedSet, type DatedSetJson, type DatedSetOutput, isDue } from "../../bought/DatedSet.ts"
import * as Output from "../../read/Output.ts"
import { StateError } from "../../StateError.ts"

export interface KnownDone {
  /** Of `keys` (each asked once), those due a lookup: never done, or done long enough ago. */
  readonly dueOf: (keys: ReadonlyArray<string>) => Effect.Effect<ReadonlySet<string>, LedgerError>
  /** Marks `keys` done today; what the read emits for them before its next checkpoint. */
  readonly record: (keys: ReadonlyArray<string>) => ReadonlyArray<Output.Output<never>>
  /** Its state form: the keys by day, or the marker of identities kept in the destination. */
  readonly toJson: () => DatedSetOutput | typeof Streams.inLedger
  /** The entries a checkpoint writes of it (what the checkpoints' cadence counts). */
  readonly inState: () => number
  /** What the read says of it as it begins: keys the state (or `_known_done`) dates after tomorrow. */
  readonly ahead: Ahead.Ahead | undefined
}

/** The contacts' state field and `_known_done`'s stream. */
const stream = "contacts"
const field = Streams.knownDone.stateFields[stream] ?? "emails"

/** Identities looked up in the destination at a time (one statement each). */
const lookupSlice = 5_000

const inState = (set: BoughtSet, incremental: boolean, ahead: Ahead.Ahead | undefined): KnownDone => ({
  dueOf: (keys) => Effect.succeed(new Set(incremental ? keys.filter((key) => set.due(key)) : keys)),
  record: (keys) => {
    set.record(keys)
    return []
  },
  toJson: () => set.toJson(),
  inState: () => set.inState(),
  ahead,
})

const inLedger = (
  ledger: Ledger,
  today: number,
  refreshAfterDays: number | undefined,
  incremental: boolean,
  ahead: Ahead.Ahead | undefined,
): KnownDone => ({
  // A full refresh looks every identity up again: nothing to ask.
  dueOf: (keys) =>
    !incremental
      ? Effect.succeed(new Set(keys))
      : Effect.map(
          Effect.forEach(
            Array.from({ length: Math.ceil(keys.length / lookupSlice) }, (_, index) =>
              keys.slice(index * lookupSlice, (index + 1) * lookupSlice),
            ),
            (slice) => ledger.lookupDone(stream, slice),
          ),
          (answers) => {
            const days = new Map(answers.flat())
            return new Set(
              keys.filter((key) => {
                const day = days.get(key)
                return (
                  day === undefined || (refreshAfterDays !== undefined && isDue(day, today, refreshAfterDays))
                )
              }),
            )
          },
        ),
  record: (keys) => (keys.length === 0 ? [] : [Output.knownDone(keys)]),
  toJson: () => Streams.inLedger,
  inState: () => 0,
  ahead,
})

/**
 * The identities done a read starts from: in the destination when the read has its ledger (what
 * the state held moves there first, so dropping it from the state loses nothing), in the state
 * otherwise. A full refresh starts from none (it looks every identity up again, free). A state
 * that says "ledger" where there is none is refused: read as empty, every identity would be
 * looked up again and the state would lose where they are.
 */
export const saved = (
  json: DatedSetJson | typeof Streams.inLedger,
  today: number,
  refreshAfterDays: number | undefined,
  incremental: boolean,
): Effect.Effect<KnownDone, StateError | LedgerError> =>
  Effect.flatMap(
    Effect.serviceOption(BoughtLedger),
    (ledger): Effect.Effect<KnownDone, StateError | LedgerError> => {
      const set = json === Streams.inLedger ? undefined : json
      if (Option.isSome(ledger))
        return Effect.gen(function* () {
          // A full refresh adopts nothing: it ends holding only what it looked up again, and an
          // adopted row, written after the overwrite began, would outlive the overwrite's cleanup.
          if (set !== undefined && incremental)
            yield* ledger.value.adoptDone(stream, [...DatedSet.fromJson(set).entries()])
          // What the table dates ahead is said, as the state's set's days are (a full refresh
          // looks every identity up again: nothing to say).
          const dated = incremental ? yield* ledger.value.aheadDone(stream, today) : undefined
          const ahead = Ahead.inLedger(dated, ["identity", "identities"], Streams.knownDone.name)
          return inLedger(ledger.value, today, refreshAfterDays, incremental, ahead)
        })
      if (json === Streams.inLedger)
        return Effect.fail(
          new StateError({
            stream,
            path: field,
            description: `it is "${Streams.inLedger}": the known contacts looked up are in the _known_done table of the database a sync loaded, not in this state`,
            advice:
              "Give the state that `salesintel-pg state` prints for that database (it holds them), or run `salesintel sync` on it.",
          }),
        )
      const ahead = incremental ? Ahead.ahead(json, field, ["email", "emails"], today) : undefined
      // A full refresh looks every configured identity up again, and ends holding those alone: one no
      // longer configured is not left done while the overwrite deletes its contacts.
      const done = BoughtSet.fromJson(incremental ? json : {}, today, refreshAfterDays)
      return Effect.succeed(inState(done, incremental, ahead))
    },
  )
