/**
 * The source image's file tree, assembled without Docker by the script packages/source/Dockerfile
 * runs (scripts/assemble-source.mjs), into a temporary directory with no node_modules above it:
 * it must hold no Postgres, PGlite, CLI or dev package, and spec, check and read must work from
 * it alone, against the sandbox on 127.0.0.1, as an unprivileged user when the test runs as root.
 */
import { existsSync, readdirSync, readFileSync } from "node:fs"
import { dirname, join } from "node:path"
import { Message } from "@salesintel/airbyte"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { parse } from "yaml"
import { messageProblems } from "../packages/airbyte/src/testing/AirbyteSchema.ts"
import { assemble, type ImageTree, imageTreeDirectory, runFile, unprivileged } from "./imageTree.ts"
import { fastPace, sandboxForFile } from "./sandbox.ts"

const repo = join(import.meta.dirname, "..")

const sandbox = sandboxForFile({ seed: 11, contacts: 2_000, companies: 200 })
let image: ImageTree

/** Every package in a node_modules tree, by name (scoped ones as @scope/name). */
const packagesIn = (nodeModules: string): Array<string> => {
  if (!existsSync(nodeModules)) return []
  const names: Array<string> = []
  for (const entry of readdirSync(nodeModules)) {
    if (entry.startsWith(".")) continue
    const scoped = entry.startsWith("@")
    for (const name of scoped ? readdirSync(join(nodeModules, entry)).map((n) => `${entry}/${n}`) : [entry]) {
      names.push(name)
      names.push(...packagesIn(join(nodeModules, name, "node_modules")))
    }
  }
  return names
}

beforeAll(() => {
  image = imageTreeDirectory()
})
afterAll(() => {
  image?.remove()
})

describe("the source image's tree, assembled as the Dockerfile does", () => {
  it("the Dockerfile runs the same script and copies its output, and runs as a non-root user", () => {
    const dockerfile = readFileSync(join(repo, "packages/source/Dockerfile"), "utf8")
    expect(dockerfile).toContain("node scripts/assemble-source.mjs /build /image")
    expect(dockerfile).toContain("COPY --from=build /image/ ./")
    expect(dockerfile).toMatch(/^USER node$/m)
    // The script is the only source of the tree: the final stage copies nothing else in.
    expect(
      dockerfile
        .split(/^FROM /m)
        .at(-1)
        ?.match(/^COPY /gm),
    ).toHaveLength(1)
  })

  it("docker-compose: host ports from env vars with defaults clear of 5432, nothing mounted from the checkout", () => {
    const compose = parse(readFileSync(join(repo, "docker-compose.yml"), "utf8")) as {
      services: Record<
        string,
        { ports?: Array<string>; volumes?: Array<string>; command?: unknown; build?: unknown; image?: string }
      >
    }
    const published = Object.values(compose.services).flatMap((service) => service.ports ?? [])
    // Compose's own ${VAR:-default} syntax, escaped in these template strings.
    expect(published).toEqual([
      `127.0.0.1:\${SALESINTEL_PG_PORT:-55432}:5432`,
      `127.0.0.1:\${SALESINTEL_SANDBOX_PORT:-58787}:8787`,
    ])
    for (const [name, service] of Object.entries(compose.services)) {
      for (const volume of service.volumes ?? []) expect(volume, name).not.toMatch(/^\.{1,2}(\/|:)/)
      expect(JSON.stringify(service.command ?? ""), name).not.toMatch(/npm (ci|install)/)
    }
    // The sandbox and the sync run the workspace image, built (as user node) from the checkout
    // with packages/cli/Dockerfile.
    for (const name of ["sandbox", "sync"])
      expect(compose.services[name]?.build, name).toEqual({
        context: ".",
        dockerfile: "packages/cli/Dockerfile",
      })
    expect(compose.services.sync?.image).toBe(compose.services.sandbox?.image)
    const workspace = readFileSync(join(repo, "packages/cli/Dockerfile"), "utf8")
    // The last stage (the image run) is the one that must drop root.
    expect(workspace.split(/^FROM /m).at(-1)).toMatch(/^USER node$/m)
  })

  it("holds the source's closure only, and spec, check and read run from it", async () => {
    const { tree, bin, write } = image
    const assembled = await assemble(image)
    expect(assembled.code, assembled.stderr).toBe(0)
    expect(assembled.stdout).toMatch(/^assembled \d+ packages into /)

    // Nothing above the tree can lend it a package: Node resolves only inside it.
    for (let dir = dirname(tree); dir !== dirname(dir); dir = dirname(dir))
      expect(existsSync(join(dir, "node_modules")), dir).toBe(false)

    const names = packagesIn(join(tree, "node_modules"))
    expect(names).toContain("effect")
    expect(names).toContain("@effect/platform-node")
    expect(names).toContain("@salesintel/core")
    for (const name of names) {
      expect(name).not.toMatch(/^(pg|pg-.+|pgpass|postgres-.+|@electric-sql\/.+)$/)
      expect(name).not.toMatch(/^@salesintel\/(postgres|cli|sandbox)$/)
      expect(name).not.toMatch(/^(typescript|vitest|@biomejs\/.+|testcontainers|deno|@types\/.+)$/)
    }
    expect(readdirSync(join(tree, "packages")).sort()).toEqual(["airbyte", "command-line", "core", "source"])

    const messagesOf = (stdout: string) =>
      stdout
        .split("\n")
        .filter((line) => line.length > 0)
        .map((line) => {
          const message = JSON.parse(line) as Message.Message
          expect(messageProblems(message)).toEqual([])
          return message
        })

    const key = sandbox.key()
    const config = write("config.json", {
      api_key: key,
      base_url: sandbox.url,
      credit_budget: 500,
      requests_per_minute: fastPace,
      contacts: { searches: [{ name: "vps", filters: { job_levels: ["vp"] } }] },
      taxonomy: { products: ["cloud"] },
    })
    const catalog = write("catalog.json", {
      streams: ["contacts", "taxonomy_products"].map((name) => ({
        stream: { name },
        sync_mode: "full_refresh",
        destination_sync_mode: "overwrite",
      })),
    })
    // The command file itself, as the image's ENTRYPOINT runs it (its shebang finds node); the
    // three commands side by side, as none needs another's output.
    const [spec, check, read] = await Promise.all([
      runFile(bin, ["spec"], image.work, unprivileged),
      runFile(bin, ["check", "--config", config], image.work, unprivileged),
      runFile(bin, ["read", "--config", config, "--catalog", catalog], image.work, unprivileged),
    ])
    expect(spec.code, spec.stderr).toBe(0)
    expect(messagesOf(spec.stdout).map((m) => m.type)).toEqual(["SPEC"])

    expect(check.code, check.stderr).toBe(0)
    expect(messagesOf(check.stdout)).toMatchObject([
      { type: "CONNECTION_STATUS", connectionStatus: { status: "SUCCEEDED" } },
    ])

    expect(read.code, read.stderr).toBe(0)
    const messages = messagesOf(read.stdout)
    expect(messages.find(Message.isTraceError)).toBeUndefined()
    const records = (stream: string) =>
      messages.filter((m) => m.type === "RECORD" && m.record.stream === stream).length
    expect(records("contacts")).toBeGreaterThan(0)
    expect(records("taxonomy_products")).toBeGreaterThan(0)
    // The check buys nothing: all the key was charged is the read's.
    expect(sandbox.charged(key)).toBe(records("contacts"))
  }, 180_000)
})
