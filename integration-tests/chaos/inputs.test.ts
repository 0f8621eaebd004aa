/**
 * Bad inputs and broken plumbing: a state that does not decode is refused (nothing bought), a
 * source that dies early in a pipe empties no table, a loader that dies in a pipe stops the
 * source's buying, and a database connection dropped mid-sync shows its real cause and loses
 * nothing the rerun cannot finish.
 */
import { spawn } from "node:child_process"
import { Catalog } from "@salesintel/airbyte"
import pg from "pg"
import { describe, expect, it } from "vitest"
import {
  bins,
  chaosFile,
  charged,
  databaseUrl,
  type Finished,
  fingerprint,
  query,
  record,
  runs,
  sigkillBound,
  sleep,
  start,
  sync,
  type Target,
  targetArgs,
  writeJson,
} from "./harness.ts"

const file = chaosFile()
const catalogPath = () => writeJson(Catalog.configuredAll("incremental"))
const fresh = (kind?: Target["kind"]) => file.fresh(kind)

/** `source-salesintel read` piped into `salesintel-pg load`, both real processes. */
const pipe = (target: Target, state?: string) => {
  const { configPath } = file
  const source = spawn(
    bins.source,
    ["read", "--config", configPath, "--catalog", catalogPath(), ...(state ? ["--state", state] : [])],
    { stdio: ["ignore", "pipe", "pipe"] },
  )
  const output = source.stdout
  if (output === null) throw new Error("the source has no stdout")
  // A pipe as a shell makes one: the loader reads the source's stdout itself, and this process
  // lets go of it, so when the loader dies the source's next write fails (EPIPE).
  const loader = start(bins.loader, ["load", ...targetArgs(target), "--catalog", catalogPath()], {
    stdin: output,
  })
  output.destroy()
  let sourceErr = ""
  source.stderr?.on("data", (chunk: Buffer) => {
    sourceErr += chunk.toString("utf8")
  })
  const sourceDone = new Promise<{ code: number | null; signal: NodeJS.Signals | null; stderr: string }>(
    (resolve) => source.on("close", (code, signal) => resolve({ code, signal, stderr: sourceErr })),
  )
  return { source, sourceDone, loader }
}

describe("state that does not decode", () => {
  const read = (state: unknown) =>
    start(bins.source, [
      "read",
      "--config",
      file.configPath,
      "--catalog",
      catalogPath(),
      "--state",
      writeJson(state),
    ]).done

  it.each([
    { name: "an unknown stream", state: { foo: 1 }, mentions: "foo" },
    {
      name: "a misspelled key",
      state: [
        { type: "STREAM", stream: { stream_descriptor: { name: "contacts" }, stream_state: { knwon: {} } } },
      ],
      mentions: "knwon",
    },
  ])("a state file with $name is refused, and nothing is bought", async ({ name, state, mentions }) => {
    const { provider: sandbox } = file
    sandbox.reset()
    const finished: Finished = await read(state)
    record({ case: `state file with ${name}`, exit: finished.code ?? "?", charged: charged(sandbox) })
    expect(finished.code).toBe(1)
    expect(finished.stdout).toContain("config_error")
    expect(finished.stdout).toContain(mentions)
    expect(charged(sandbox)).toBe(0)
  })

  it("a _state row that does not decode is refused by salesintel sync, and nothing is bought", async () => {
    const { provider: sandbox, configPath } = file
    const target = fresh()
    sandbox.reset()
    expect((await sync(target, configPath).done).code).toBe(0)
    await query(target, `UPDATE $schema._state SET state = '{"knwon": 1}'::jsonb WHERE stream = 'contacts'`)
    sandbox.reset()
    const finished = await sync(target, configPath).done
    record({
      case: "_state row with a misspelled key",
      exit: finished.code ?? "?",
      charged: charged(sandbox),
    })
    expect(finished.code).not.toBe(0)
    expect(finished.stderr + finished.stdout).toContain("knwon")
    expect(charged(sandbox)).toBe(0)
  })
})

