/**
 * Benchmark (npm run bench -- scale): a customer's size. The sandbox at 1,000,000 contacts (50,000
 * companies, no rate limit, no latency) and one search of about 260,000 contacts
 * (`job_levels: ["mgr"]`), the client's limit lifted (`requests_per_minute` 1,000,000), synced into
 * a fresh schema of the local Postgres with `salesintel sync` as a user runs it (its shebang's
 * node flags, under `/usr/bin/time -v`). It prints, each against its aim:
 *
 * - the first sync: wall time, peak RSS (aim: under 200 MB), credits;
 * - the contacts STATE as the sync saved it (`_state`): bytes, and bytes per contact held
 *   (aim: under 64 KB whatever the holdings);
 * - the STATE through the pipe (`source-salesintel read`, a first read of the search): the
 *   largest STATE line and all STATE lines' bytes, and bytes per id (aim: at most 5);
 * - a rerun with nothing new: wall, peak RSS, credits (aim: 0);
 * - a search added (`job_levels: ["dir"]`, about 150,000 contacts): a sync of both searches, which
 *   lists the held managers again and buys the directors: wall, peak RSS (aim: under 200 MB, as a
 *   sync whose memory does not grow with the ids it meets), credits (the directors). With
 *   `BENCH_BASELINE_BIN` it is also made by the baseline, alternately, twice each, the ledger and
 *   the state put back as they were before each;
 * - a rerun when the ledger holds every contact of the sandbox (the match ids of all 1,000,000,
 *   bought today, as a customer who bought them all over the years holds them): wall, peak RSS
 *   (aim: under 200 MB, as a sync whose memory does not grow with the holdings), credits (aim: 0).
 *   With `BENCH_BASELINE_BIN` (another checkout's `packages/cli/bin/salesintel.js`) that rerun is
 *   also made by the baseline, alternately, twice each;
 * - a SIGKILL when the sandbox has charged 90% of the search, then a rerun: the credits bought
 *   twice (aim: the README's bound, what was paid for and not yet committed: `concurrency` 64
 *   pages paid for and not yet passed on, the partitions reading ahead included, the page being
 *   mapped and the page the merge of the streams holds, x 50, plus three groups of checkpoints
 *   waiting for the loader, at most 500 records each: 4,800; with the rate limit lifted the loader
 *   is the slowest part, so this is where the groups are largest).
 *
 * It takes several minutes (five reads of the whole search, and the sync that adds a search). `BENCH_SCALE_CONTACTS` and
 * `BENCH_SCALE_COMPANIES` change the sandbox's size (e.g. 200000 for a quick look).
 */
