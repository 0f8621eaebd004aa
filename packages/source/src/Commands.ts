/**
 * The four commands as streams of protocol messages, independent of where they are printed:
 * bin.ts writes them to stdout, and `salesintel sync` feeds `read` straight into the loader.
 * A bad config, catalog or state file ends the command with a TRACE config_error; for check, the
 * protocol asks for a FAILED connection status instead.
 */
import { Catalog, Message, StreamState } from "@salesintel/airbyte"
import { type AdaptiveConcurrency, Client, CreditBudget, type RateLimit } from "@salesintel/core"
import * as Effect from "effect/Effect"
import * as Either from "effect/Either"
import * as Layer from "effect/Layer"
import * as Option from "effect/Option"
import * as Stream from "effect/Stream"
import * as Allowance from "./Allowance.ts"
import * as Suppression from "./bought/Suppression.ts"
import * as Check from "./Check.ts"
import * as Config from "./Config.ts"
import * as KnownRows from "./known/Rows.ts"
import * as Read from "./read/Read.ts"
import * as Replaced from "./read/Replaced.ts"
import * as Spec from "./Spec.ts"

/**
 * The client and the run's budget, over fetch with the configured rate limit, and the gate that
 * keeps the pages in flight the latency needs (at most `concurrency`), shared by every stream. The
 * rate limit is in the context too: the read says its waits (Read.ts, waitItems).
 */
export const layerFor = (
  config: Config.SourceConfig,
  options: Client.ClientOptions = {},
  /** What the run may spend: credit_budget, or less where the allowance has less left (Allowance.limitOf). */
  limit: number = config.credit_budget,
): Layer.Layer<
  | Client.SalesIntelClient
  | AdaptiveConcurrency.InFlight
  | CreditBudget.CreditBudget
  | RateLimit.RequestRateLimit
> =>
  Layer.merge(
    Client.layerFetch(Config.connectionOf(config), { ...options, maxInFlight: config.concurrency }),
    CreditBudget.layer(limit),
  )

const configError = (message: string): Stream.Stream<Message.Message> =>
  Stream.make(Message.traceError("config_error", message, Date.now()))

export const spec = (): Stream.Stream<Message.Message> => Stream.make(Spec.spec())

/**
 * A config with a SQL query (contacts.known_query, companies.domains_query) needs the target's
 * database, which the source alone (an Airbyte pipe) does not have: refused before anything runs.
 */
export const withoutDatabase = (config: Config.SourceConfig): string | undefined => {
  const field =
    config.contacts?.known_query !== undefined
      ? "contacts.known_query"
      : config.companies?.domains_query !== undefined
        ? "companies.domains_query"
        : undefined
  return field === undefined ? undefined : KnownRows.noDatabase(field)
}

export const check = (configJson: unknown): Stream.Stream<Message.Message> =>
  Either.match(Config.decode(configJson), {
    onLeft: (error) => Stream.make(Message.connectionStatus(false, error.message)),
    onRight: (config) => {
      const refused = withoutDatabase(config)
      return refused !== undefined
        ? Stream.make(Message.connectionStatus(false, refused))
        : Stream.fromEffect(Check.check(config).pipe(Effect.provide(layerFor(config))))
    },
  })

export const discover = (configJson: unknown): Stream.Stream<Message.Message> =>
  Either.match(Config.decode(configJson), {
    onLeft: (error) => configError(error.message),
    onRight: () => Stream.make(Message.catalog(Catalog.offered())),
  })

export interface ReadInputs {
  readonly config: unknown
  readonly catalog: unknown
  readonly state?: unknown
  readonly startedAt?: number
  /** Completes when a graceful stop is requested (see Read.ReadOptions.stopWhen). */
  readonly stopWhen?: Effect.Effect<void>
  /** The read feeds this project's loader (see Read.ReadOptions.ownDestination). */
  readonly ownDestination?: boolean
  /**
   * What the credit allowance's current period spent before this read, where the caller knows it
   * (`salesintel sync`: the target's runs); otherwise the state says it (Allowance.spentInState).
   */
  readonly spentThisPeriod?: number
  /**
   * Suppression lists given in process (`salesintel sync`: the target's), with the config's
   * `suppress_file` if it names one: no stream buys what they hold.
   */
  readonly suppressed?: ReadonlyArray<Suppression.Keyed>
}

/**
 * Where the config's credit allowance stands for this read (undefined without one): what the
 * period spent from the caller, else from the state, else (a pipe given no state) not known.
 */
