/**
 * `salesintel forget`: erasure. The people (by --email, --match-id, --linkedin-url) and companies
 * (by --domain) named are deleted from every table that holds them, in one transaction
 * (Forget.ts in @salesintel/postgres), and suppressed: each identifier (those given, and those the
 * deleted rows held) is kept as a keyed hash in `_suppressed`, so no later sync buys them back.
 * `--dry-run` counts what would go and changes nothing; `--export FILE` writes the key and the
 * hashes for a pipe's `suppress_file`.
 */
import { readFileSync, writeFileSync } from "node:fs"
import { Options } from "@effect/cli"
import { CommandLine } from "@salesintel/command-line"
import { Database, Ddl, Forget, Ledger, Runs, Target } from "@salesintel/postgres"
import { Suppression } from "@salesintel/source"
import * as Data from "effect/Data"
import * as Effect from "effect/Effect"
import * as Option from "effect/Option"

export class ForgetInputError extends Data.TaggedError("ForgetInputError")<{ readonly description: string }> {
  override get message(): string {
    return this.description
  }
}

/** The kinds a --file line may name, and the request field each fills. */
const fieldOf = {
  email: "emails",
  match_id: "matchIds",
  linkedin_url: "linkedinUrls",
  domain: "domains",
} as const satisfies Record<Suppression.Kind, keyof Forget.Request>

const isKind = (text: string): text is Suppression.Kind => Object.hasOwn(fieldOf, text)

/**
 * A --file's identifiers: one per line, `kind,value` (kind: email, match_id, linkedin_url or
 * domain); blank lines and lines starting with # are skipped. A bad line is refused as file:line.
 */
export const parseFile = (path: string, text: string): Effect.Effect<Forget.Request, ForgetInputError> => {
  const request: Record<keyof Forget.Request, Array<string>> = {
    emails: [],
    matchIds: [],
    linkedinUrls: [],
    domains: [],
  }
  const lines = text.split(/\r?\n/)
  for (const [index, line] of lines.entries()) {
    const trimmed = line.trim()
    if (trimmed === "" || trimmed.startsWith("#")) continue
    const comma = trimmed.indexOf(",")
    const kind = comma < 0 ? trimmed : trimmed.slice(0, comma).trim()
    const value = comma < 0 ? "" : trimmed.slice(comma + 1).trim()
    if (!isKind(kind) || value === "")
      return Effect.fail(
        new ForgetInputError({
          description: `${path}:${index + 1}: expected kind,value with kind one of email, match_id, linkedin_url, domain (e.g. email,jane@example.com), got ${JSON.stringify(trimmed.slice(0, 80))}`,
        }),
      )
    request[fieldOf[kind]].push(value)
  }
  return Effect.succeed(request)
}

const readFile = (path: string) =>
  Effect.try({
    try: () => readFileSync(path, "utf8"),
    catch: (error) =>
      new ForgetInputError({
        description: `--file: cannot read ${path}: ${error instanceof Error ? error.message : String(error)}`,
      }),
  })

/** What a forget did (or, in a dry run, would do). */
export interface Outcome {
  readonly dryRun: boolean
  readonly people: number
  readonly companies: number
  readonly tables: ReadonlyArray<Forget.TableCount>
  /** Identifiers hashed into `_suppressed` (new ones; 0 in a dry run). */
  readonly suppressed: number
  /** Identifiers a run would hash (in a dry run: what it would add at most). */
  readonly identifiers: number
}

/** The keyed hashes of what was found (every identifier the rows held, and those given). */
const entriesOf = (key: string, found: Forget.Found) =>
  (
    [
      ["match_id", found.matchIds],
      ["email", found.emails],
      ["linkedin_url", found.linkedinUrls],
      ["domain", found.domains],
    ] as const
  ).flatMap(([kind, values]) => values.map((value) => ({ kind, hash: Suppression.hash(key, kind, value) })))

/** Forgets `request` in one transaction under the target's lock (a dry run: counts only). */
export const forget = (schema: string, request: Forget.Request, dryRun: boolean, lock: Runs.Lock.Options) =>
  Effect.scoped(
    Effect.gen(function* () {
      yield* Runs.Lock.schema(schema, lock)
      if (!dryRun) yield* Ddl.ensure(schema)
      return yield* Database.transaction(
        Effect.gen(function* () {
          const found = yield* Forget.found(schema, request)
          const tables = yield* Forget.rows(schema, found, dryRun)
          const key = dryRun ? undefined : yield* Ledger.Suppressions.keyOf(schema, Suppression.newKey)
          const entries = key === undefined ? [] : entriesOf(key, found)
          const suppressed = yield* Ledger.Suppressions.add(schema, entries)
          const identifiers =
            found.matchIds.length + found.emails.length + found.linkedinUrls.length + found.domains.length
          return {
            dryRun,
            people: found.matchIds.length,
            companies: found.companyIds.length,
            tables,
            suppressed,
            identifiers,
          } satisfies Outcome
        }),
      )
    }),
  )

/** The target's key and hashes, as a pipe's `suppress_file` reads them (Suppression.ExportFile). */
export const exportTo = (schema: string, path: string) =>
  Effect.gen(function* () {
    const held = yield* Ledger.Suppressions.held(schema)
    const file: Suppression.ExportFile = {
      salesintel_suppressions: 1,
      key: held?.key ?? Suppression.newKey(),
      hashes: held?.hashes ?? [],
    }
    yield* Effect.try({
      // The key is in it: readable by its owner only.
      try: () => writeFileSync(path, `${JSON.stringify(file)}\n`, { mode: 0o600 }),
      catch: (error) =>
        new ForgetInputError({
          description: `--export: cannot write ${path}: ${error instanceof Error ? error.message : String(error)}`,
        }),
    })
    return file.hashes.length
  })

