import { defineConfig } from "vitest/config"

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
    // Says which Postgres the tests use, and fails the run if they leave a schema or database in it.
    globalSetup: ["integration-tests/catalogue.ts"],
  },
})
