#!/usr/bin/env node
// salesintel-sandbox: serves the sandbox API until interrupted.
import { parseArgs } from "node:util"
import { loadAccountsFile, mergeAccounts } from "./Accounts.ts"
import type { FaultSettings } from "./Faults.ts"
import { startSandbox } from "./Server.ts"

const usage = `salesintel-sandbox: a local stand-in for the SalesIntel API

  --port <n>                 TCP port (default 8787; 0 = any free port)
  --host <addr>              interface to bind (default 127.0.0.1)
  --seed <n>                 dataset seed (default 42)
  --contacts <n>             number of contacts (default 100000)
  --companies <n>            number of companies (default 10000)
  --generation <n>           modification generation (default 0)
  --accounts <file.json>     extra accounts: {"accounts": [{"key", "permissions", "credits"}]}
  --latency-ms <n>           fixed latency added to every API answer
  --jitter-ms <n>            extra random latency in [0, n)
  --fault-rate <r>           share of requests answered 500
  --rate-limit-rate <r>      share of requests answered 429
  --retry-after <s>          Retry-After seconds on injected 429s (default 1)
  --drop-rate <r>            share of connections dropped without an answer
  --truncate-rate <r>        share of 200 bodies cut short
  --requests-per-minute <n>  per-key limit (default 1800; 0 = none)
  --no-match-id-rate <r>     share of contacts sent without match_id (the same ones every time)
  --duplicate-rate <r>       share of records sent twice on their page (each copy charged)
  --bad-field-rate <r>       share of contacts bought with job_level a number (the same ones every time)
  --duplicates               append without is_international returns a company once per country
  --help`

const options = {
  port: { type: "string" },
  host: { type: "string" },
  seed: { type: "string" },
  contacts: { type: "string" },
  companies: { type: "string" },
  generation: { type: "string" },
  accounts: { type: "string" },
  "latency-ms": { type: "string" },
  "jitter-ms": { type: "string" },
  "fault-rate": { type: "string" },
  "rate-limit-rate": { type: "string" },
  "retry-after": { type: "string" },
  "drop-rate": { type: "string" },
  "truncate-rate": { type: "string" },
  "requests-per-minute": { type: "string" },
  "no-match-id-rate": { type: "string" },
  "duplicate-rate": { type: "string" },
  "bad-field-rate": { type: "string" },
  duplicates: { type: "boolean" },
  help: { type: "boolean" },
} as const

/** Ends the process with one line on stderr: exit 2 for a usage error, 1 for anything else. */
const fail = (message: string, code: 1 | 2): never => {
  process.stderr.write(`salesintel-sandbox: ${message}${code === 2 ? " (see --help)" : ""}\n`)
  return process.exit(code)
}

const parse = () => {
  try {
    return parseArgs({ options })
  } catch (e) {
    // parseArgs names the flag; its message is the line to show, without a stack trace.
    return fail(e instanceof Error ? (e.message.split("\n")[0] ?? "") : String(e), 2)
  }
}
const { values } = parse()

if (values.help) {
  console.log(usage)
  process.exit(0)
}

const number = (name: keyof typeof values, integer = true): number | undefined => {
  const raw = values[name]
  if (raw === undefined || typeof raw !== "string") return undefined
  const n = Number(raw)
  if (!Number.isFinite(n) || n < 0 || (integer && !Number.isInteger(n))) {
    return fail(`--${name} must be a non-negative ${integer ? "integer" : "number"}, got '${raw}'`, 2)
  }
  return n
}

const faults: FaultSettings = Object.fromEntries(
  Object.entries({
    latency_ms: number("latency-ms", false),
    jitter_ms: number("jitter-ms", false),
    error_rate: number("fault-rate", false),
    rate_limit_rate: number("rate-limit-rate", false),
    retry_after_s: number("retry-after"),
    drop_rate: number("drop-rate", false),
    truncate_rate: number("truncate-rate", false),
    requests_per_minute: number("requests-per-minute"),
    no_match_id_rate: number("no-match-id-rate", false),
    duplicate_rate: number("duplicate-rate", false),
    bad_field_rate: number("bad-field-rate", false),
  }).filter(([, v]) => v !== undefined),
)

/** A failure to listen, said as the user would want it: which address, and what to do. */
const listenError = (e: unknown, host: string, port: number): string => {
  const code = (e as { code?: unknown } | null)?.code
  const address = `${host.includes(":") ? `[${host}]` : host}:${port}`
  switch (code) {
    case "EADDRINUSE":
      return `${address} is already in use (another sandbox?); choose another with --port, or --port 0 for any free port`
    case "EACCES":
      return `not allowed to listen on ${address}; ports below 1024 need privileges, choose another with --port`
    case "EADDRNOTAVAIL":
      return `cannot listen on ${host}: no such address on this machine; check --host`
    default:
      return `cannot listen on ${address}: ${e instanceof Error ? e.message : String(e)}`
  }
}

const started = performance.now()
const extraAccounts = (() => {
  if (values.accounts === undefined) return []
  try {
    return loadAccountsFile(values.accounts)
  } catch (e) {
    return fail(`--accounts: ${e instanceof Error ? e.message : String(e)}`, 1)
  }
})()
const port = number("port") ?? 8787
const host = values.host ?? "127.0.0.1"
const sandbox = await startSandbox({
  port,
  host,
  seed: number("seed"),
  contacts: number("contacts"),
  companies: number("companies"),
  generation: number("generation"),
  accounts: extraAccounts,
  faults,
  duplicates: values.duplicates ?? false,
}).catch((e: unknown) => fail(listenError(e, host, port), 1))
const d = sandbox.dataset
console.log(`SalesIntel sandbox serving ${sandbox.url}`)
console.log(
  `  dataset: seed ${d.seed}, ${d.contactCount} contacts, ${d.companyCount} companies, ${d.taxonomy.products.length} products (ready in ${Math.round(performance.now() - started)} ms)`,
)
console.log("  API keys (header X-CB-ApiKey, with Accept: application/json):")
for (const a of mergeAccounts(extraAccounts)) {
  console.log(
    `    ${a.key.padEnd(22)} ${(a.permissions.join(",") || "(no permissions)").padEnd(32)} ${a.credits} credits`,
  )
}
console.log(
  `  admin: GET ${sandbox.url}/_sandbox/accounts, POST /_sandbox/reset, POST /_sandbox/faults, POST /_sandbox/dataset`,
)

const stop = () => {
  sandbox.close().then(() => process.exit(0))
}
process.on("SIGINT", stop)
process.on("SIGTERM", stop)
