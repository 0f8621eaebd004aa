/**
 * The three bins as users run them, each run in process (integration-tests/bins.ts: the bin's
 * whole program on captured streams, milliseconds a run): help for people, usage errors as one
 * line on stderr with exit code 2 (and nothing on source-salesintel's stdout), --version, options
 * where users put them, clear messages for a bad database URL or schema; `sql` and `status` that
 * create nothing where there is no database, a `sync` whose invalid config creates nothing; and,
 * on a database synced from the sandbox, `sql` in its three formats, `status` per stream and as
 * JSON, `sync --full-refresh` (it buys again, on purpose), and `salesintel-pg load`'s STATE echo.
 * What only a process shows (its exit code, a terminal) is command-line.process.test.ts's.
 */
import { spawn } from "node:child_process"
import { existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { Database } from "@salesintel/postgres"
import * as Effect from "effect/Effect"
import { afterAll, beforeAll, describe, expect, it, vi } from "vitest"
import { backends, open } from "../packages/postgres/src/testing/Backends.ts"
import { contactMessages } from "../packages/postgres/src/testing/Records.ts"
import { type Bin, type Ended, runInProcess as run } from "./bins.ts"
import { fastPace, sandboxForFile, sharedKey } from "./sandbox.ts"

const commandsOf: Record<Bin, ReadonlyArray<string>> = {
  salesintel: ["sync", "sql", "status"],
  "source-salesintel": ["spec", "check", "discover", "read"],
  "salesintel-pg": ["load", "state"],
}

/** The start of every ANSI ansiEscape sequence (colour, bold). */
const ansiEscape = String.fromCharCode(27)

/** A usage error: exit 2, one line on stderr naming the bin, nothing on stdout, no dump. */
const expectUsageError = (ended: Ended, bin: Bin, says: RegExp) => {
  expect(ended.code).toBe(2)
  expect(ended.stdout).toBe("")
  expect(ended.stderr.split("\n")).toHaveLength(2) // one line and its newline
  expect(ended.stderr.startsWith(bin)).toBe(true)
  expect(ended.stderr).toMatch(says)
  expect(ended.stderr).not.toMatch(/_tag|Error:|ERROR/)
  expect(ended.stderr).not.toContain(ansiEscape)
}

// A sync, or a PGlite opened, takes seconds on a busy machine.
const slow = { timeout: 240_000 }

describe.each(Object.keys(commandsOf) as Array<Bin>)("%s on the command line", (bin) => {
  it("has help written for people, on every command, in plain text when piped", slow, async () => {
    const first = commandsOf[bin][0] ?? ""
    const [top, version, versionAfter, helpOf, dashH, ...each] = await Promise.all([
      run(bin, ["--help"]),
      run(bin, ["--version"]),
      run(bin, [first, "--version"]),
      run(bin, ["help", first]),
      run(bin, ["-h", first]),
      ...commandsOf[bin].map((name) => run(bin, [name, "--help"])),
    ])
    expect(top?.code).toBe(0)
    for (const name of commandsOf[bin]) expect(top?.stdout).toMatch(new RegExp(`\\n  ${name} +\\S`))
    expect(top?.stdout).toContain("Examples:")
    expect(version?.stdout).toBe("0.1.0\n")
    expect(versionAfter?.stdout).toBe("0.1.0\n")
    expect(helpOf?.stdout).toBe(each[0]?.stdout)
    expect(dashH?.stdout).toBe(each[0]?.stdout)
    commandsOf[bin].forEach((name, index) => {
      const help = each[index]
      expect(help?.code).toBe(0)
      expect(help?.stderr).toBe("")
      expect(help?.stdout).toContain(`Usage:\n  ${bin} ${name}`)
      expect(help?.stdout).toContain("Examples:")
      expect(help?.stdout).toContain("--log-format FORMAT")
    })
    for (const help of [top, ...each]) {
      expect(help?.stdout).not.toContain(ansiEscape)
      expect(help?.stdout).not.toMatch(
        /A user-defined piece of text|This setting is optional|--wizard|--completions/,
      )
    }
  })

  it("reports usage errors in one line on stderr with exit code 2", slow, async () => {
    const command = commandsOf[bin][1] ?? ""
    const cases: ReadonlyArray<readonly [ReadonlyArray<string>, RegExp]> = [
      [[], /missing command/],
      [["nosuch"], /no command 'nosuch'/],
      [["help", "nosuch"], /no command 'nosuch'/],
      [["--wizard"], /unknown option --wizard/],
      [[command, "--bogus"], new RegExp(`^${bin} ${command}: .*--`)],
      [[command, "--log-level", "loud"], /--log-level 'loud'/],
    ]
    const ended = await Promise.all(cases.map(([args]) => run(bin, args)))
    cases.forEach(([, says], index) => {
      const one = ended[index]
      if (one !== undefined) expectUsageError(one, bin, says)
    })
  })
})

describe("usage errors of source-salesintel leave its stdout (the protocol's) empty", () => {
  it("for a missing option, an unknown one, an extra argument", slow, async () => {
    const ended = await Promise.all(
      [["read"], ["read", "--config", "c.json"], ["check", "--bogus"], ["spec", "extra"]].map((args) =>
        run("source-salesintel", args),
      ),
    )
    for (const one of ended) expectUsageError(one, "source-salesintel", /^source-salesintel \w+: /)
    expect(ended[0]?.stderr).toContain(
      "Expected to find option: '--config'; Expected to find option: '--catalog'",
    )
  })
})

describe("a bad value names its option, and what was expected", () => {
  it(
    "--format, --limit, --max-width, SQL with no statement in it, an option left without its value",
    slow,
    async () => {
      const cases: ReadonlyArray<readonly [ReadonlyArray<string>, RegExp]> = [
        [["sql", "--format", "xml", "select 1"], /--format 'xml': expected table, csv or json/],
        [["status", "--limit", "x"], /--limit 'x': expected how many runs, a whole number from 1/],
        [["status", "--limit", "0"], /--limit '0': expected/],
        [["sql", "--max-width", "x", "select 1"], /--max-width 'x': expected a width/],
        [["sql", ""], /SQL: expected one or more statements, got none/],
        [["sql", " ; ;"], /SQL: expected one or more statements, got none/],
        [
          ["sync", "--config", "c.json", "--full-refresh"],
          /sync: --full-refresh needs a value \(LIST\), got none/,
        ],
        [
          ["sync", "--config", "c.json", "--full-refresh", "--wait"],
          /--full-refresh needs a value \(LIST\), got the option --wait/,
        ],
        [["plan", "--full-refresh", "--quick", "--config", "c.json"], /--full-refresh needs a value/],
        [
          ["sql", "--pglite-dir", "--format", "csv", "select 1"],
          /--pglite-dir needs a value \(DIR\), got the option --format/,
        ],
      ]
      const ended = await Promise.all(cases.map(([args]) => run("salesintel", args)))
      cases.forEach(([, says], index) => {
        const one = ended[index]
        if (one !== undefined) expectUsageError(one, "salesintel", says)
      })
    },
  )
})

describe("a config that does not hold is refused in the user's words, naming the field", () => {
  it(
    "a list given as one value, a file that is not JSON, a number JSON cannot read exactly",
    slow,
    async () => {
      const cwd = mkdtempSync(join(tmpdir(), "salesintel-cli-config-"))
      const write = (name: string, text: string) => {
        writeFileSync(join(cwd, name), text)
        return name
      }
      const cases: ReadonlyArray<readonly [string, string, RegExp]> = [
        [
          "levels.json",
          '{"api_key": "k", "credit_budget": 100, "contacts": {"searches": [{"name": "a", "filters": {"job_levels": "vp"}}]}}',
          /contacts\.searches\[0\]\.filters\.job_levels: Expected a list of codes \(brd, chf, vp, dir, mgr, stf\)/,
        ],
        [
          "syntax.json",
          '{"api_key": "k",\n credit_budget: 100}',
          /the config file syntax\.json is not valid JSON at line 2, column 2/,
        ],
        [
          "large.json",
          '{"api_key": "k", "credit_budget": 9007199254740993}',
          /credit_budget is a whole number too large to be read exactly/,
        ],
      ]
      for (const [name, text, says] of cases) {
        write(name, text)
        for (const command of ["plan", "sync"]) {
          const ended = await run(
            "salesintel",
            [command, "--config", name, "--pglite-dir", join(cwd, "db")],
            { cwd },
          )
          expect(ended.code).toBe(1)
          expect(ended.stderr).toMatch(says)
          expect(ended.stderr).not.toMatch(
            /ReadonlyArray|double-quoted property name in JSON at position|9007199254740992/,
          )
        }
      }
      // Nothing was created for any of them.
      expect(existsSync(join(cwd, "db"))).toBe(false)
      rmSync(cwd, { recursive: true, force: true })
    },
  )
})

describe("database options", () => {
  it(
    "checks --database-url and --schema when parsing, naming the option (the password never shown)",
    slow,
    async () => {
      await Promise.all(
        (
          [
            ["salesintel", "status"],
            ["salesintel-pg", "state"],
          ] as const
        ).map(async ([bin, command]) => {
          const [notUrl, mysql, schema] = await Promise.all([
            run(bin, [command, "--database-url", "not a url"]),
            run(bin, [command, "--database-url", "mysql://me:s3cret@host/db"]),
            run(bin, [command, "--schema", ""]),
          ])
          if (notUrl === undefined || mysql === undefined || schema === undefined) throw new Error("not run")
          expectUsageError(notUrl, bin, /--database-url .*expected a URL like postgres:\/\//)
          expectUsageError(mysql, bin, /expected a postgres:\/\/ or postgresql:\/\/ URL/)
          expect(mysql.stderr).not.toContain("s3cret")
          expectUsageError(schema, bin, /--schema '': expected a schema name/)
        }),
      )
    },
  )

  it("sql, status and salesintel-pg state create nothing where there is no database", slow, async () => {
    const cwd = mkdtempSync(join(tmpdir(), "salesintel-cli-nodb-"))
    const empty = join(cwd, "empty")
    mkdirSync(empty)
    const all = await Promise.all([
      ...[
        ["sql", "select 1"],
        ["status"],
        ["sql", "--pglite-dir", "typo", "select 1"],
        ["status", "--pglite-dir", "empty", "--log-level", "debug"],
      ].map((args) => run("salesintel", args, { cwd })),
      run("salesintel-pg", ["state", "--pglite-dir", "typo"], { cwd }),
      run("salesintel-pg", ["state", "--pglite-dir", "empty"], { cwd }),
    ])
    for (const ended of all) {
      expect(ended.code).toBe(1)
      expect(ended.stdout).toBe("")
      expect(ended.stderr).toMatch(/^salesintel(-pg)?: no embedded database in \S+: .*nothing was created/)
    }
    expect(readdirSync(cwd)).toEqual(["empty"])
    expect(readdirSync(empty)).toEqual([])
    rmSync(cwd, { recursive: true, force: true })
  })

  it("sync creates no database when its config does not validate", slow, async () => {
    const cwd = mkdtempSync(join(tmpdir(), "salesintel-cli-badconfig-"))
    writeFileSync(join(cwd, "config.json"), JSON.stringify({ api_key: "k", credit_budget: -1 }))
    const ended = await run("salesintel", ["sync", "--config", "config.json"], { cwd })
    expect(ended.code).toBe(1)
    expect(ended.stderr).toMatch(/^salesintel: .*credit_budget/)
    expect(readdirSync(cwd)).toEqual(["config.json"])
    const unknown = await run("salesintel", ["sync", "--config", "config.json", "--full-refresh", "nosuch"], {
      cwd,
    })
    expect(unknown.stderr).toMatch(/unknown stream nosuch in --full-refresh/)
    expect(existsSync(join(cwd, ".salesintel"))).toBe(false)
    rmSync(cwd, { recursive: true, force: true })
  })
})

describe("on a database synced from the sandbox", () => {
  const sandbox = sandboxForFile({ seed: 7, contacts: 3_000, companies: 300 })
  let cwd: string
  let target: ReadonlyArray<string>
  beforeAll(async () => {
    cwd = mkdtempSync(join(tmpdir(), "salesintel-cli-synced-"))
    target = ["--pglite-dir", join(cwd, "db")]
    writeFileSync(
      join(cwd, "config.json"),
      JSON.stringify({
        api_key: "sandbox-full",
        base_url: sandbox.url,
        credit_budget: 5_000,
        requests_per_minute: fastPace,
        contacts: { searches: [{ name: "vps", filters: { job_levels: ["vp"] } }] },
        companies: { domains: sandbox.dataset.companies.slice(0, 5).map((company) => company.domain) },
      }),
    )
  })

  afterAll(() => {
    rmSync(cwd, { recursive: true, force: true })
  })

  // Every sync of these cases asks with the config file's key: each case reads what it added.
  const charged = () => sandbox.charged(sharedKey)
  const sql = (...args: ReadonlyArray<string>) => run("salesintel", ["sql", ...target, ...args], { cwd })
  const status = async () => {
    const ended = await run("salesintel", ["status", "--json", ...target], { cwd })
    expect(ended.code).toBe(0)
    return JSON.parse(ended.stdout) as ReadonlyArray<{
      readonly run: number
      readonly status: string
      readonly records: number
      readonly credits: number
      readonly streams: Readonly<Record<string, { readonly records: number; readonly credits: number }>>
    }>
  }
  const contactsIn = async () => {
    const ended = await sql("--format", "json", "select count(*)::int as n from contacts")
    return (JSON.parse(ended.stdout) as ReadonlyArray<{ n: number }>)[0]?.n
  }

  it("sync, then status per stream and as JSON", slow, async () => {
    const synced = await run(
      "salesintel",
      ["sync", "--config", "config.json", ...target, "--log-format", "json"],
      {
        cwd,
      },
    )
    expect(synced.code).toBe(0)
    expect(synced.stdout).toContain("sync succeeded")
    // With --log-format json every line on stderr is a JSON object (log lines and progress).
    const logLines = synced.stderr.split("\n").filter((line) => line.length > 0)
    expect(logLines.length).toBeGreaterThan(0)
    for (const line of logLines) expect(JSON.parse(line)).toMatchObject({ logLevel: expect.any(String) })

    const runs = await status()
    expect(runs).toHaveLength(1)
    const [first] = runs
    expect(first?.status).toBe("succeeded")
    expect(first?.streams.contacts?.records).toBe(await contactsIn())
    expect(first?.streams.companies?.records).toBe(5)
    expect(first?.credits).toBe(charged())
    expect(first?.streams.contacts?.credits).toBeGreaterThan(0)

    const table = await run("salesintel", ["status", ...target], { cwd })
    expect(table.stdout).toMatch(
      /^run \| started +\| finished +\| status +\| stream +\| records \| credits \| error/,
    )
    expect(table.stdout).toMatch(/\| succeeded \| contacts +\| +\d+ \| +\d+ \|/)
    expect(table.stdout).toMatch(/\| succeeded \| companies +\| +5 \| +5 \|/)
  })

  it("sql: every statement, as a table, CSV or JSON, nothing cut unless asked", slow, async () => {
    const statements = `select 1 as a, null as b, '' as c; select 'x,"y"' as d, repeat('z', 200) as long`
    const table = await sql(statements)
    expect(table.code).toBe(0)
    expect(table.stdout).toBe(
      [
        "a | b    | c",
        "--+------+--",
        "1 | NULL |",
        "(1 row)",
        "",
        "d     | long",
        `------+-${"-".repeat(200)}`,
        `x,"y" | ${"z".repeat(200)}`,
        "(1 row)",
        "",
      ].join("\n"),
    )
    expect((await sql("--max-width", "10", "select repeat('z', 200) as long")).stdout).toContain(
      `${"z".repeat(9)}…\n`,
    )
    expect((await sql("--format", "csv", statements)).stdout).toBe(
      `a,b,c\r\n1,,""\r\n\nd,long\r\n"x,""y""",${"z".repeat(200)}\r\n`,
    )
    expect((await sql("--format", "json", statements)).stdout).toBe(
      `[{"a":1,"b":null,"c":""}]\n[{"d":"x,\\"y\\"","long":"${"z".repeat(200)}"}]\n`,
    )
    const missing = await sql("--schema", "elsewhere", "select 1")
    expect(missing.code).toBe(1)
    expect(missing.stderr).toMatch(/^salesintel: there is no schema "elsewhere"/)
  })

  it("a plain sync buys nothing again; --full-refresh re-buys the streams it names", {
    timeout: 480_000,
  }, async () => {
    const before = charged()
    const plain = await run("salesintel", ["sync", "--config", "config.json", ...target], { cwd })
    expect(plain.code).toBe(0)
    expect(charged()).toBe(before)

    const refused = await run(
      "salesintel",
      ["sync", "--config", "config.json", ...target, "--streams", "companies", "--full-refresh", "contacts"],
      { cwd },
    )
    expect(refused.code).toBe(1)
    expect(refused.stderr).toContain("--full-refresh contacts: not among the streams synced")
    expect(charged()).toBe(before)

    const contacts = await contactsIn()
    const full = await run(
      "salesintel",
      ["sync", "--config", "config.json", ...target, "--full-refresh", "contacts"],
      {
        cwd,
      },
    )
    expect(full.code).toBe(0)
    // Every contact bought again (a credit each); companies stayed incremental (nothing bought).
    const [latest] = await status()
    expect(latest?.streams.contacts?.records).toBe(contacts)
    expect(latest?.streams.contacts?.credits).toBe(contacts)
    expect(latest?.streams.companies?.credits ?? 0).toBe(0)
    expect(charged() - before).toBe(contacts)
    expect(await contactsIn()).toBe(contacts)

    // And the next plain sync is incremental again: nothing bought.
    const after = charged()
    expect((await run("salesintel", ["sync", "--config", "config.json", ...target], { cwd })).code).toBe(0)
    expect(charged()).toBe(after)
  })

  it(
    "sql, status, report and plan wait with --wait while another run holds the PGlite directory",
    slow,
    async () => {
      // Another run holds the directory: a live process named in its lock file.
      const holder = spawn(process.execPath, ["-e", "setTimeout(() => {}, 120000)"], { stdio: "ignore" })
      const lockFile = join(cwd, "db", "salesintel.lock")
      writeFileSync(
        lockFile,
        `${JSON.stringify({ pid: holder.pid, since: new Date().toISOString(), command: "a test" })}\n`,
      )
      try {
        const refused = await sql("select 1 as one")
        expect(refused.code).toBe(1)
        expect(refused.stderr).toMatch(/in use by another run \(pid \d+ \(a test\).*pass --wait/)
        // The holder is let go once the waiting command has said that it waits (however busy the machine).
        let saidItWaits: () => void = () => {}
        const said = new Promise<void>((resolve) => {
          saidItWaits = resolve
        })
        const waiting = run("salesintel", ["sql", ...target, "--wait", "select 1 as one"], {
          cwd,
          onStderr: (stderr) => {
            if (/waiting for it to end/.test(stderr)) saidItWaits()
          },
        })
        await said
        holder.kill()
        const waited = await waiting
        expect(waited.code).toBe(0)
        expect(waited.stdout).toContain("(1 row)")
        // It said that it waits, and for whom (a log line on stderr).
        expect(waited.stderr).toMatch(/in use by another run \(pid \d+ \(a test\).*waiting for it to end/)
      } finally {
        holder.kill()
        rmSync(lockFile, { force: true })
      }
      // Each of the others takes the option (the directory is free now, so none has to wait).
      const others = [
        await run("salesintel", ["status", "--wait", ...target], { cwd }),
        await run("salesintel", ["report", "--wait", ...target, "--out", join(cwd, "waited.html")], { cwd }),
        await run("salesintel", ["plan", "--wait", "--quick", "--config", "config.json", ...target], { cwd }),
      ]
      for (const ended of others) expect([ended.code, ended.stderr]).toEqual([0, expect.any(String)])
    },
  )

  it(
    "plan and sync take the key from SALESINTEL_API_KEY or api_key_file, and never print it",
    slow,
    async () => {
      const { api_key: _, ...keyless } = JSON.parse(readFileSync(join(cwd, "config.json"), "utf8")) as Record<
        string,
        unknown
      >
      writeFileSync(join(cwd, "keyless.json"), JSON.stringify(keyless))
      mkdirSync(join(cwd, "secrets"), { recursive: true })
      writeFileSync(join(cwd, "secrets", "key"), "sandbox-full\n")
      writeFileSync(join(cwd, "keyfile.json"), JSON.stringify({ ...keyless, api_key_file: "secrets/key" }))
      const plan = (config: string, env: Readonly<Record<string, string>> = {}) =>
        run("salesintel", ["plan", "--quick", "--config", config, ...target], { cwd, env })
      const [none, fromEnv, fromFile] = [
        await plan("keyless.json"),
        await plan("keyless.json", { SALESINTEL_API_KEY: "sandbox-full" }),
        await plan("keyfile.json", { SALESINTEL_API_KEY: "sandbox-none" }),
      ]
      expect(none.code).toBe(1)
      expect(none.stderr).toContain(
        "api_key: is missing: give api_key or api_key_file in the config, or set SALESINTEL_API_KEY",
      )
      for (const ended of [fromEnv, fromFile]) {
        expect([ended.code, ended.stdout]).toEqual([0, expect.stringMatching(/^plan \(quick\)/)])
        expect(ended.stdout + ended.stderr).not.toContain("sandbox-full")
      }
      // The file's key won over the variable's (which the sandbox would refuse), and the run said so.
      expect(fromFile.stderr).toContain(
        "the config's api_key_file is used; SALESINTEL_API_KEY is set too, and ignored",
      )
      const synced = await run("salesintel", ["sync", "--config", "keyless.json", ...target], {
        cwd,
        env: { SALESINTEL_API_KEY: "sandbox-full" },
      })
      expect([synced.code, synced.stdout]).toEqual([0, expect.stringContaining("sync succeeded")])
      expect(synced.stdout + synced.stderr).not.toContain("sandbox-full")
    },
  )

  it("sync and plan say which database they use when none was named", slow, async () => {
    const elsewhere = mkdtempSync(join(tmpdir(), "salesintel-cli-unnamed-"))
    writeFileSync(join(elsewhere, "config.json"), readFileSync(join(cwd, "config.json")))
    const planned = await run("salesintel", ["plan", "--quick", "--config", "config.json"], {
      cwd: elsewhere,
    })
    expect(planned.code).toBe(0)
    expect(planned.stderr).toContain(
      "no --database-url: reading the saved state of the embedded PGlite database at ./.salesintel/pglite",
    )
    const synced = await run("salesintel", ["sync", "--config", "config.json", "--streams", "companies"], {
      cwd: elsewhere,
    })
    expect(synced.code).toBe(0)
    expect(synced.stderr).toContain(
      "no --database-url: writing to the embedded PGlite database at ./.salesintel/pglite",
    )
    expect(existsSync(join(elsewhere, ".salesintel", "pglite", "PG_VERSION"))).toBe(true)
    // Named, it goes without saying.
    const named = await run("salesintel", ["plan", "--quick", "--config", "config.json", ...target], { cwd })
    expect(named.stderr).not.toContain("no --database-url")
    rmSync(elsewhere, { recursive: true, force: true })
  })

  it("salesintel-pg state prints what the syncs saved", slow, async () => {
    const state = await run("salesintel-pg", ["state", ...target], { cwd })
    expect(state.code).toBe(0)
    const names = (
      JSON.parse(state.stdout) as ReadonlyArray<{ stream: { stream_descriptor: { name: string } } }>
    ).map((entry) => entry.stream.stream_descriptor.name)
    expect(names).toEqual(expect.arrayContaining(["contacts", "companies"]))
  })
})

describe("salesintel-pg load's stdout", () => {
  it(
    "carries the committed STATE messages in a pipe (on a terminal: command-line.process.test.ts)",
    slow,
    async () => {
      const dir = mkdtempSync(join(tmpdir(), "salesintel-pg-piped-"))
      const input = contactMessages(6, 2)
        .map((message) => `${JSON.stringify(message)}\n`)
        .join("")
      const piped = await run("salesintel-pg", ["load", "--pglite-dir", join(dir, "piped")], { stdin: input })
      expect(piped.code).toBe(0)
      expect(
        piped.stdout
          .trim()
          .split("\n")
          .map((line) => JSON.parse(line).type),
      ).toEqual(["STATE", "STATE", "STATE"])
      rmSync(dir, { recursive: true, force: true })
    },
  )
})

describe.each(await backends())("salesintel sql on $name", (backend) => {
  it("shows every column of a result, even those that share a name", slow, async () => {
    const db = await open(backend, "cli sql columns")
    const schema = `"${db.schema}"`
    await db.run(
      Effect.flatMap(Database.Database, (database) =>
        database.exec(
          `CREATE SCHEMA ${schema}; CREATE TABLE ${schema}.t (x int); INSERT INTO ${schema}.t VALUES (1), (2), (2)`,
        ),
      ),
    )
    const target = db.url === undefined ? ["--pglite-dir", db.pgliteDir ?? ""] : ["--database-url", db.url]
    // PGlite's files are one process's at a time: the bin's, while it runs.
    await db.suspend()
    try {
      const sql = (...args: ReadonlyArray<string>) =>
        run("salesintel", ["sql", ...target, "--schema", db.schema, ...args])
      // One after the other: a PGlite directory is one process's at a time.
      const counts = await sql("select count(*), count(distinct x) from t")
      const csv = await sql("--format", "csv", "select 1 as a, 2 as a")
      const json = await sql("--format", "json", "select 1 as a, 2 as a, 3 as b")
      const join = await sql("select t.x, u.x from t join t as u on u.x > t.x")
      expect(counts.stdout.split("\n").slice(0, 3)).toEqual([
        "count | count",
        "------+------",
        "    3 |     2",
      ])
      expect(csv.stdout).toBe("a,a\r\n1,2\r\n")
      expect(JSON.parse(json.stdout)).toEqual([{ a: 1, a_2: 2, b: 3 }])
      expect(join.stdout.split("\n").slice(0, 3)).toEqual(["x | x", "--+--", "1 | 2"])
    } finally {
      await db.resume()
      await db.close()
    }
  })

  it("prints every value as Postgres's own text, whatever the process's time zone", slow, async () => {
    const db = await open(backend, "cli sql text")
    await db.run(
      Effect.flatMap(Database.Database, (database) => database.exec(`CREATE SCHEMA "${db.schema}"`)),
    )
    const target = db.url === undefined ? ["--pglite-dir", db.pgliteDir ?? ""] : ["--database-url", db.url]
    await db.suspend()
    // The time zone is the process's, and the command runs in this one: set here, for this test.
    vi.stubEnv("TZ", "Europe/Berlin")
    try {
      // Berlin is an hour ahead of UTC in November: a date read as a JavaScript Date was shown a day early.
      expect(new Date("2026-11-26T00:00:00Z").getTimezoneOffset()).toBe(-60)
      const sql = (...args: ReadonlyArray<string>) =>
        run("salesintel", ["sql", ...target, "--schema", db.schema, ...args])
      const values =
        "select date '2026-11-26' as d, timestamp '2026-11-26 10:00' as ts, timestamptz '2026-11-26 10:00+00' as tz, interval '1 day 2 hours' as i, array['a', 'b c']::text[] as arr, true as b, 1.50::numeric as n, 2 as k, 9007199254740993::int8 as big, '{\"x\": [1]}'::jsonb as j"
      const table = await sql(values)
      const csv = await sql("--format", "csv", values)
      const json = await sql("--format", "json", values)
      // timestamptz is shown in the server's TimeZone setting, as psql shows it.
      const serverText = await sql(
        "--format",
        "csv",
        "select (timestamptz '2026-11-26 10:00+00')::text as tz",
      )
      const tz = serverText.stdout.split("\r\n")[1] ?? ""
      expect(tz).toMatch(/^2026-11-26 \d\d:00:00[+-]\d\d(:\d\d)?$/)
      expect(table.code).toBe(0)
      const [header, , row] = table.stdout.split("\n")
      expect(header?.split("|").map((cell) => cell.trim())).toEqual([
        "d",
        "ts",
        "tz",
        "i",
        "arr",
        "b",
        "n",
        "k",
        "big",
        "j",
      ])
      expect(row?.split("|").map((cell) => cell.trim())).toEqual([
        "2026-11-26",
        "2026-11-26 10:00:00",
        tz,
        "1 day 02:00:00",
        '{a,"b c"}',
        "t",
        "1.50",
        "2",
        "9007199254740993",
        '{"x": [1]}',
      ])
      expect(csv.stdout.split("\r\n")[1]).toBe(
        `2026-11-26,2026-11-26 10:00:00,${tz},1 day 02:00:00,"{a,""b c""}",t,1.50,2,9007199254740993,"{""x"": [1]}"`,
      )
      expect(JSON.parse(json.stdout)).toEqual([
        {
          d: "2026-11-26",
          ts: "2026-11-26 10:00:00",
          tz,
          i: "1 day 02:00:00",
          arr: '{a,"b c"}',
          b: true,
          n: "1.50",
          k: 2,
          big: "9007199254740993",
          j: { x: [1] },
        },
      ])
    } finally {
      vi.unstubAllEnvs()
      await db.resume()
      await db.close()
    }
  })
})

describe.each(await backends())("salesintel sync with a key the provider refuses, on $name", (backend) => {
  const sandbox = sandboxForFile({ seed: 3, contacts: 200, companies: 20 })
  it("checks the key with a free request before it opens the target: nothing is created", slow, async () => {
    const db = await open(backend, "cli refused key")
    const cwd = mkdtempSync(join(tmpdir(), "salesintel-cli-refused-"))
    try {
      writeFileSync(
        join(cwd, "config.json"),
        JSON.stringify({
          api_key: "not-a-sandbox-key",
          base_url: sandbox.url,
          credit_budget: 100,
          contacts: { searches: [{ name: "vps", filters: { job_levels: ["vp"] } }] },
        }),
      )
      const target = db.url === undefined ? ["--pglite-dir", db.pgliteDir ?? ""] : ["--database-url", db.url]
      const ended = await run(
        "salesintel",
        ["sync", "--config", "config.json", ...target, "--schema", db.schema],
        {
          cwd,
        },
      )
      expect(ended.code).toBe(1)
      expect(ended.stderr).toMatch(/^salesintel: people\.preview \(GET \S+, HTTP 401\) rejected the API key/m)
      expect(ended.stderr).toContain("nothing was created or bought")
      expect(ended.stderr + ended.stdout).not.toContain("not-a-sandbox-key")
      if (db.pgliteDir !== undefined) expect(readdirSync(db.pgliteDir)).toEqual([])
      else expect(await db.query("SELECT 1 FROM pg_namespace WHERE nspname = $1", [db.schema])).toEqual([])
    } finally {
      await db.close()
      rmSync(cwd, { recursive: true, force: true })
    }
  })
})
