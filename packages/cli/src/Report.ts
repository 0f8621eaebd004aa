/**
 * `salesintel report`: one self-contained HTML file of charts drawn from a synced database
 * (technology adoption by category, product and company size; contacts by department and level;
 * credits per run), each with the numbers behind it. It opens an existing database only: a PGlite
 * directory that holds none, or a schema no sync wrote, is an error, and nothing is created.
 */
import { existsSync } from "node:fs"
import { writeFile } from "node:fs/promises"
import { join } from "node:path"
import { Command, Options } from "@effect/cli"
import { type Database, PGliteDatabase, Sql, Target } from "@salesintel/postgres"
import { Console, Effect, Data as EffectData, Option } from "effect"
import * as Data from "./report/Data.ts"
import * as Page from "./report/Page.ts"
import * as Sections from "./report/Sections.ts"

export class ReportError extends EffectData.TaggedError("ReportError")<{ readonly description: string }> {
  override get message(): string {
    return this.description
  }
}

const number = new Intl.NumberFormat("en-US")

/** The report's HTML from the database in context (`target` only names it on the page and in errors). */
export const generate = (options: {
  readonly schema: string
  readonly target: string
  readonly now?: Date
  readonly limits?: Data.Limits
}): Effect.Effect<string, Data.NotSynced | Database.DatabaseError, Database.Database> =>
  Effect.map(Data.read(options.schema, options.target, options.limits), (data) =>
    Page.render({
      title: "SalesIntel technographics report",
      subtitle: [
        `From schema "${options.schema}" of ${options.target}`,
        `Generated ${(options.now ?? new Date()).toISOString().replace("T", " ").slice(0, 19)} UTC`,
      ],
      figures: [
        ["companies", number.format(data.companies)],
        ["contacts", number.format(data.contacts)],
        ["technology categories in use", number.format(data.categories.length)],
        ["credits spent (runs shown)", number.format(data.runs.reduce((sum, run) => sum + run.credits, 0))],
      ],
      sections: Sections.all(data),
    }),
  )

/**
 * PGlite creates a database wherever it is pointed: a report must not, so a directory without
 * PGlite's files (PG_VERSION) is refused before anything opens it.
 */
const requireExistingPGlite = (directory: string) =>
  existsSync(join(directory, "PG_VERSION"))
    ? Effect.void
    : Effect.fail(
        new ReportError({
          description: `no database in ${directory}: --pglite-dir must be a directory a sync wrote (run \`salesintel sync\` first, or pass --database-url)`,
        }),
      )

const writeReport = (path: string, html: string) =>
  Effect.tryPromise({
    try: () => writeFile(path, html, "utf8"),
    catch: (error) =>
      new ReportError({
        description: `cannot write the report to --out ${path}: ${error instanceof Error ? error.message : String(error)}`,
      }),
  })

// The target options, described for a command that only reads what a sync wrote.
const databaseUrl = Target.options.databaseUrl
const pgliteDir = Options.directory("pglite-dir").pipe(
  Options.withDefault(PGliteDatabase.defaultDirectory),
  Options.withDescription(
    `the embedded PGlite directory a sync wrote, read when no database URL is given (default: ${PGliteDatabase.defaultDirectory}); it must hold a database already`,
  ),
)
const schema = Options.text("schema").pipe(
  Options.withDefault(Sql.defaultSchema),
  Options.withDescription(`the schema a sync wrote the tables into (default: ${Sql.defaultSchema})`),
)

export const command = Command.make(
  "report",
  {
    databaseUrl,
    schema,
    pgliteDir,
    out: Options.file("out").pipe(
      Options.withDefault("report.html"),
      Options.withDescription(
        "the HTML file to write (default: report.html); it is self-contained: charts inline, nothing loaded from the network",
      ),
    ),
  },
  ({ databaseUrl, schema, pgliteDir, out }) => {
    const url = Option.getOrUndefined(databaseUrl) ?? process.env.DATABASE_URL
    const onPGlite = url === undefined || url.length === 0
    const target = Target.fromOptions(databaseUrl, pgliteDir, { owner: "salesintel report" })
    return Effect.gen(function* () {
      if (onPGlite) yield* requireExistingPGlite(pgliteDir)
      const html = yield* generate({ schema, target: target.description }).pipe(Effect.provide(target.layer))
      yield* writeReport(out, html)
      yield* Console.log(`wrote ${out} (${number.format(Buffer.byteLength(html))} bytes)`)
    }).pipe(
      Effect.catchAll((error) =>
        Effect.sync(() => {
          process.stderr.write(`salesintel: ${error.message}\n`)
          process.exitCode = 1
        }),
      ),
    )
  },
).pipe(
  Command.withDescription(
    "write an HTML report of a synced database: technology adoption by category, product and company size, contacts by department and level, credits per run (charts and their numbers)",
  ),
)
