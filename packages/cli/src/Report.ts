/**
 * `salesintel report`: one self-contained HTML file of charts drawn from a synced database
 * (technology adoption by category, product and company size; contacts by department and level;
 * credits per run), each with the numbers behind it. It opens an existing database only: a PGlite
 * directory that holds none, or a schema no sync wrote, is an error, and nothing is created.
 */
import { existsSync } from "node:fs"
import { writeFile } from "node:fs/promises"
import { join } from "node:path"
import { Options } from "@effect/cli"
import { CommandLine } from "@salesintel/command-line"
import { type Database, Target } from "@salesintel/postgres"
import * as EffectData from "effect/Data"
import * as Effect from "effect/Effect"
import * as Option from "effect/Option"
import * as Data from "./report/ReportData.ts"
import * as Page from "./report/shared/ReportPage.ts"

/**
 * The sections and their charts, loaded when a report is drawn: ECharts alone takes about 44 MB
 * of memory once imported, which every other command (a sync above all) would otherwise carry.
 */
const loadSections = Effect.promise(() => import("./report/ReportSections.ts"))

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
  Effect.flatMap(Data.read(options.schema, options.target, options.limits), (data) =>
    Effect.map(loadSections, (Sections) =>
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
    ),
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

export const command = CommandLine.command(
  {
    name: "report",
    summary: "write an HTML report of a synced database (technology adoption, contacts, credits per run)",
    description: [
      "One self-contained HTML file (charts as inline SVG, no script, nothing fetched when it is opened): technology adoption by category, by product and by company size band, contacts by department and level, and the credits each run spent, each chart with its numbers in a table. It only reads: a PGlite directory or schema without a synced database is an error, and nothing is created.",
    ],
    examples: [
      "salesintel report --pglite-dir ./.salesintel/demo --out report.html",
      "salesintel report --database-url postgres://user@host/db --schema salesintel --out /tmp/market.html",
    ],
  },
  {
    ...Target.options,
    wait: Target.waitOption,
    out: CommandLine.flag(Options.file("out").pipe(Options.withDefault("report.html")), {
      name: "--out FILE",
      text: "the HTML file to write; it is self-contained: charts inline, nothing loaded from the network",
      default: "report.html",
    }),
  },
  ({ databaseUrl, schema, pgliteDir, wait, out }) =>
    Effect.gen(function* () {
      const io = yield* CommandLine.Io
      const url = Option.getOrUndefined(databaseUrl) ?? io.env.DATABASE_URL
      const target = Target.fromOptions(io, databaseUrl, pgliteDir, {
        owner: "salesintel report",
        existing: true,
        wait: { wait },
      })
      if (url === undefined || url.length === 0)
        yield* requireExistingPGlite(CommandLine.pathIn(io, pgliteDir))
      const html = yield* generate({ schema, target: target.description }).pipe(Effect.provide(target.layer))
      const path = CommandLine.pathIn(io, out)
      yield* writeReport(path, html)
      yield* CommandLine.writeStdout(`wrote ${path} (${number.format(Buffer.byteLength(html))} bytes)\n`)
    }).pipe(
      Effect.catchAll((error) =>
        Effect.zipRight(
          CommandLine.writeStderr(`salesintel: ${error.message}\n`),
          CommandLine.setExitCode(1),
        ),
      ),
    ),
)
