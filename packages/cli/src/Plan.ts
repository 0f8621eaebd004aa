/**
 * `salesintel plan`: what the next `salesintel sync` of a config would buy and spend, and how long
 * it would take, before it spends a credit. The figures come from the source's CostPlan module (free
 * requests only: the preview and the taxonomy); what is already bought comes from the target's
 * saved state, read and never written. A target with no database yet has bought nothing: its
 * PGlite directory is not created (and a server's schema is not either).
 */
import { existsSync } from "node:fs"
import { join } from "node:path"
import { Options } from "@effect/cli"
import { type StreamState, Streams } from "@salesintel/airbyte"
import { CommandLine } from "@salesintel/command-line"
import { type ApiError, Client } from "@salesintel/core"
import { Database, Ledger, Loader, type Runs, Target } from "@salesintel/postgres"
import {
  Allowance,
  Commands,
  Config,
  CostPlan,
  Definitions,
  HeldKeys,
  KnownRows,
  Suppression,
} from "@salesintel/source"
import * as Data from "effect/Data"
import * as Effect from "effect/Effect"
import * as Either from "effect/Either"
import * as Option from "effect/Option"
import * as ConfigFile from "./ConfigFile.ts"
import * as PeriodSpending from "./PeriodSpending.ts"
import * as QueryRows from "./QueryRows.ts"
import * as TargetNote from "./TargetNote.ts"

export class PlanError extends Data.TaggedError("PlanError")<{ readonly description: string }> {
  override get message(): string {
    return this.description
  }
}

export interface TargetOptions {
  readonly databaseUrl: Option.Option<string>
  readonly pgliteDir: string
  readonly schema: string
  /** Where DATABASE_URL is looked up when no URL is given (the invocation's environment in the CLI). */
  readonly env?: Readonly<Record<string, string | undefined>>
  /** Wait (bounded) for a run holding the target, instead of failing at once. */
  readonly wait?: boolean
}

/** A directory PGlite has initialized holds PG_VERSION: anything else holds no database yet. */
export const hasPGliteDatabase = (directory: string): boolean => existsSync(join(directory, "PG_VERSION"))

/**
 * The target's saved states, read only. On embedded PGlite with no database in the directory
 * (or no directory), nothing is opened or created: nothing is bought yet.
 */
export const savedState = (
  target: TargetOptions,
): Effect.Effect<
  ReadonlyArray<StreamState.SavedStreamState>,
  Database.DatabaseError | Loader.SavedState.InvalidSavedState | Runs.Lock.RunLocked | Target.NoDatabase
> => Effect.map(saved(target, [], undefined), (found) => found.state)

/** The held keys `keys` asks for, read once: what the plan's substreams begin from (HeldKeys). */
export interface Saved {
  readonly state: ReadonlyArray<StreamState.SavedStreamState>
  readonly held: HeldKeys.Held
  /** What the credit allowance's period spent, as the target's runs say (undefined without an allowance). */
  readonly spentThisPeriod: number | undefined
  /** The target's suppressions (salesintel forget), none when it has none. */
  readonly suppressed: ReadonlyArray<Suppression.Keyed>
}

/**
 * `use` of the target's saved states, held keys, suppressions and what the allowance's period
 * spent, with the config's SQL query of known contacts or companies run on the target's database
 * while it runs (the plan walks the query's rows as the sync will). A target with no database yet
 * has bought, spent and forgotten nothing; no PGlite directory is created.
 */
export const withSaved = <A, E>(
  target: TargetOptions,
  keys: ReadonlyArray<Streams.DerivedKey>,
  use: (found: Saved) => Effect.Effect<A, E>,
  /** The config (its credit_allowance) and the time whose period's spending is read. */
  allowance: { readonly config: unknown; readonly now: number } | undefined,
): Effect.Effect<
  A,
  E | Database.DatabaseError | Loader.SavedState.InvalidSavedState | Runs.Lock.RunLocked | Target.NoDatabase
