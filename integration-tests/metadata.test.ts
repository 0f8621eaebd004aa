/**
 * packages/source/metadata.yaml, the connector's Airbyte metadata: valid against Airbyte's own
 * schema (spec/airbyte-metadata/, verbatim), in agreement with the image and the package it
 * describes (one version everywhere, the spec's host and documentation), and with a silence limit
 * the source's longest wait stays under.
 */
import { execFile } from "node:child_process"
import { createHash } from "node:crypto"
import { readdirSync, readFileSync } from "node:fs"
import { join } from "node:path"
import { promisify } from "node:util"
import { describe, expect, it } from "vitest"
import { parse } from "yaml"
import {
  metadataSchemaDirectory,
  metadataValidator,
} from "../packages/airbyte/src/testing/AirbyteMetadataSchema.ts"

const repo = join(import.meta.dirname, "..")
const sourceDirectory = join(repo, "packages/source")
const bin = join(sourceDirectory, "bin/source-salesintel.js")
const run = promisify(execFile)

interface Metadata {
  readonly metadataSpecVersion: string
  readonly data: {
    readonly name: string
    readonly definitionId: string
    readonly dockerRepository: string
    readonly dockerImageTag: string
    readonly documentationUrl: string
    readonly icon: string
    readonly allowedHosts: { readonly hosts: ReadonlyArray<string> }
    readonly suggestedStreams: { readonly streams: ReadonlyArray<string> }
    readonly maxSecondsBetweenMessages: number
  }
}

const metadataText = readFileSync(join(sourceDirectory, "metadata.yaml"), "utf8")
const metadata = parse(metadataText) as Metadata
const validate = metadataValidator()

/** One protocol message of a command's stdout, the only one of its type. */
const onlyMessage = async (args: ReadonlyArray<string>, type: string): Promise<Record<string, unknown>> => {
  const { stdout } = await run(bin, [...args], { timeout: 60_000 })
  const messages = stdout
    .split("\n")
    .filter((line) => line.length > 0)
    .map((line) => JSON.parse(line) as Record<string, unknown>)
    .filter((message) => message.type === type)
  expect(messages).toHaveLength(1)
  return messages[0] as Record<string, unknown>
}

interface SpecMessage {
  readonly spec: {
    readonly documentationUrl: string
    readonly connectionSpecification: {
      readonly properties: {
        readonly base_url: { readonly default: string }
        readonly timeout_ms: { readonly maximum?: number }
        readonly credited_timeout_ms: { readonly maximum?: number }
        readonly retry: {
          readonly properties: {
            readonly max_retry_after_ms: { readonly maximum?: number }
            readonly max_delay_ms: { readonly maximum?: number }
          }
        }
      }
    }
  }
}
let specOnce: Promise<SpecMessage> | undefined
/** The SPEC message, once for the file. */
const spec = () => {
  specOnce ??= onlyMessage(["spec"], "SPEC") as Promise<unknown> as Promise<SpecMessage>
  return specOnce
}

describe("the vendored metadata schema", () => {
  it("is byte for byte the copy its README lists", () => {
    const readme = readFileSync(join(metadataSchemaDirectory, "README.md"), "utf8")
    const listed = [
      ...readme.matchAll(/^\| `([A-Za-z0-9]+\.yaml)` \| `([0-9a-f]{40})` \| `([0-9a-f]{64})` \|$/gm),
    ]
    expect(listed.map(([, file]) => file)).toEqual(
      readdirSync(metadataSchemaDirectory)
        .filter((name) => name.endsWith(".yaml"))
        .sort(),
    )
    for (const [, file, , sha256] of listed)
      expect(
        createHash("sha256")
          .update(readFileSync(join(metadataSchemaDirectory, file as string)))
          .digest("hex"),
        file,
      ).toBe(sha256)
  }, 120_000)

  it("refuses what Airbyte's tooling refuses: a missing required field, an unknown one, a bad enum", () => {
    const { githubIssueLabel: _label, ...withoutLabel } = metadata.data as Record<string, unknown>
    expect(validate({ ...metadata, data: withoutLabel })).toEqual([
      "/data must have required property 'githubIssueLabel'",
    ])
    expect(validate({ ...metadata, data: { ...metadata.data, homepage: "x" } })).toEqual([
      "/data must NOT have additional properties (homepage)",
    ])
    expect(validate({ ...metadata, data: { ...metadata.data, supportLevel: "official" } })).toEqual([
      "/data/supportLevel must be equal to one of the allowed values",
    ])
    expect(validate({ ...metadata, data: { ...metadata.data, definitionId: "salesintel" } })).toEqual([
      '/data/definitionId must match format "uuid"',
    ])
  }, 120_000)
})

