import { availableParallelism } from "node:os"
import { defineConfig } from "vitest/config"

// Two files at a time even on a 2-core machine (vitest's default there is one): much of a file's
// time is spent waiting on the sandbox, Postgres or a child process, and the other file fills it.
const workers = Math.max(2, availableParallelism() - 1)

// One run covers every package's unit tests (next to the code) and the cross-package
// integration tests. Benchmarks are not tests: they live in scripts/ and run via `npm run bench`.
export default defineConfig({
  test: {
    include: ["packages/*/src/**/*.test.ts", "integration-tests/**/*.test.ts"],
    // The chaos suite runs on its own: `npm run test:chaos` (integration-tests/chaos/vitest.config.ts).
    exclude: ["integration-tests/chaos/**", "**/node_modules/**"],
    testTimeout: 30_000,
    hookTimeout: 60_000,
    reporters: ["default"],
    maxWorkers: workers,
    minWorkers: workers,
    // A worker runs file after file in one process, so each package is loaded once per worker, not
    // once per file (about a second a file). The files share no state: each starts its own sandbox
    // and opens its own schemas, and what a test changes of the process (TZ) it restores.
    isolate: false,
    server: {
      deps: {
        // The packages' built code (dist/) is plain JavaScript: Node loads it, vitest need not.
        external: [/\/packages\/[^/]+\/dist\//],
      },
    },
    // Says which Postgres the tests use, and fails the run if they leave a schema or database in it.
    globalSetup: ["integration-tests/catalogue.ts"],
  },
})