> => {
  const url = Option.getOrUndefined(target.databaseUrl) ?? target.env?.DATABASE_URL
  const onServer = url !== undefined && url.length > 0
  if (!onServer && !hasPGliteDatabase(target.pgliteDir))
    return use({
      state: [],
      held: heldOf([]),
      spentThisPeriod: allowance === undefined ? undefined : 0,
      suppressed: [],
    })
  const resolved = Target.resolve({
    databaseUrl: url,
    pgliteDir: target.pgliteDir,
    lock: { owner: "salesintel plan", wait: { wait: target.wait ?? false } },
  })
  return Effect.provide(
    Effect.flatMap(Effect.zip(savedIn(target.schema, keys, allowance), Database.Database), ([found, db]) =>
      Effect.provideService(use(found), KnownRows.QueryRows, QueryRows.onDatabase(db)),
    ),
    resolved.layer,
  )
}

/** The target's saved states and the rest (withSaved), read and the target let go. */
export const saved = (
  target: TargetOptions,
  keys: ReadonlyArray<Streams.DerivedKey>,
  allowance: { readonly config: unknown; readonly now: number } | undefined,
) => withSaved(target, keys, Effect.succeed, allowance)

/** Whether a config runs a SQL query on the target (contacts.known_query, companies.domains_query). */
export const hasQuery = (configJson: unknown): boolean =>
  Either.match(Config.decode(configJson), {
    onLeft: () => false,
    onRight: (config) => Commands.withoutDatabase(config) !== undefined,
  })

/**
 * The saved states of `schema` (savedStateIn), the keys for `keys` its records give, and what the
 * allowance's period spent (PeriodSpending).
 */
export const savedIn = (
  schema: string,
  keys: ReadonlyArray<Streams.DerivedKey>,
  allowance?: { readonly config: unknown; readonly now: number } | undefined,
) =>
  Effect.all({
    spentThisPeriod:
      allowance === undefined
        ? Effect.succeed(undefined)
        : PeriodSpending.spent(allowance.config, schema, allowance.now),
    state: savedStateIn(schema),
    held: Effect.map(
      Effect.forEach(keys, (key) =>
        Effect.map(Ledger.DerivedKeys.keys(schema, key), (found) => [key, found] as const),
      ),
      heldOf,
    ),
    suppressed: Effect.map(Ledger.Suppressions.held(schema), (held) =>
      held === undefined ? [] : [{ key: held.key, hashes: new Set(held.hashes) }],
    ),
  })

/** Held keys read already, as the source asks for them. */
const heldOf = (
  found: ReadonlyArray<readonly [Streams.DerivedKey, ReadonlyArray<string>]>,
): HeldKeys.Held => ({
  keys: (key) =>
    Effect.succeed(found.find(([asked]) => asked.stream === key.stream && asked.key === key.key)?.[1] ?? []),
})

/** The keys a config's substreams read from the records held (none unless one is configured). */
export const heldKeysWanted = (configJson: unknown): ReadonlyArray<Streams.DerivedKey> =>
  Either.match(Config.decode(configJson), {
    onLeft: () => [],
    onRight: (config) =>
      Object.values(Definitions.definitions).flatMap((definition) => {
        const parent = definition.parent?.(config)
        return parent === undefined ? [] : [parent.key]
      }),
  })

/**
 * The saved state of `schema` as the plan reads it: the bought sets a sync keeps in the ledger
 * written into it, as if the state held them (what the source would diff against).
 */
export const savedStateIn = (schema: string) =>
  Effect.flatMap(Loader.SavedState.read(schema), (saved) => Ledger.exported(schema, saved))

/** `--full-refresh` names checked against the streams: a misspelt one is refused, never ignored. */
const checkFullRefresh = (
  streams: ReadonlyArray<string>,
): Effect.Effect<ReadonlyArray<string>, PlanError> => {
  const unknown = streams.filter((name) => !Streams.isStreamName(name))
  return unknown.length === 0
    ? Effect.succeed(streams)
    : Effect.fail(
        new PlanError({
          description: `unknown stream ${unknown.join(", ")} in --full-refresh (${Streams.didYouMean(unknown) ?? `streams: ${Streams.names.join(", ")}`})`,
        }),
      )
}

/** The suppressions a plan's read passes over: the target's and the config's suppress_file. */
const suppressionsOf = (
  config: Config.SourceConfig,
  given: ReadonlyArray<Suppression.Keyed> | undefined,
): Effect.Effect<Suppression.Matcher, PlanError> =>
  config.suppress_file === undefined
    ? Effect.succeed(Suppression.matcher(given ?? []))
    : Either.match(Suppression.fromFile(config.suppress_file), {
        onLeft: (description) => Effect.fail(new PlanError({ description })),
        onRight: (file) => Effect.succeed(Suppression.matcher([...(given ?? []), file])),
      })

