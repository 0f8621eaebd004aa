/**
 * Loader throughput: 200,000 synthetic contacts (Airbyte RECORD lines with two phones each, a
 * STATE every 10,000) generated to a temporary JSONL file, then loaded from that file (streamed)
 * several ways, each in its own process (run with the node flags of the `salesintel-pg` command,
 * read from its shebang) so each peak RSS is its own:
 *   - the loader on a database that does nothing: its JavaScript side alone (read, decode, map),
 *   - bulk path into the local Postgres (COPY into staging + one upsert per batch),
 *   - the same batches' database work alone: records mapped first, only the database's calls timed,
 *     by kind (the ceiling of one connection, whatever the JavaScript side costs),
 *   - row-by-row baseline into the local Postgres (INSERT ... ON CONFLICT per contact, DELETE and
 *     INSERT per phone, committed at each STATE like the bulk path),
 *   - bulk path into file-backed PGlite, and its database work alone; the database is created
 *     (initdb, once per database) in a process of its own first, so the load's figures are its own.
 * `node bench/dist/load-throughput.js generate FILE` only writes the input.
 * `BENCH_RECORDS` changes the count; `DATABASE_URL` the server; `BENCH_SKIP_ROWS=1` skips the
 * slow row-by-row baseline.
 */
import { spawnSync } from "node:child_process"
import { createWriteStream, mkdtempSync, rmSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { fileURLToPath } from "node:url"
import { Message, Ndjson } from "@salesintel/airbyte"
import { Contact } from "@salesintel/core"
import {
  Database as Db,
  Ddl,
  Loader,
  PGliteDatabase,
  PgDatabase,
  Schema as PgSchema,
  Sql,
} from "@salesintel/postgres"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Schema from "effect/Schema"
import * as Stream from "effect/Stream"
import pg from "pg"
import { commandLine } from "./command.ts"

const { Database } = Db
const { ident, qualified } = Sql

const records = Number(process.env.BENCH_RECORDS ?? 200_000)
const stateEvery = 10_000
const url = process.env.DATABASE_URL || "postgres://postgres@127.0.0.1:5432/test"
const schema = "salesintel_bench"

const generate = async (path: string) => {
  const out = createWriteStream(path)
  const write = (message: Message.Message) =>
    out.write(Ndjson.serialize(message))
      ? Promise.resolve()
      : new Promise<void>((resolve) => out.once("drain", resolve))
  for (let index = 0; index < records; index++) {
    const companyId = 4_400_000 + (index % 5_000)
    const data = {
      _score: null,
      match_id: `m-${index.toString(36)}`,
      doc_id: `d-42-${index}`,
      display_name: `Jessica Novak ${index}`,
      first_name: "Jessica",
      last_name: `Novak ${index}`,
      email: `jessica.novak${index}@granitekeystonerobotics.com`,
      personal_email: `jessicanovak${index}@icloud.com`,
      job_title: "IT Manager",
      job_level: ["mgr", "vp", "dir", "staff"][index % 4],
      job_department: ["it_is", "sales", "marketing"][index % 3],
      phone_numbers: [
        { type: "work_hq", value: `614993${index}` },
        { type: "mobile", value: `555${index}` },
      ],
      social_profiles: [{ type: "linkedin", url: `linkedin.com/in/jessica-novak-${index}` }],
      location: "Columbus, OH, US",
      location_type: "hq",
      position_location_id: null,
      addresses: [],
      company: {
        id: companyId,
        name: "Granitekeystone Robotics Co",
        domains: ["granitekeystonerobotics.com"],
        linkedin_url: "linkedin.com/company/granitekeystonerobotics",
        naics_codes: ["484121"],
        sic_codes: ["4213"],
        revenue: 41,
        actual_revenue: 41,
        predicted_revenue: 38,
        revenue_range: "$10M - $50M",
        size: 131,
        size_range: "50-199",
      },
      company_id: companyId,
      company_name: "Granitekeystone Robotics Co",
      company_domains: ["granitekeystonerobotics.com"],
      dates: { created_date: "1585357174668", last_modified_date: "1751025325591" },
      _salesintel_search: "managers",
      _salesintel_fetched_at: "2026-11-21T23:47:42.419Z",
    }
    await write(Message.record("contacts", data, 1))
    if ((index + 1) % stateEvery === 0 || index === records - 1)
      await write(Message.streamState("contacts", { upto: index + 1 }, stateEvery))
  }
  await new Promise<void>((resolve, reject) =>
    out.end((error?: Error | null) => (error ? reject(error) : resolve())),
  )
}

const fresh = Effect.flatMap(Database, (db) =>
  db.exec(`DROP SCHEMA IF EXISTS ${ident(schema)} CASCADE`),
).pipe(Effect.zipRight(Ddl.ensure(schema)))

const bulk = (file: string) => Loader.load(Ndjson.fromFile(file), { schema }).pipe(Effect.asVoid)

/** Seconds the database took, in all and per kind of call. */
interface DatabaseTime {
  readonly copy: number
  readonly merge: number
  readonly commit: number
}

/**
 * The database's share alone: the bulk path's batches, mapped before the clock runs for each, and
 * only the database's calls timed, by kind: the COPYs into staging, the merge statements (upsert,
 * children), the commits.
 */
const databaseOnly = (file: string) =>
  Effect.gen(function* () {
    const db = yield* Database
    const contacts = PgSchema.Tables.mappings.contacts
    for (const mapping of PgSchema.Tables.allMappings) yield* Loader.Merge.prepare(mapping)
    const time = { copy: 0, merge: 0, commit: 0 }
    const timed =
      <Args extends ReadonlyArray<unknown>, A, E>(
        run: (...args: Args) => Effect.Effect<A, E>,
        kind: (...args: Args) => keyof DatabaseTime,
      ) =>
      (...args: Args) =>
        Effect.suspend(() => {
          const started = performance.now()
          return Effect.ensuring(
            run(...args),
            Effect.sync(() => {
              time[kind(...args)] += (performance.now() - started) / 1000
            }),
          )
        })
    const exec = timed(db.exec, (sql) => (/^(BEGIN|COMMIT)/.test(sql) ? "commit" : "merge"))
    const clocked: Db.DatabaseService = {
      ...db,
      exec,
      query: timed(db.query, () => "merge"),
      copyIn: timed(db.copyIn, () => "copy"),
    }
    let builder = new Loader.Batch.Builder(contacts.children.length)
    const flush = Effect.suspend(() => {
      const batch = builder.close()
      builder = new Loader.Batch.Builder(contacts.children.length)
      return Loader.Merge.mergeBatch(schema, contacts, batch, "append_dedup")
    }).pipe(Effect.provideService(Database, clocked))
    yield* exec("BEGIN")
    yield* Ndjson.fromFile(file).pipe(
      Stream.runForEach((message) => {
        if (message.type === "STATE") return Effect.zipRight(flush, exec("COMMIT; BEGIN"))
        if (message.type !== "RECORD") return Effect.void
        const mapped = contacts.map(message)
        if (mapped._tag === "Left") return Effect.dieMessage(mapped.left.description)
        builder.add(mapped.right)
        return builder.size >= 5_000 ? flush : Effect.void
      }),
    )
    yield* exec("COMMIT")
    return time satisfies DatabaseTime
  })

const decodeContact = Schema.decodeUnknownSync(Contact.Contact)

/**
 * The baseline: one statement per row (prepared once, then only bound and executed: the best a
 * row-by-row loader does), committed at each STATE. Straight on `pg`, no COPY and no batching.
 */
const rowByRow = (file: string) =>
  Effect.acquireUseRelease(
    Effect.promise(async () => {
      const client = new pg.Client({ connectionString: url })
      await client.connect()
      return client
    }),
    (client) =>
      Effect.gen(function* () {
        const contacts = qualified(schema, PgSchema.Tables.named.contacts.name)
        const phones = qualified(schema, PgSchema.Tables.named.contactPhones.name)
        const run = (name: string, text: string, values: ReadonlyArray<unknown>) =>
          Effect.promise(() => client.query({ name, text, values: [...values] }))
        const exec = (text: string) => Effect.promise(() => client.query(text))
        yield* exec("BEGIN")
        yield* Ndjson.fromFile(file).pipe(
          Stream.runForEach((message) =>
            Effect.gen(function* () {
              if (message.type === "STATE") {
                yield* exec("COMMIT")
                yield* exec("BEGIN")
                return
              }
              if (message.type !== "RECORD") return
              const contact = decodeContact(message.record.data)
              yield* run(
                "upsert-contact",
                `INSERT INTO ${contacts} (match_id, doc_id, display_name, first_name, last_name, email, personal_email, job_title, job_level, job_department, location, company_id, company_name, _raw, _synced_at)
                 VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14::text::jsonb, now())
                 ON CONFLICT (match_id) DO UPDATE SET doc_id = EXCLUDED.doc_id, display_name = EXCLUDED.display_name, first_name = EXCLUDED.first_name, last_name = EXCLUDED.last_name, email = EXCLUDED.email, personal_email = EXCLUDED.personal_email, job_title = EXCLUDED.job_title, job_level = EXCLUDED.job_level, job_department = EXCLUDED.job_department, location = EXCLUDED.location, company_id = EXCLUDED.company_id, company_name = EXCLUDED.company_name, _raw = EXCLUDED._raw, _synced_at = EXCLUDED._synced_at`,
                [
                  contact.match_id,
                  contact.doc_id,
                  contact.display_name,
                  contact.first_name,
                  contact.last_name,
                  contact.email,
                  contact.personal_email,
                  contact.job_title,
                  contact.job_level,
                  contact.job_department,
                  contact.location,
                  contact.company_id,
                  contact.company_name,
                  JSON.stringify(message.record.data),
                ],
              )
              yield* run("delete-phones", `DELETE FROM ${phones} WHERE match_id = $1`, [contact.match_id])
              for (const [position, phone] of (contact.phone_numbers ?? []).entries())
                yield* run(
                  "insert-phone",
                  `INSERT INTO ${phones} (match_id, position, type, value, _synced_at) VALUES ($1, $2, $3, $4, now())`,
                  [contact.match_id, position, phone.type, phone.value],
                )
            }),
          ),
        )
        yield* exec("COMMIT")
      }),
    (client) => Effect.promise(() => client.end()),
  )

const layerFor = (target: string, pgliteDir: string): Layer.Layer<Db.Database, unknown> =>
  target === "pglite" ? PGliteDatabase.layer(pgliteDir) : PgDatabase.layer(url)

/** A database that does nothing: the loader's JavaScript side alone (reading, decoding, mapping). */
const noDatabase: Db.DatabaseService = {
  kind: "pg",
  query: () => Effect.succeed([]),
  queryResult: () => Effect.succeed({ columns: [], types: [], rows: [] }),
  exec: () => Effect.void,
  copyIn: () => Effect.void,
}

/** Child mode: run one phase and print `seconds peakRssMb` on stdout. */
const phase = async (name: string, file: string, pgliteDir: string) => {
  if (name === "no-database") {
    const started = performance.now()
    const summary = await Effect.runPromise(
      Loader.load(Ndjson.fromFile(file), { schema, ensureSchema: false }).pipe(
        Effect.provideService(Database, noDatabase),
      ),
    )
    const seconds = (performance.now() - started) / 1000
    const contacts = summary.streams.contacts?.records ?? 0
    const peakRssMb = process.resourceUsage().maxRSS / 1024
    process.stdout.write(`${JSON.stringify({ seconds, contacts, phones: 0, peakRssMb })}\n`)
    return
  }
  if (name === "pglite-init") {
    // Creating the database (PGlite's initdb) happens once per directory: timed and measured on
    // its own, so the load below shows what a load costs.
    const started = performance.now()
    await Effect.runPromise(fresh.pipe(Effect.provide(Layer.orDie(PGliteDatabase.layer(pgliteDir)))))
    const seconds = (performance.now() - started) / 1000
    const peakRssMb = process.resourceUsage().maxRSS / 1024
    process.stdout.write(`${JSON.stringify({ seconds, contacts: 0, phones: 0, peakRssMb })}\n`)
    return
  }
  const target = name.startsWith("pglite") ? "pglite" : "pg"
  const program = Effect.gen(function* () {
    yield* fresh
    const started = performance.now()
    let seconds: number
    let databaseTime: DatabaseTime | undefined
    if (name.endsWith("db-only")) {
      databaseTime = yield* databaseOnly(file)
      seconds = databaseTime.copy + databaseTime.merge + databaseTime.commit
    } else {
      yield* name === "pg-rows" ? rowByRow(file) : bulk(file)
      seconds = (performance.now() - started) / 1000
    }
    const db = yield* Database
    const [row] = yield* db.query(
      `SELECT (SELECT count(*) FROM ${qualified(schema, PgSchema.Tables.named.contacts.name)})::int AS contacts, (SELECT count(*) FROM ${qualified(schema, PgSchema.Tables.named.contactPhones.name)})::int AS phones`,
    )
    if (target === "pg") yield* db.exec(`DROP SCHEMA IF EXISTS ${ident(schema)} CASCADE`)
    return { seconds, databaseTime, contacts: Number(row?.contacts), phones: Number(row?.phones) }
  })
  const result = await Effect.runPromise(
    program.pipe(Effect.provide(Layer.orDie(layerFor(target, pgliteDir)))),
  )
  const peakRssMb = process.resourceUsage().maxRSS / 1024
  process.stdout.write(`${JSON.stringify({ ...result, peakRssMb })}\n`)
}

interface PhaseResult {
  readonly seconds: number
  readonly databaseTime?: DatabaseTime
  readonly contacts: number
  readonly phones: number
  readonly peakRssMb: number
}

/** The `salesintel-pg` command's shebang (its node flags and environment), so each phase runs as the command does. */
const command = commandLine(
  fileURLToPath(new URL("../../packages/postgres/bin/salesintel-pg.js", import.meta.url)),
)

const runPhase = (name: string, file: string, pgliteDir: string): PhaseResult => {
  const child = spawnSync(
    process.execPath,
    [...command.flags, fileURLToPath(import.meta.url), "phase", name, file, pgliteDir],
    {
      encoding: "utf8",
      env: { ...process.env, ...command.env },
      stdio: ["ignore", "pipe", "inherit"],
    },
  )
  if (child.status !== 0) throw new Error(`phase ${name} failed (exit ${child.status})`)
  return JSON.parse(child.stdout.trim().split("\n").at(-1) ?? "{}")
}

const main = async () => {
  const dir = mkdtempSync(join(tmpdir(), "salesintel-bench-"))
  const file = join(dir, "contacts.jsonl")
  try {
    const generateStart = performance.now()
    await generate(file)
    console.log(
      `${records.toLocaleString("en")} contact records (2 phones each, a STATE every ${stateEvery.toLocaleString("en")}) written to a temp JSONL file in ${((performance.now() - generateStart) / 1000).toFixed(1)} s`,
    )
    const environment = Object.entries(command.env).map(([name, value]) => `${name}=${value}`)
    console.log(`salesintel-pg runs node as: ${[...environment, "node", ...command.flags].join(" ")}`)
    console.log("path                               records/s   seconds   contacts   phones   peak RSS")
    const report = (label: string, result: PhaseResult) => {
      console.log(
        `${label.padEnd(34)} ${Math.round(result.contacts / result.seconds)
          .toLocaleString("en")
          .padStart(
            9,
          )}  ${result.seconds.toFixed(1).padStart(8)}  ${String(result.contacts).padStart(9)}  ${String(result.phones).padStart(7)}  ${result.peakRssMb.toFixed(0).padStart(6)} MB`,
      )
      const parts = result.databaseTime
      if (parts !== undefined) {
        const micros = (seconds: number) => `${((seconds * 1e6) / result.contacts).toFixed(0)} µs`
        console.log(
          `${"".padEnd(34)} per contact: COPYs ${micros(parts.copy)}, merge statements ${micros(parts.merge)}, commits ${micros(parts.commit)}`,
        )
      }
      return result.contacts / result.seconds
    }
    report("the loader alone (no database)", runPhase("no-database", file, ""))
    const bulkRate = report("postgres: COPY + upsert (bulk)", runPhase("pg-bulk", file, ""))
    report("postgres: its database work alone", runPhase("pg-db-only", file, ""))
    if (process.env.BENCH_SKIP_ROWS !== "1") {
      const rowRate = report("postgres: row-by-row INSERT", runPhase("pg-rows", file, ""))
      console.log(`bulk / row-by-row: ${(bulkRate / rowRate).toFixed(1)}x`)
    }
    const created = runPhase("pglite-init", file, join(dir, "pglite"))
    console.log(
      `${"pglite: create the database (once)".padEnd(34)} ${"-".padStart(9)}  ${created.seconds.toFixed(1).padStart(8)}  ${"".padStart(9)}  ${"".padStart(7)}  ${created.peakRssMb.toFixed(0).padStart(6)} MB`,
    )
    report("pglite (file): COPY + upsert", runPhase("pglite", file, join(dir, "pglite")))
    report("pglite: its database work alone", runPhase("pglite-db-only", file, join(dir, "pglite")))
  } finally {
    rmSync(dir, { recursive: true, force: true })
  }
}

const [mode, name, file, pgliteDir] = process.argv.slice(2)
if (mode === "phase" && name !== undefined && file !== undefined) await phase(name, file, pgliteDir ?? "")
// `generate FILE`: only write the input (for a phase run by hand).
else if (mode === "generate" && name !== undefined) await generate(name)
else await main()
