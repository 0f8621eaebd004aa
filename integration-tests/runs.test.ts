/**
 * What `_sync_runs` says, through the real commands in process, on each backend: an empty input
 * to `salesintel-pg load` (no message at all, `< /dev/null`) is a failed run with a clear message
 * and exit 1, never a success; and `salesintel status` lists the runs newest first by their number
 * (run 11 before run 9, whatever their ids say as text).
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { backends, open } from "../packages/postgres/src/testing/Backends.ts"
import { runInProcess } from "./bins.ts"

const slow = { timeout: 120_000 }

describe.each(await backends())("runs recorded on $name", (backend) => {
  let database: Awaited<ReturnType<typeof open>>
  beforeAll(async () => {
    database = await open(backend, "e2e runs")
    // PGlite's files are one user's at a time: the commands below open them.
    if (database.url === undefined) await database.suspend()
  })
  afterAll(async () => {
    await database?.close()
  })
  const target = () => [
    ...(database.url !== undefined
      ? ["--database-url", database.url]
      : ["--pglite-dir", String(database.pgliteDir)]),
    "--schema",
    database.schema,
  ]
  const load = (stdin: string) => runInProcess("salesintel-pg", ["load", ...target()], { env: {}, stdin })
  const status = async (limit: number) => {
    const ended = await runInProcess(
      "salesintel",
      ["status", "--json", "--limit", String(limit), ...target()],
      {
        env: {},
      },
    )
    expect(ended.stderr).toBe("")
    return JSON.parse(ended.stdout) as ReadonlyArray<{ readonly run: number; readonly status: string }>
  }
  // A STATE of the free taxonomy: a load with something in it.
  const oneState = `${JSON.stringify({
    type: "STATE",
    state: {
      type: "STREAM",
      stream: { stream_descriptor: { name: "taxonomy_categories" }, stream_state: {} },
    },
  })}\n`

  it("an empty input is a failed load: exit 1, a clear message, the run recorded failed", slow, async () => {
    const ended = await load("")
    expect(ended.code).toBe(1)
    expect(ended.stderr).toContain("the input was empty")
    const [run] = await status(1)
    expect(run?.status).toBe("failed")
  })

  it("status lists the runs by number, newest first, after 11 runs and more", slow, async () => {
    for (let n = 0; n < 11; n++) expect((await load(oneState)).code).toBe(0)
    const all = await status(100)
    expect(all.length).toBeGreaterThanOrEqual(11)
    const ids = all.map((run) => run.run)
    expect(ids).toEqual([...ids].sort((a, b) => b - a))
    const [newest] = ids
    expect((await status(3)).map((run) => run.run)).toEqual([newest, (newest ?? 0) - 1, (newest ?? 0) - 2])
  })
})
