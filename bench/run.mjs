#!/usr/bin/env node
// `npm run bench`: runs every benchmark, one process each, in a fixed order, and prints their
// reports. A benchmark is `bench/<name>.ts`, compiled by the build to `bench/dist/<name>.js`
// (never shipped with a package). Pass names to run a subset: `npm run bench -- page-latency`.
import { spawnSync } from "node:child_process"
import { existsSync } from "node:fs"
import { fileURLToPath } from "node:url"

const order = [
  "page-latency",
  "read-throughput",
  "first-incremental",
  "load-throughput",
  "observation-cost",
  "market-views",
  "sync-throughput",
  "sync-memory",
  "known-memory",
  "pglite-scale",
  "scale",
]
const filters = process.argv.slice(2)
const chosen = order.filter((name) => filters.length === 0 || filters.some((filter) => name.includes(filter)))
if (chosen.length === 0) {
  console.error(`no benchmark matched ${filters.join(", ")} (benchmarks: ${order.join(", ")})`)
  process.exit(2)
}
let failed = 0
for (const name of chosen) {
  const path = fileURLToPath(new URL(`./dist/${name}.js`, import.meta.url))
  if (!existsSync(path)) {
    console.error(`${path} is missing: run \`npm run build\` first`)
    process.exit(1)
  }
  console.log(`\n=== ${name}`)
  const result = spawnSync(process.execPath, ["--expose-gc", path], { stdio: "inherit" })
  if (result.status !== 0) failed++
}
process.exit(failed === 0 ? 0 : 1)