/** The plan of `config` (parsed JSON, validated here) from saved `state`; free requests only. */
export const makePlan = (options: {
  readonly config: unknown
  readonly state: ReadonlyArray<StreamState.SavedStreamState>
  readonly mode: CostPlan.Mode
  readonly now?: number
  /** Streams refreshed in full, as `salesintel sync --full-refresh` names them. */
  readonly fullRefresh?: ReadonlyArray<string>
  /** Where the key came from when not the config's api_key (ConfigFile.keySource). */
  readonly keySource?: string | undefined
  /** What the credit allowance's period spent before (the target's runs); none: nothing. */
  readonly spentThisPeriod?: number | undefined
  /** The target's suppressions (Saved.suppressed); the config's suppress_file is added to them. */
  readonly suppressed?: ReadonlyArray<Suppression.Keyed>
}): Effect.Effect<
  CostPlan.Plan,
  PlanError | ApiError.ApiError | CostPlan.StateError | CostPlan.LedgerError
> =>
  Either.match(Config.decode(options.config), {
    onLeft: (error) => Effect.fail(new PlanError({ description: error.message })),
    onRight: (config) =>
      Effect.flatMap(
        Effect.all([checkFullRefresh(options.fullRefresh ?? []), suppressionsOf(config, options.suppressed)]),
        ([fullRefresh, suppressed]) => {
          const now = options.now ?? Date.now()
          const allowance =
            config.credit_allowance === undefined
              ? undefined
              : Allowance.standingOf(config.credit_allowance, now, options.spentThisPeriod ?? 0, "runs")
          return CostPlan.plan({
            config,
            state: options.state,
            mode: options.mode,
            now,
            fullRefresh,
            allowance,
            suppressed,
          })
        },
      ).pipe(
        // A known contacts' file or query that cannot be read is the config's problem, said as such.
        Effect.catchTag("KnownInputError", (error) =>
          Effect.fail(new PlanError({ description: error.message })),
        ),
        Effect.provide(Client.layerFetch(Config.connectionOf(config), { keySource: options.keySource })),
      ),
  })

const count = (value: number | undefined): string =>
  value === undefined ? "-" : Math.round(value).toLocaleString("en-US")

const duration = (seconds: number): string => {
  if (seconds < 60) return `${Math.ceil(seconds)} s`
  const minutes = Math.floor(seconds / 60)
  if (minutes < 60) return `${minutes} min ${Math.ceil(seconds % 60)} s`
  return `${Math.floor(minutes / 60)} h ${minutes % 60} min`
}

/** Aligned columns: the first (names) to the left, the figures to the right. */
const table = (
  columns: ReadonlyArray<string>,
  rows: ReadonlyArray<Readonly<Record<string, unknown>>>,
): ReadonlyArray<string> => {
  const cells = [columns, ...rows.map((row) => columns.map((column) => String(row[column] ?? "")))]
  const widths = columns.map((_, index) => Math.max(...cells.map((line) => line[index]?.length ?? 0)))
  const line = (texts: ReadonlyArray<string>) =>
    texts
      .map((text, index) =>
        index === 0 ? text.padEnd(widths[index] ?? 0) : text.padStart(widths[index] ?? 0),
      )
      .join("  ")
  return cells.map(line)
}

/**
 * The companies' line, and what it cannot know: a key that matches no company costs nothing, so
 * the credits of keys not known to match one (never looked up, or matching none when last looked
 * up) are an upper bound; the keys the state knows matched a company count one credit each.
 */
