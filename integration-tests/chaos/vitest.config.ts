import { fileURLToPath } from "node:url"
import { defineConfig } from "vitest/config"

// The chaos suite (`npm run test:chaos`): real commands killed, interrupted, run twice at once and
// piped into each other against the sandbox, one file at a time (they share the local Postgres
// and both cores), each case printing its figures.
export default defineConfig({
  test: {
    root: fileURLToPath(new URL("../..", import.meta.url)),
    include: ["integration-tests/chaos/**/*.test.ts"],
    fileParallelism: false,
    testTimeout: 180_000,
    hookTimeout: 180_000,
    reporters: ["verbose"],
    globalSetup: ["integration-tests/catalogue.ts"],
  },
})
