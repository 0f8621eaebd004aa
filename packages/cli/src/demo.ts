#!/usr/bin/env node
/**
 * `npm run demo`: from a fresh clone, with no key, no Docker and no Postgres server, the sandbox
 * provider synced into embedded PGlite under ./.salesintel/demo twice, a month apart, and what
 * landed printed (DemoRun.ts).
 */
import * as DemoRun from "./DemoRun.ts"

process.exitCode = await DemoRun.run({
  directory: "./.salesintel/demo",
  print: (text) => console.log(text),
  progress: process.stderr,
})