const standingFor = (
  config: Config.SourceConfig,
  state: StreamState.InputState,
  inputs: ReadInputs,
): Either.Either<Allowance.Standing | undefined, string> => {
  const allowance = config.credit_allowance
  if (allowance === undefined) return Either.right(undefined)
  const now = inputs.startedAt ?? Date.now()
  if (inputs.spentThisPeriod !== undefined)
    return Either.right(Allowance.standingOf(allowance, now, inputs.spentThisPeriod, "runs"))
  if (inputs.state === undefined || inputs.state === null)
    return Either.right(Allowance.standingOf(allowance, now, 0, "unknown"))
  return Either.map(
    Either.mapLeft(
      Allowance.spentInState(state, allowance, now),
      (error) => `invalid state file: ${error.message}`,
    ),
    (spent) => Allowance.standingOf(allowance, now, spent, "state"),
  )
}

/** The read's messages and summary, or a config error before anything is requested. */
export const prepareRead = (
  inputs: ReadInputs,
): Either.Either<
  {
    readonly config: Config.SourceConfig
    readonly catalog: Catalog.ConfiguredCatalog
    readonly read: Read.Read
    /** Where the credit allowance stands; undefined without one. */
    readonly allowance: Allowance.Standing | undefined
  },
  string
> =>
  Either.gen(function* () {
    const config = yield* Either.mapLeft(Config.decode(inputs.config), (error) => error.message)
    const catalog = yield* Catalog.decodeConfigured(inputs.catalog)
    const state = yield* StreamState.decode(inputs.state)
    if (inputs.ownDestination !== true) {
      const refused = withoutDatabase(config)
      if (refused !== undefined) yield* Either.left(refused)
      yield* Replaced.unconfigured(config, catalog)
    }
    const allowance = yield* standingFor(config, state, inputs)
    const fromFile =
      config.suppress_file === undefined ? [] : [yield* Suppression.fromFile(config.suppress_file)]
    return {
      config,
      catalog,
      allowance,
      read: Read.read({
        config,
        catalog,
        state,
        startedAt: inputs.startedAt ?? Date.now(),
        stopWhen: inputs.stopWhen,
        ownDestination: inputs.ownDestination,
        allowance,
        suppressed: Suppression.matcher([...(inputs.suppressed ?? []), ...fromFile]),
      }),
    }
  })

/**
 * Why a read given no state at all says so before it buys: it buys every contact and company it
 * finds, those its destination holds included. Right for a first sync; otherwise (a pipe whose
 * `--state` was forgotten) the warning comes before the first credit.
 */
export const statelessWarning = (catalog: Catalog.ConfiguredCatalog): Message.LogMessage | undefined => {
  const buying = catalog.streams
    .filter((entry) => Catalog.syncModeOf(entry).syncMode === "incremental")
    .map((entry) => entry.stream.name)
  return buying.length === 0
    ? undefined
    : Message.log(
        "WARN",
        `no state given (--state): this read starts from nothing, so ${buying.join(" and ")} buy every record they find, including any the destination already holds. A first sync starts so; otherwise pass the destination's state (salesintel-pg state > state.json, then --state state.json) and only what is new or stale is bought.`,
      )
}

export const read = (inputs: ReadInputs): Stream.Stream<Message.Message> =>
  Either.match(prepareRead(inputs), {
    onLeft: configError,
    onRight: ({ config, catalog, read, allowance }) => {
      const stateless = inputs.state === undefined || inputs.state === null
      const warnings = [
        ...(stateless ? [statelessWarning(catalog)] : []),
        ...(allowance?.source === "unknown" ? [Message.log("WARN", Allowance.unknownLine(allowance))] : []),
      ].filter((line) => line !== undefined)
      // A stream the destination replaces is read only when the plan says the budget finishes it.
      const messages = Stream.unwrap(
        Effect.map(
          Replaced.budgetProblem({
            config,
            catalog,
            state: inputs.state,
            now: inputs.startedAt ?? Date.now(),
            allowance,
          }),
          Option.match({
            onNone: () => read.messages,
            onSome: (refusal) => Stream.make(refusal),
          }),
        ),
      ).pipe(Stream.provideLayer(layerFor(config, {}, Allowance.limitOf(config.credit_budget, allowance))))
      return Stream.concat(Stream.fromIterable(warnings), messages)
    },
  })