const plural = (n: number, one: string, many: string) => `${n} ${n === 1 ? one : many}`

export const describe = (outcome: Outcome): string => {
  const what = `${plural(outcome.people, "person", "people")} and ${plural(outcome.companies, "company", "companies")}`
  const head = outcome.dryRun ? `would forget ${what} (dry run: nothing changed)` : `forgot ${what}`
  const width = Math.max(0, ...outcome.tables.map((t) => t.table.length))
  const rows = outcome.tables.map(
    (t) => `  ${t.table.padEnd(width)}  ${t.rows} ${outcome.dryRun ? "to delete" : "deleted"}`,
  )
  const tail = outcome.dryRun
    ? `would suppress up to ${plural(outcome.identifiers, "identifier", "identifiers")} (keyed hashes)`
    : `suppressed ${plural(outcome.suppressed, "new identifier", "new identifiers")} (keyed hashes, none in the clear): no sync buys them again`
  return [head, ...(rows.length === 0 ? ["  no rows held"] : rows), tail].join("\n")
}

const repeated = (name: string, text: string) =>
  CommandLine.flag(Options.text(name).pipe(Options.repeated), { name: `--${name} VALUE`, text })

export const command = CommandLine.command(
  {
    name: "forget",
    summary: "erase people or companies from the target and never buy them again",
    description: [
      "Deletes every row the target holds of the people (--email, --match-id, --linkedin-url) or companies (--domain) named: the stream tables, their child and history tables, job_changes, company and technology observations and changes, _rejected, the ledger _bought and the saved states' bought sets, in one transaction. Then it records a suppression: a keyed hash (HMAC-SHA256, under a random key the target makes once) of each identifier given and of each the deleted rows held (match id, emails, LinkedIn URL; a company's domains), none in the clear. From then on no sync buys them: searches pass them over before paying, email lookups and company purchases skip them, and `salesintel plan` counts them as suppressed. Someone not held is suppressed by the identifiers given.",
      "The key keeps the suppression list from naming anyone to whoever reads it (or an export) without the key; it cannot stop someone who has the target's key from testing whether a given email was forgotten. --file FILE takes one identifier a line, `kind,value` (kind: email, match_id, linkedin_url or domain; blank lines and # comments skipped). --export FILE writes the key and the hashes for a pipe's `suppress_file` (the source without salesintel sync).",
    ],
    examples: [
      "salesintel forget --email jane@example.com",
      "salesintel forget --match-id 9f1c2 --linkedin-url linkedin.com/in/jane --dry-run",
      "salesintel forget --domain example.com",
      "salesintel forget --file erasures.csv --export suppressions.json",
    ],
  },
  {
    email: repeated("email", "a person's email (repeatable)"),
    matchId: repeated("match-id", "a person's match id (repeatable)"),
    linkedinUrl: repeated("linkedin-url", "a person's LinkedIn URL (repeatable)"),
    domain: repeated("domain", "a company's domain (repeatable)"),
    file: CommandLine.flag(Options.file("file").pipe(Options.optional), {
      name: "--file FILE",
      text: "identifiers one a line, `kind,value` (email, match_id, linkedin_url or domain)",
      default: "none",
    }),
    dryRun: CommandLine.flag(Options.boolean("dry-run"), {
      name: "--dry-run",
      text: "say what would be deleted, per table, and change nothing",
    }),
    exportFile: CommandLine.flag(Options.text("export").pipe(Options.optional), {
      name: "--export FILE",
      text: "write the target's suppressions (the key and the hashes) to FILE, for the source's suppress_file",
      default: "none",
    }),
    ...Target.options,
    wait: Target.waitOption,
  },
  (flags) =>
    Effect.gen(function* () {
      const io = yield* CommandLine.Io
      const path = Option.getOrUndefined(flags.file)
      const fromFile =
        path === undefined
          ? undefined
          : yield* Effect.flatMap(readFile(CommandLine.pathIn(io, path)), (text) => parseFile(path, text))
      const request: Forget.Request = {
        emails: [...flags.email, ...(fromFile?.emails ?? [])],
        matchIds: [...flags.matchId, ...(fromFile?.matchIds ?? [])],
        linkedinUrls: [...flags.linkedinUrl, ...(fromFile?.linkedinUrls ?? [])],
        domains: [...flags.domain, ...(fromFile?.domains ?? [])],
      }
      const exportPath = Option.getOrUndefined(flags.exportFile)
      const named = Object.values(request).some((values) => values.length > 0)
      if (!named && exportPath === undefined)
        return yield* new ForgetInputError({
          description:
            "expected someone to forget: --email, --match-id, --linkedin-url, --domain or --file (or --export FILE alone)",
        })
      const lock = {
        owner: "salesintel forget",
        wait: { wait: flags.wait },
        lease: "respect",
        existing: flags.dryRun || !named,
      } as const
      const target = Target.fromOptions(io, flags.databaseUrl, flags.pgliteDir, lock)
      yield* Effect.gen(function* () {
        if (named)
          yield* CommandLine.writeStdout(
            `${describe(yield* forget(flags.schema, request, flags.dryRun, lock))}\n`,
          )
        if (exportPath !== undefined && !flags.dryRun) {
          const count = yield* exportTo(flags.schema, CommandLine.pathIn(io, exportPath))
          yield* CommandLine.writeStdout(
            `wrote ${exportPath}: ${plural(count, "suppression", "suppressions")} and their key (keep it private)\n`,
          )
        }
      }).pipe(Effect.provide(target.layer))
    }).pipe(
      Effect.catchAll((error) =>
        Effect.zipRight(
          CommandLine.writeStderr(`salesintel: ${error.message}\n`),
          CommandLine.setExitCode(1),
        ),
      ),
    ),
)