const companiesLines = (companies: CostPlan.CompaniesPlan): ReadonlyArray<string> => {
  const keys = (kind: string, k: CostPlan.KeysPlan) =>
    `${count(k.configured)} ${kind} (${count(k.new)} new, ${count(k.stale)} due again)`
  const bound = companies.unconfirmed > 0 && companies.credits > 0
  const known = companies.due - companies.unconfirmed
  return [
    `companies: ${keys("domains", companies.domains)}, ${keys("names", companies.names)}: ${bound ? "at most " : ""}${count(companies.credits)} credits at one per key, ${count(companies.requests.credited)} requests`,
    ...(bound
      ? [
          `  ${count(companies.unconfirmed)} keys not looked up yet, or that matched no company when last looked up: each costs one credit if it matches a company and nothing if it matches none, so their ${count(Math.min(companies.unconfirmed, companies.credits))} credits are an upper bound${known > 0 ? `; the other ${count(known)} matched a company when last looked up (one credit each)` : ""}`,
        ]
      : []),
  ]
}

/** The works the sections above show; any other (a stream's new work) gets a line of its own. */
const sectioned = (plan: CostPlan.Plan) =>
  new Set([
    ...(plan.contacts?.searches ?? []).map((search) => `search ${search.name}`),
    "emails",
    "contacts held",
    "companies",
    "companies domains",
    "companies names",
    "taxonomy",
  ])

/** A piece of work no section shows, from its tallies alone. */
const workLine = (work: CostPlan.WorkPlan): string => {
  const { counts } = work
  const standing = [
    counts.listed === undefined ? undefined : `${count(counts.listed)} listed`,
    counts.held === undefined ? undefined : `${count(counts.held)} held`,
    `${count(work.due)} due (${count(counts.new ?? 0)} new, ${count(counts.stale ?? 0)} due again)`,
    (counts.unconfirmed ?? 0) > 0
      ? `${count(counts.unconfirmed)} not known to match (at most a credit each)`
      : undefined,
  ].filter((part) => part !== undefined)
  const requests = work.requests.free + work.requests.credited
  // A work whose purchase another work of its stream tallies (the companies' one purchase) has none of its own.
  const spends =
    work.credits > 0 || requests > 0 ? `: ${count(work.credits)} credits, ${count(requests)} requests` : ""
  return `${work.stream === "" || work.work.startsWith(work.stream) ? "" : `${work.stream}: `}${work.work}: ${standing.join(", ")}${spends}`
}

/** Quick mode's header: what it takes as held, and what it could not know. */
const quickLines = (plan: CostPlan.Plan): ReadonlyArray<string> => {
  const estimate = plan.estimate
  if (plan.mode !== "quick" || estimate === undefined) return []
  return [
    `  quick: from counts alone, and what each search's last sync left held (${count(estimate.heldTaken)} contacts taken as held and fresh, ${count(estimate.staleTaken)} as due again); the exact plan lists the ids`,
    ...estimate.unknowns.map((unknown) => `  not known: ${unknown}`),
  ]
}