describe("pipes", () => {
  it("a source that dies early empties no table, and the load fails", async () => {
    const { provider: sandbox, configPath } = file
    const target = fresh("pglite")
    sandbox.reset()
    expect((await sync(target, configPath).done).code).toBe(0)
    const before = await fingerprint(target)
    sandbox.reset()
    const { source, loader } = pipe(target)
    await sleep(300)
    source.kill("SIGKILL")
    const loaded = await loader.done
    record({
      case: "source killed early in a pipe",
      "load exit": loaded.code ?? "?",
      charged: charged(sandbox),
    })
    expect(loaded.code).not.toBe(0)
    const after = await fingerprint(target)
    expect(after.taxonomy_categories).toBe(before.taxonomy_categories)
    expect(after.taxonomy_products).toBe(before.taxonomy_products)
    const last = (await runs(target)).at(-1)
    expect(last?.status).toBe("failed")
  })

  it("a source killed while it buys (append_dedup) fails the load, which keeps what committed", async () => {
    const { provider: sandbox } = file
    const target = fresh()
    sandbox.reset()
    const { source, loader } = pipe(target)
    // Once a STATE of the contacts (append_dedup) has committed: the source dies mid-stream.
    await loader.saw('"name":"contacts"')
    source.kill("SIGKILL")
    const loaded = await loader.done
    const held = await query(target, "SELECT count(*)::int AS n FROM $schema.contacts")
    record({
      case: "source killed while buying, in a pipe",
      "load exit": loaded.code ?? "?",
      "contacts kept": Number(held[0]?.n ?? 0),
    })
    expect(loaded.code, loaded.stderr).toBe(1)
    expect(loaded.stderr).toMatch(/contacts had not reported its end/)
    expect(Number(held[0]?.n ?? 0)).toBeGreaterThan(0)
    const last = (await runs(target)).at(-1)
    expect(last?.status).toBe("failed")
  })

  it("a loader that dies stops the source's buying at once", async () => {
    const { provider: sandbox } = file
    const target = fresh()
    sandbox.reset()
    const { sourceDone, loader } = pipe(target)
    // Once contacts are being bought (a STATE of theirs committed), the loader dies.
    await loader.saw('"name":"contacts"')
    loader.child.kill("SIGKILL")
    const chargedAtKill = charged(sandbox)
    const source = await sourceDone
    const chargedAtExit = charged(sandbox)
    await sleep(1_000)
    record({
      case: "loader killed in a pipe",
      "source exit": source.code ?? String(source.signal),
      "charged at kill": chargedAtKill,
      "charged after": charged(sandbox),
    })
    expect(source.code).not.toBe(0)
    expect(source.stderr).not.toMatch(/\n\s+at /)
    expect(charged(sandbox)).toBe(chargedAtExit)
    expect(chargedAtExit - chargedAtKill).toBeLessThanOrEqual(sigkillBound)
  })
})

describe("the database connection dropped mid-sync", () => {
  it("shows the real cause, and the rerun ends with the reference's tables", async () => {
    const { provider: sandbox, configPath, reference } = file
    const target = fresh()
    sandbox.reset()
    const running = start(bins.salesintel, ["sync", "--config", configPath, ...targetArgs(target)])
    // Once contacts are being bought: a point in the buying (the taxonomy, read beside the
    // credited streams, may end before or after it).
    const deadline = Date.now() + 60_000
    while (charged(sandbox) < reference.credits * 0.3 && Date.now() < deadline) await sleep(2)
    // The run's session names its process in application_name ("... pid N"), for lock holders.
    const application = `%pid ${running.child.pid}`
    const client = new pg.Client({ connectionString: databaseUrl })
    await client.connect()
    const { rows } = await client.query(
      "SELECT pg_terminate_backend(pid) AS done FROM pg_stat_activity WHERE application_name LIKE $1",
      [application],
    )
    await client.end()
    const stopped = await running.done
    // The run's figures are what the provider was charged (the budget's count), pages in flight
    // when the connection went included: in the summary, and in the stream lines and the run row.
    const chargedByRun = charged(sandbox)
    const spentLine = /credits spent: (\d+)/.exec(stopped.stdout)
    const streamCredits = [...stopped.stdout.matchAll(/records\s+(\d+) credits/g)].reduce(
      (sum, match) => sum + Number(match[1]),
      0,
    )
    const [runRow] = await runs(target)
    const rowCredits = Object.values(
      JSON.parse(String(runRow?.streams ?? "{}")) as Record<string, { credits?: number }>,
    ).reduce((sum, stream) => sum + (stream.credits ?? 0), 0)
    const rerun = await sync(target, configPath).done
    const rebought = charged(sandbox) - reference.credits
    record({
      case: "database connection dropped",
      "backends ended": rows.length,
      exit: stopped.code ?? "?",
      "rerun exit": rerun.code ?? "?",
      "charged by the run": chargedByRun,
      "its summary said": spentLine?.[1] ?? "?",
      rebought,
    })
    expect(rows.length).toBeGreaterThan(0)
    expect(stopped.code).not.toBe(0)
    // The real cause, in the summary (stdout) or the error line (stderr).
    // The whole output in the message: a failure here must say what was said instead.
    const said = stopped.stdout + stopped.stderr
    expect(said, said).toMatch(/terminat|connection to the database was lost/i)
    expect(Number(spentLine?.[1]), said).toBe(chargedByRun)
    expect(streamCredits, said).toBe(chargedByRun)
    expect(rowCredits, said).toBe(chargedByRun)
    expect(runRow?.status).toBe("failed")
    expect(rerun.code, rerun.stderr).toBe(0)
    expect(await fingerprint(target)).toEqual(reference.tables)
    expect(rebought).toBeLessThanOrEqual(sigkillBound)
  })
})