describe("packages/source/metadata.yaml", () => {
  it("is valid against ConnectorMetadataDefinitionV0", () => {
    expect(validate(metadata)).toEqual([])
  }, 120_000)

  it("has one version everywhere: dockerImageTag, the image's labels, package.json and --version", async () => {
    const dockerfile = readFileSync(join(sourceDirectory, "Dockerfile"), "utf8")
    const manifest = JSON.parse(readFileSync(join(sourceDirectory, "package.json"), "utf8")) as {
      version: string
      files: ReadonlyArray<string>
    }
    const { stdout } = await run(bin, ["--version"], { timeout: 60_000 })
    const label = (name: string) =>
      dockerfile.match(new RegExp(`^LABEL ${name.replaceAll(".", "\\.")}=(\\S+)$`, "m"))?.[1]

    expect(label("io.airbyte.version")).toBe(manifest.version)
    expect(metadata.data.dockerImageTag).toBe(manifest.version)
    expect(stdout.trim()).toBe(manifest.version)
    expect(label("io.airbyte.name")).toBe(metadata.data.dockerRepository)
    // The build command the Dockerfile and the README give tags the image with the same name and version.
    expect(dockerfile).toContain(`-t ${metadata.data.dockerRepository}:${manifest.version} .`)
    // Published with the package, beside the Dockerfile it describes.
    expect(manifest.files).toEqual(expect.arrayContaining(["metadata.yaml", metadata.data.icon]))
  }, 120_000)

  it("names the spec's host and documentation, an icon that is an SVG, and streams the source has", async () => {
    const { spec: specification } = await spec()
    expect(metadata.data.allowedHosts.hosts).toEqual([
      new URL(specification.connectionSpecification.properties.base_url.default).host,
    ])
    expect(metadata.data.documentationUrl).toBe(specification.documentationUrl)

    const icon = readFileSync(join(sourceDirectory, metadata.data.icon), "utf8")
    expect(icon).toMatch(/^<svg xmlns="http:\/\/www\.w3\.org\/2000\/svg"[^>]* viewBox="0 0 \d+ \d+"/)
    expect(icon.trim()).toMatch(/<\/svg>$/)

    const catalog = (await onlyMessage(
      ["discover", "--config", join(repo, "spec/examples/demo.json")],
      "CATALOG",
    )) as {
      catalog?: { streams: ReadonlyArray<{ name: string }> }
    }
    const names = (catalog.catalog?.streams ?? []).map((stream) => stream.name)
    expect(metadata.data.suggestedStreams.streams).toEqual(["contacts", "companies"])
    for (const stream of metadata.data.suggestedStreams.streams) expect(names).toContain(stream)
  }, 120_000)

  it("allows a silence longer than any wait the spec lets a config set (Retry-After, backoff, timeouts)", async () => {
    const { properties } = (await spec()).spec.connectionSpecification
    const waits = {
      "retry.max_retry_after_ms": properties.retry.properties.max_retry_after_ms.maximum,
      "retry.max_delay_ms": properties.retry.properties.max_delay_ms.maximum,
      timeout_ms: properties.timeout_ms.maximum,
      credited_timeout_ms: properties.credited_timeout_ms.maximum,
    }
    // Without a maximum, a config may wait that long in silence, and the platform kills the sync
    // after maxSecondsBetweenMessages.
    for (const [field, maximum] of Object.entries(waits)) {
      expect(maximum, `${field} has no maximum in the spec`).toBeTypeOf("number")
      expect(maximum as number, field).toBeLessThan(metadata.data.maxSecondsBetweenMessages * 1000)
    }
  }, 120_000)
})