/** The plan as a person reads it: a table of the contact work, then companies, then the totals. */
export const render = (plan: CostPlan.Plan, target: string): string => {
  const lines = [
    `plan (${plan.mode}${plan.fullRefresh.length > 0 ? `, full refresh of ${plan.fullRefresh.join(", ")}` : ""}) of the next sync into ${target}`,
    ...quickLines(plan),
    "",
  ]
  const rows: Array<Record<string, unknown>> = []
  for (const search of plan.contacts?.searches ?? [])
    rows.push({
      contacts: `search ${search.name}`,
      matches: count(search.matches),
      partitions: count(search.partitions),
      bought: count(search.bought),
      new: count(search.new),
      stale: count(search.stale),
      credits: count(search.credits),
      requests: count(search.requests.free + search.requests.credited),
    })
  const emails = plan.contacts?.emails
  if (emails !== undefined)
    rows.push({
      contacts: `known (${emails.lookedUp} of ${emails.configured} due)`,
      matches: count(emails.matches),
      partitions: "-",
      bought: count(emails.bought),
      new: count(emails.new),
      stale: count(emails.stale),
      credits: count(emails.credits),
      requests: count(emails.requests.free + emails.requests.credited),
    })
  if (rows.length > 0) {
    lines.push(
      ...table(["contacts", "matches", "partitions", "bought", "new", "stale", "credits", "requests"], rows),
    )
    for (const search of plan.contacts?.searches ?? [])
      if (search.unreachable > 0)
        lines.push(`  search ${search.name}: ${count(search.unreachable)} matches no partition can reach`)
    if (plan.contacts !== undefined)
      lines.push(
        `  contacts in the saved state: ${count(plan.contacts.inState)} (${count(plan.contacts.staleInState)} due again)`,
      )
    const notReadAgain = plan.contacts?.notReadAgain
    if (notReadAgain !== undefined && notReadAgain > 0)
      lines.push(
        `  the full refresh does not find ${count(notReadAgain)} contacts held again (bought by searches or emails no longer configured, or no longer matching them): their rows are deleted when it completes, and buying them back would cost ${count(notReadAgain)} credits`,
      )
    lines.push("")
  }
  if (plan.companies !== undefined) lines.push(...companiesLines(plan.companies), "")
  if (plan.suppressed > 0)
    lines.push(
      `suppressed: ${count(plan.suppressed)} forgotten (salesintel forget) met and passed over, never bought`,
      "",
    )
  const shown = sectioned(plan)
  const others = plan.works.filter((work) => !shown.has(work.work))
  if (others.length > 0) lines.push(...others.map(workLine), "")
  if (plan.taxonomy !== undefined)
    lines.push(
      `taxonomy: free, ${count(plan.taxonomy.requests.free)} requests (${plan.taxonomy.productQueries} product queries)`,
      "",
    )
  if (plan.refresh.credits > 0)
    lines.push(
      `refresh: ${count(plan.refresh.contacts)} contacts and ${count(plan.refresh.companies)} companies bought before are due again (refresh_after_days): ${count(plan.refresh.credits)} of the credits needed; what changed since their last observation lands in job_changes and technology_changes`,
      "",
    )
  const short = plan.creditsNeeded - plan.credits
  // Quick mode says its estimate's bounds; an unconfirmed company key is said here.
  const bound = plan.mode === "exact" && !plan.creditsExact
  const estimate = plan.estimate
  const about =
    estimate === undefined
      ? ""
      : ` (an estimate: between ${count(estimate.creditsAtLeast)} and ${count(estimate.creditsAtMost)})`
  if (plan.allowance !== undefined) lines.push(Allowance.describe(plan.allowance))
  const limited = plan.creditLimit < plan.creditBudget
  lines.push(
    `credits: ${bound ? "at most " : estimate === undefined ? "" : "about "}${count(plan.credits)} of the ${count(plan.creditBudget)} credit budget${limited ? ` (this run may spend ${count(plan.creditLimit)}: what the credit allowance has left)` : ""}${bound ? " (an upper bound: see companies)" : about}${short > 0 ? `; ${count(plan.creditsNeeded)} needed for everything due, ${count(short)} more than the ${limited ? "allowance leaves (the rest waits for its renewal)" : "budget (the rest waits for the next run)"}` : ""}`,
    `requests: ${count(plan.requests.free)} free + ${count(plan.requests.credited)} credited = ${count(plan.requests.total)}, at least ${duration(plan.seconds)} at ${count(plan.requestsPerMinute)} requests/min`,
  )
  return `${lines.join("\n")}\n`
}

const snakeCase = (key: string) => key.replace(/[A-Z]/g, (letter) => `_${letter.toLowerCase()}`)

/** The plan as one JSON object (snake_case keys; a figure quick mode does not know is null). */
export const toJson = (plan: CostPlan.Plan): string =>
  JSON.stringify(
    { ...plan, allowance: plan.allowance === undefined ? undefined : Allowance.toJson(plan.allowance) },
    function (this: unknown, _key, value: unknown) {
      if (value === undefined) return null
      if (value === null || typeof value !== "object" || Array.isArray(value)) return value
      return Object.fromEntries(
        Object.entries(value as Record<string, unknown>).map(([key, inner]) => [
          snakeCase(key),
          inner === undefined ? null : inner,
        ]),
      )
    },
  )

const readConfig = (path: string) =>
  Effect.mapError(ConfigFile.load(path), (description) => new PlanError({ description }))

// The target's options, with what they mean for a plan (which only reads the saved state).
const targetFlags = {
  databaseUrl: CommandLine.flag(Target.options.databaseUrl.parser, {
    ...Target.options.databaseUrl.doc,
    text: `${Target.options.databaseUrl.doc.text}; the plan reads the saved state there, and a missing schema means nothing bought yet`,
  }),
  pgliteDir: CommandLine.flag(Target.options.pgliteDir.parser, {
    ...Target.options.pgliteDir.doc,
    text: "the embedded PGlite directory whose saved state the plan reads; a directory with no database means nothing bought yet, and the plan does not create it",
  }),
  schema: CommandLine.flag(Target.options.schema.parser, {
    ...Target.options.schema.doc,
    text: "the schema whose _state the plan reads",
  }),
}