import { spawn, spawnSync } from "node:child_process"
import { mkdtempSync, rmSync, writeFileSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { createInterface } from "node:readline"
import { fileURLToPath } from "node:url"
import { Dataset } from "@salesintel/sandbox"
import { PackedIds } from "@salesintel/source"
import pg from "pg"
import { commandLine } from "./command.ts"
import { accountCounts, post, startSandbox } from "./sandbox.ts"

// Compiled to bench/dist/: the packages are two folders up.
const cliBin = fileURLToPath(new URL("../../packages/cli/bin/salesintel.js", import.meta.url))
const sourceBin = fileURLToPath(new URL("../../packages/source/bin/source-salesintel.js", import.meta.url))
const contacts = Number(process.env.BENCH_SCALE_CONTACTS ?? 1_000_000)
const companies = Number(process.env.BENCH_SCALE_COMPANIES ?? 50_000)
const url = process.env.DATABASE_URL || "postgres://postgres@127.0.0.1:5432/test"
const schema = "salesintel_bench_scale"
const time = "/usr/bin/time"
// The kill bound (README.md, "What is guaranteed"): 64 pages the pager holds, the page being mapped
// and the page the merge holds, x 50, and three groups of at most 500 waiting for the loader.
const aims = { rssMb: 200, syncStateBytes: 64 * 1024, pipeBytesPerId: 5, rebought: (64 + 3) * 50 + 3 * 500 }

const query = async <A>(sql: string, values: ReadonlyArray<unknown> = []): Promise<ReadonlyArray<A>> => {
  const client = new pg.Client({ connectionString: url })
  await client.connect()
  try {
    return (await client.query(sql, [...values])).rows as ReadonlyArray<A>
  } finally {
    await client.end()
  }
}

const baselineBin = process.env.BENCH_BASELINE_BIN

const syncCommand = (configPath: string, bin = cliBin) => [
  process.execPath,
  ...commandLine(bin).flags,
  bin,
  "sync",
  "--config",
  configPath,
  "--database-url",
  url,
  "--schema",
  schema,
]

interface Measured {
  readonly seconds: number
  readonly peakRssMb: number
  readonly credits: number
}

/** A sync under /usr/bin/time -v, with the sandbox's charge for it. */
const timedSync = async (sandboxUrl: string, configPath: string, bin = cliBin): Promise<Measured> => {
  const before = (await accountCounts(sandboxUrl)).credits
  const started = performance.now()
  const result = spawnSync(time, ["-v", ...syncCommand(configPath, bin)], {
    encoding: "utf8",
    maxBuffer: 64 * 1024 * 1024,
    env: { ...process.env, ...commandLine(bin).env },
  })
  const seconds = (performance.now() - started) / 1000
  if (result.status !== 0) throw new Error(`sync failed (${result.status}):\n${result.stderr.slice(-4000)}`)
  const rss = /Maximum resident set size \(kbytes\): (\d+)/.exec(result.stderr)
  return {
    seconds,
    peakRssMb: rss?.[1] === undefined ? Number.NaN : Number(rss[1]) / 1024,
    credits: (await accountCounts(sandboxUrl)).credits - before,
  }
}

/** The contacts STATE as the sync saved it, and its bytes. */
const savedState = async () => {
  const [row] = await query<{ bytes: number; state: unknown }>(
    `SELECT octet_length(state::text) AS bytes, state FROM ${schema}._state WHERE stream = 'contacts'`,
  )
  return { bytes: Number(row?.bytes ?? 0), state: row?.state }
}

/**
 * The source through the pipe, a first read of the search (no state): the STATE lines it writes,
 * the largest and all of them (what a loader saves; `salesintel sync` saves the same STATEs).
 */
const pipeStates = async (configPath: string, directory: string) => {
  const catalogPath = join(directory, "catalog.json")
  const discovered = spawnSync(process.execPath, [sourceBin, "discover", "--config", configPath], {
    encoding: "utf8",
  })
  const catalogLine = discovered.stdout.split("\n").find((line) => line.includes('"CATALOG"')) ?? "{}"
  const catalog = JSON.parse(catalogLine) as { catalog: { streams: ReadonlyArray<{ name: string }> } }
  const contactsStream = catalog.catalog.streams.find((entry) => entry.name === "contacts")
  const configured = {
    streams: [{ stream: contactsStream, sync_mode: "incremental", destination_sync_mode: "append" }],
  }
  writeFileSync(catalogPath, JSON.stringify(configured))
  const args = [
    ...commandLine(sourceBin).flags,
    sourceBin,
    "read",
    "--config",
    configPath,
    "--catalog",
    catalogPath,
  ]
  const child = spawn(process.execPath, args, {
    stdio: ["ignore", "pipe", "inherit"],
    env: { ...process.env, ...commandLine(sourceBin).env },
  })
  let largest = 0
  let total = 0
  let count = 0
  for await (const line of createInterface({ input: child.stdout })) {
    if (!line.startsWith('{"type":"STATE"')) continue
    const bytes = Buffer.byteLength(line)
    largest = Math.max(largest, bytes)
    total += bytes
    count++
  }
  const code = await new Promise((resolve) => child.once("exit", resolve))
  if (code !== 0) throw new Error(`read failed (${code})`)
  return { largest, total, count }
}

/**
 * The sandbox's ids are an index scrambled by a multiplication, which packs better than ids drawn
 * at random: so the same count of random 32-bit ids is packed too, and set against the least any
 * encoding can take for them (log2 of the number of such sets, n (log2(2^32 / n) + log2 e) bits,
 * in base64's 4 characters per 3 bytes).
 */
const randomIdsPacked = (count: number) => {
  const ids = new Set<string>()
  while (ids.size < count)
    ids.add(
      `m-${Math.floor(Math.random() * 2 ** 32)
        .toString(36)
        .padStart(7, "0")}`,
    )
  const bytes = JSON.stringify(PackedIds.pack(ids)).length
  const leastBits = count * (Math.log2(2 ** 32 / count) + Math.log2(Math.E))
  return { perId: bytes / count, leastPerId: ((leastBits / 8) * 4) / 3 / count }
}

/**
 * Every contact of the sandbox held, bought today (those the sync bought keep their row): the
 * holdings of a customer who bought them all. The tables are the truth of what was bought, so each
 * is a contacts row (its key, its day; the fields a purchase would fill left empty) with its
 * ledger entry, as a load writes them. In slices, one statement each.
 */
const holdEverything = async () => {
  const dataset = Dataset.build({ contacts, companies })
  const today = new Date().toISOString()
  const client = new pg.Client({ connectionString: url })
  await client.connect()
  try {
    for (let start = 0; start < contacts; start += 50_000) {
      const ids = Array.from({ length: Math.min(50_000, contacts - start) }, (_, i) =>
        dataset.matchId(start + i),
      )
      await client.query(
        `WITH added AS (
           INSERT INTO ${schema}.contacts (match_id, fetched_at, "_synced_at")
           SELECT key, $2::timestamptz, now() FROM unnest($1::text[]) AS t(key)
           ON CONFLICT (match_id) DO NOTHING RETURNING match_id, fetched_at)
         INSERT INTO ${schema}._bought (stream, key, day)
         SELECT 'contacts', match_id, floor(extract(epoch from fetched_at) / 86400)::integer FROM added
         ON CONFLICT (stream, key) DO NOTHING`,
        [ids, today],
      )
    }
    const [row] = (await client.query(`SELECT count(*)::integer AS held FROM ${schema}._bought`)).rows
    return Number(row?.held ?? 0)
  } finally {
    await client.end()
  }
}

/** Each command of `order` (this checkout's, and the baseline's alternately when given), timed. */
const alternately = async (run: (bin: string) => Promise<Measured>) => {
  const runs: Array<{ readonly who: string; readonly measured: Measured }> = []
  const order = baselineBin === undefined ? [cliBin] : [cliBin, baselineBin, baselineBin, cliBin]
  for (const bin of order)
    runs.push({ who: bin === cliBin ? "this checkout" : "baseline", measured: await run(bin) })
  return runs
}

const kept = `${schema}_kept`

/**
 * Syncs of the search and another (`config`), each from the ledger and state as they stand now
 * (kept aside, put back before each run): what a customer who adds a search runs.
 */
const searchesAdded = async (sandboxUrl: string, configPath: string) => {
  await query(`DROP SCHEMA IF EXISTS ${kept} CASCADE; CREATE SCHEMA ${kept}`)
  await query(`CREATE TABLE ${kept}.bought AS SELECT * FROM ${schema}._bought`)
  await query(`CREATE TABLE ${kept}.state AS SELECT * FROM ${schema}._state`)
  // The ledger is the contacts table's index: the rows are put back with it (a run mends one from
  // the other).
  await query(`CREATE TABLE ${kept}.contacts AS SELECT * FROM ${schema}.contacts`)
  try {
    return await alternately(async (bin) => {
      await query(
        `TRUNCATE ${schema}._bought, ${schema}._state, ${schema}.contacts; INSERT INTO ${schema}._bought SELECT * FROM ${kept}.bought; INSERT INTO ${schema}._state SELECT * FROM ${kept}.state; INSERT INTO ${schema}.contacts SELECT * FROM ${kept}.contacts`,
      )
      await post(`${sandboxUrl}/_sandbox/reset`)
      return timedSync(sandboxUrl, configPath, bin)
    })
  } finally {
    await query(`DROP SCHEMA IF EXISTS ${kept} CASCADE`)
  }
}

/** Reruns over every contact held: this checkout's, and the baseline's alternately when given. */
const rerunsOverEverything = (sandboxUrl: string, configPath: string) =>
  alternately(async (bin) => {
    await post(`${sandboxUrl}/_sandbox/reset`)
    return timedSync(sandboxUrl, configPath, bin)
  })

/** Each run's wall, peak RSS and credits, under `what`. */
const measuredLines = (what: string, measured: Measured, credits: { aim: string; met: boolean }) => {
  line(`${what}: wall`, `${measured.seconds.toFixed(1)} s`, "(figure)", true)
  line(
    `${what}: peak RSS`,
    `${measured.peakRssMb.toFixed(0)} MB`,
    `under ${aims.rssMb} MB`,
    measured.peakRssMb < aims.rssMb,
  )
  line(`${what}: credits`, n(measured.credits), credits.aim, credits.met)
}

/** A sync killed (SIGKILL) once the sandbox has charged `share` of `total`, then run again. */
const killedThenRerun = async (sandboxUrl: string, configPath: string, total: number, share: number) => {
  await query(`DROP SCHEMA IF EXISTS ${schema} CASCADE`)
  await post(`${sandboxUrl}/_sandbox/reset`)
  const [command, ...args] = syncCommand(configPath)
  const child = spawn(command ?? process.execPath, args, {
    stdio: "ignore",
    env: { ...process.env, ...commandLine(cliBin).env },
  })
  const deadline = Date.now() + 15 * 60_000
  let charged = 0
  while (Date.now() < deadline && child.exitCode === null) {
    // A poll may meet a kept-alive socket the sandbox just closed: the next one asks again.
    charged = await accountCounts(sandboxUrl).then(
      (counts) => counts.credits,
      () => charged,
    )
    if (charged >= total * share) break
    await new Promise((resolve) => setTimeout(resolve, 50))
  }
  child.kill("SIGKILL")
  await new Promise((resolve) => child.once("exit", resolve))
  const beforeKill = (await accountCounts(sandboxUrl)).credits
  const rerun = await timedSync(sandboxUrl, configPath)
  return { beforeKill, rerun, rebought: beforeKill + rerun.credits - total }
}

const line = (what: string, figure: string, aim: string, met: boolean) =>
  console.log(`${what.padEnd(44)} ${figure.padStart(16)}   ${met ? "meets" : "MISSES"} ${aim}`)
const n = (value: number) => Math.round(value).toLocaleString("en-US")

const main = async () => {
  console.log(
    `scale: sandbox of ${n(contacts)} contacts and ${n(companies)} companies (no rate limit, no latency); one search job_levels=mgr; the client at 1,000,000 requests/min; into Postgres (${schema})`,
  )
  const { url: sandboxUrl, child } = await startSandbox([
    "--requests-per-minute",
    "0",
    "--contacts",
    String(contacts),
    "--companies",
    String(companies),
  ])
  const directory = mkdtempSync(join(tmpdir(), "salesintel-bench-scale-"))
  try {
    const configPath = join(directory, "config.json")
    const search = { name: "managers", filters: { job_levels: ["mgr"] } }
    const config = { api_key: "sandbox-full", base_url: sandboxUrl, credit_budget: 10_000_000 }
    writeFileSync(
      configPath,
      JSON.stringify({ ...config, requests_per_minute: 1_000_000, contacts: { searches: [search] } }),
    )
    await query(`DROP SCHEMA IF EXISTS ${schema} CASCADE`)
    await post(`${sandboxUrl}/_sandbox/reset`)
    const first = await timedSync(sandboxUrl, configPath)
    line("first sync: wall", `${first.seconds.toFixed(1)} s`, "(figure)", true)
    line(
      "first sync: peak RSS",
      `${first.peakRssMb.toFixed(0)} MB`,
      `under ${aims.rssMb} MB`,
      first.peakRssMb < aims.rssMb,
    )
    line("first sync: credits", n(first.credits), "(the search's contacts)", true)
    const saved = await savedState()
    // Every contact the first sync bought is held (the search is read once, nothing twice).
    const held = first.credits
    line(
      "sync STATE (contacts, in _state)",
      `${n(saved.bytes)} B`,
      "under 64 KB",
      saved.bytes < aims.syncStateBytes,
    )
    line("  per contact held", `${(saved.bytes / Math.max(1, held)).toFixed(2)} B`, `(${n(held)} held)`, true)
    await post(`${sandboxUrl}/_sandbox/reset`)
    const pipe = await pipeStates(configPath, directory)
    const perId = pipe.largest / Math.max(1, held)
    line(
      "pipe STATE: largest line",
      `${n(pipe.largest)} B`,
      `at most ${aims.pipeBytesPerId} B per id`,
      perId <= aims.pipeBytesPerId,
    )
    line(
      "  per id",
      `${perId.toFixed(2)} B`,
      `(${pipe.count} STATE lines, ${n(pipe.total)} B in all)`,
      perId <= aims.pipeBytesPerId,
    )
    const random = randomIdsPacked(held)
    line(
      "  the same count of random ids, packed",
      `${random.perId.toFixed(2)} B`,
      `(the least any encoding takes: ${random.leastPerId.toFixed(2)} B)`,
      random.perId <= aims.pipeBytesPerId,
    )
    await post(`${sandboxUrl}/_sandbox/reset`)
    const again = await timedSync(sandboxUrl, configPath)
    line("rerun, nothing new: wall", `${again.seconds.toFixed(1)} s`, "(figure)", true)
    line(
      "rerun, nothing new: peak RSS",
      `${again.peakRssMb.toFixed(0)} MB`,
      `under ${aims.rssMb} MB`,
      again.peakRssMb < aims.rssMb,
    )
    line("rerun, nothing new: credits", n(again.credits), "0", again.credits === 0)
    const addedPath = join(directory, "added.json")
    const directors = { name: "directors", filters: { job_levels: ["dir"] } }
    const bothSearches = { contacts: { searches: [search, directors] } }
    writeFileSync(addedPath, JSON.stringify({ ...config, requests_per_minute: 1_000_000, ...bothSearches }))
    for (const { who, measured } of await searchesAdded(sandboxUrl, addedPath))
      measuredLines(`a search added (${who})`, measured, { aim: "(the directors)", met: true })
    const everything = await holdEverything()
    for (const { who, measured } of await rerunsOverEverything(sandboxUrl, configPath))
      measuredLines(`rerun, ${n(everything)} held (${who})`, measured, {
        aim: "0",
        met: measured.credits === 0,
      })
    const killed = await killedThenRerun(sandboxUrl, configPath, first.credits, 0.9)
    line("SIGKILL at 90%: charged before the kill", n(killed.beforeKill), "(figure)", true)
    line(
      "SIGKILL at 90%: bought again by the rerun",
      n(killed.rebought),
      `at most ${n(aims.rebought)} ((64 + 3) pages + 3 groups)`,
      killed.rebought <= aims.rebought,
    )
  } finally {
    child.kill()
    rmSync(directory, { recursive: true, force: true })
    await query(`DROP SCHEMA IF EXISTS ${schema} CASCADE; DROP SCHEMA IF EXISTS ${kept} CASCADE`)
  }
}

await main()
