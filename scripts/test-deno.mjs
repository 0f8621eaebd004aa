#!/usr/bin/env node
// `npm run test:deno`: runs scripts/deno-smoke.ts under the Deno binary that the `deno` npm
// package ships, in node_modules mode (bare imports resolve from node_modules), with network
// access to 127.0.0.1 only. DENO_DIR stays inside the project (.deno/, git-ignored).
import { spawnSync } from "node:child_process"
import { existsSync } from "node:fs"
import { resolve } from "node:path"

const deno = resolve("node_modules/.bin/deno")
if (!existsSync(deno)) {
  console.error("node_modules/.bin/deno is missing: run `npm ci` first (the deno package ships the binary)")
  process.exit(1)
}
const result = spawnSync(
  deno,
  ["run", "--no-prompt", "--allow-net=127.0.0.1", "--allow-read=.", "--allow-env", "scripts/deno-smoke.ts"],
  { stdio: "inherit", env: { ...process.env, DENO_DIR: resolve(".deno") }, timeout: 120_000 },
)
if (result.error) {
  console.error(`deno did not run: ${result.error.message}`)
  process.exit(1)
}
process.exit(result.status ?? 1)
