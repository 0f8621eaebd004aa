import { mkdtempSync, readdirSync, readFileSync } from "node:fs"
import { PGlite } from "@electric-sql/pglite"

const mode = process.argv[2]
const dir = process.argv[3] ?? mkdtempSync("/tmp/i11mem/dd-")
const t0 = performance.now()
const opts = { startParams: [...PGlite.defaultStartParams, "-c", "shared_buffers=16MB"] }
if (mode === "load") opts.loadDataDir = new Blob([readFileSync("/tmp/i11mem/datadir.tgz")])
const db = await PGlite.create(dir, opts)
console.log(mode, dir, "created", (performance.now() - t0).toFixed(0), "ms")
console.log((await db.query("select version(), current_setting('shared_buffers') sb")).rows)
await db.exec("create table t(x int); insert into t values (1)")
await db.close()
console.log(readdirSync(dir).join(" "))
console.log("maxRSS MB", process.resourceUsage().maxRSS / 1024)