export const command = CommandLine.command(
  {
    name: "plan",
    summary: "show what the next sync would buy, spend and take, from free requests only (never a credit)",
    description: [
      "Walks the free preview as the sync will (or, with --quick, answers from counts alone) and prints, per search, the matches, partitions, contacts already bought, new and stale, and the credits the next sync spends; for companies the keys new and due; the total against credit_budget (and the credit_allowance: spent this period, left, and when it renews); and the requests and time at the rate limit. It reads the target's saved state and never writes it; a target with no database yet has bought nothing, and nothing is created.",
    ],
    examples: [
      "salesintel plan --config my-config.json",
      "salesintel plan --config my-config.json --quick --json",
      "salesintel plan --config my-config.json --full-refresh contacts",
    ],
  },
  {
    config: CommandLine.flag(Options.file("config"), {
      name: "--config FILE",
      text: "the source's JSON config, the same file `salesintel sync --config` takes (the key: api_key, api_key_file or $SALESINTEL_API_KEY)",
    }),
    ...targetFlags,
    wait: Target.waitOption,
    json: CommandLine.flag(Options.boolean("json"), {
      name: "--json",
      text: "print one JSON object instead of the table; its top-level `credits` is what the next sync spends",
      default: "off",
    }),
    fullRefresh: CommandLine.flag(Options.text("full-refresh").pipe(Options.repeated), {
      name: "--full-refresh LIST",
      text: "plan a full refresh of these streams (comma-separated or repeated), as `salesintel sync --full-refresh` reads them: every record bought again, and the rows it does not find again counted (deleted when it completes)",
      default: "incremental, as a plain sync reads",
    }),
    quick: CommandLine.flag(Options.boolean("quick"), {
      name: "--quick",
      text: "answer from counts alone, in seconds: an estimate from what each search's last sync left held, with its bounds (an upper bound for a search never synced)",
      default: "off: exact, walking the free preview as the sync will",
    }),
  },
  ({ config, databaseUrl, schema, pgliteDir, wait, json, quick, fullRefresh }) =>
    Effect.gen(function* () {
      const io = yield* CommandLine.Io
      const { config: parsed, keySource } = yield* readConfig(config)
      const unnamed = TargetNote.unnamed(
        { databaseUrl, pgliteDir, env: io.env },
        "reading the saved state of",
      )
      if (unnamed !== undefined) yield* CommandLine.logLine("INFO", unnamed, unnamed)
      const now = Date.now()
      const target = { databaseUrl, pgliteDir: CommandLine.pathIn(io, pgliteDir), schema, env: io.env, wait }
      const allowanceAt = { config: parsed, now }
      const made = ({ state, held, spentThisPeriod, suppressed }: Saved) =>
        Effect.provideService(
          makePlan({
            config: parsed,
            keySource,
            state,
            now,
            spentThisPeriod,
            suppressed,
            mode: quick ? "quick" : "exact",
            fullRefresh: fullRefresh.flatMap((text) =>
              text
                .split(",")
                .map((name) => name.trim())
                .filter((name) => name.length > 0),
            ),
          }),
          HeldKeys.HeldKeys,
          held,
        )
      // A query is run on the target as the plan walks it; else the target is let go once read.
      const plan = hasQuery(parsed)
        ? yield* withSaved(target, heldKeysWanted(parsed), made, allowanceAt)
        : yield* Effect.flatMap(saved(target, heldKeysWanted(parsed), allowanceAt), made)
      const described = Target.fromOptions(io, databaseUrl, pgliteDir).description
      yield* CommandLine.writeStdout(
        `${json ? toJson(plan) : render(plan, `${described}, schema ${schema}`).trimEnd()}\n`,
      )
    }).pipe(
      Effect.catchAll((error) =>
        Effect.zipRight(
          CommandLine.writeStderr(`salesintel: ${error.message}\n`),
          CommandLine.setExitCode(1),
        ),
      ),
    ),
)
