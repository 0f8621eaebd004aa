#!/usr/bin/env node
// `npm run bench`: runs every package's benchmarks, one process each, in a fixed order, and
// prints their reports. A benchmark is a compiled file `packages/<pkg>/dist/bench/*.js`
// (its source is `packages/<pkg>/src/bench/*.ts`). Pass names to run a subset:
// `npm run bench -- sandbox` or `npm run bench -- page-latency`.
import { spawnSync } from "node:child_process"
import { existsSync, readdirSync } from "node:fs"
import { join } from "node:path"

const order = ["core", "sandbox", "source", "postgres", "cli"]
const filters = process.argv.slice(2)
const benches = []
for (const pkg of order) {
  const dir = join("packages", pkg, "dist", "bench")
  if (!existsSync(dir)) continue
  for (const file of readdirSync(dir).sort()) {
    if (!file.endsWith(".js")) continue
    const path = join(dir, file)
    if (filters.length === 0 || filters.some((f) => path.includes(f))) benches.push(path)
  }
}
if (benches.length === 0) {
  console.error("no benchmark matched; run `npm run build` first")
  process.exit(1)
}
let failed = 0
for (const path of benches) {
  console.log(`\n=== ${path}`)
  const result = spawnSync(process.execPath, ["--expose-gc", path], { stdio: "inherit" })
  if (result.status !== 0) failed++
}
process.exit(failed === 0 ? 0 : 1)
