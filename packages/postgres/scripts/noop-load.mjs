// The loader with a database that does nothing: the JavaScript side alone (seconds, peak RSS).
//   npm run build && node packages/postgres/scripts/noop-load.mjs /tmp/contacts.jsonl
// (the input from `BENCH_RECORDS=200000 node packages/postgres/dist/bench/load-throughput.js generate /tmp/contacts.jsonl`)
import { Effect, Layer } from "effect"
import { Database } from "../dist/Database.js"
import * as Loader from "../dist/Loader.js"
import * as Messages from "../dist/Messages.js"

const noop = {
  kind: "pglite",
  query: () => Effect.succeed([]),
  exec: () => Effect.void,
  copyIn: () => Effect.void,
}
const started = performance.now()
const summary = await Effect.runPromise(
  Loader.load(Messages.fromFile(process.argv[2]), { schema: "x", ensureSchema: false }).pipe(
    Effect.provide(Layer.succeed(Database, noop)),
  ),
)
const seconds = (performance.now() - started) / 1000
const records = Object.values(summary.streams).reduce((sum, stream) => sum + stream.records, 0)
console.log(
  JSON.stringify({ seconds, records, peakRssMb: Math.round(process.resourceUsage().maxRSS / 1024) }),
)
