/**
 * Test support: a validator for Airbyte's connector metadata schema (spec/airbyte-metadata/, a
 * verbatim copy of ConnectorMetadataDefinitionV0.yaml and the files it references), so a test can
 * assert that packages/source/metadata.yaml is a metadata file Airbyte's tooling accepts.
 *
 * The files are loaded as they are; two of Airbyte's nodes are not JSON Schema and Ajv refuses to
 * compile them, so they are mended in memory, by exact path, before compiling (`mends`). Each mend
 * must find the node it expects, or loading throws: a newer copy of the files is then looked at
 * rather than silently changed.
 */
import { readdirSync, readFileSync } from "node:fs"
import { join } from "node:path"
import { fileURLToPath } from "node:url"
import { Ajv } from "ajv"
import addFormats from "ajv-formats"
import { parse } from "yaml"

export const metadataSchemaDirectory = fileURLToPath(
  new URL("../../../../spec/airbyte-metadata/", import.meta.url),
)

type Node = { [key: string]: unknown }

/**
 * Airbyte's Python models are generated from these files by datamodel-code-generator, which reads
 * `type: dict` as an object; JSON Schema has no such type, and Ajv throws on it at compile time.
 * The node describes a breaking change's impacted stream fields: a metadata.yaml without
 * `releases` never reaches it. The mend is the one the Airbyte CDK's own vendored copy made
 * (`type: object`).
 */
export const mends: ReadonlyArray<{
  readonly file: string
  readonly path: ReadonlyArray<string>
  readonly from: Node
  readonly to: Node
}> = [
  {
    file: "ConnectorReleases.yaml",
    path: ["definitions", "StreamFieldBreakingChangeScope", "properties", "impactedStreamFields", "items"],
    from: { type: "dict" },
    to: { type: "object" },
  },
]

const nodeAt = (root: Node, path: ReadonlyArray<string>): Node => {
  let node: unknown = root
  for (const key of path) {
    if (typeof node !== "object" || node === null) throw new Error(`no node at ${path.join("/")}`)
    node = (node as Node)[key]
  }
  if (typeof node !== "object" || node === null) throw new Error(`no node at ${path.join("/")}`)
  return node as Node
}

/** Every file of the directory, parsed, with the mends applied; keyed by file name (the $ref). */
export const loadMetadataSchemas = (directory = metadataSchemaDirectory): Map<string, Node> => {
  const schemas = new Map<string, Node>()
  for (const file of readdirSync(directory)
    .filter((name) => name.endsWith(".yaml"))
    .sort())
    schemas.set(file, parse(readFileSync(join(directory, file), "utf8")) as Node)
  for (const mend of mends) {
    const schema = schemas.get(mend.file)
    if (schema === undefined) throw new Error(`${mend.file} is not in ${directory}`)
    const node = nodeAt(schema, mend.path)
    for (const [key, value] of Object.entries(mend.from))
      if (node[key] !== value)
        throw new Error(
          `${mend.file} ${mend.path.join("/")}: expected ${key}: ${String(value)}, found ${String(node[key])}`,
        )
    Object.assign(node, mend.to)
  }
  return schemas
}

/**
 * The problems of a parsed metadata.yaml against ConnectorMetadataDefinitionV0; empty when valid.
 * Each file is added under its file name, which is how the files' `$ref`s name each other.
 */
export const metadataValidator = (directory = metadataSchemaDirectory) => {
  const ajv = new Ajv({ strict: false, allErrors: true })
  addFormats.default(ajv)
  for (const [file, schema] of loadMetadataSchemas(directory)) {
    // The files' $id values are not the names their $refs use (and some are not even the
    // file's own name), so they are registered by file name alone.
    const { $id: _id, ...rest } = schema
    ajv.addSchema(rest, file)
  }
  const validate = ajv.getSchema("ConnectorMetadataDefinitionV0.yaml")
  if (validate === undefined)
    throw new Error("ConnectorMetadataDefinitionV0.yaml is not in the metadata schema")
  return (value: unknown): ReadonlyArray<string> =>
    validate(value)
      ? []
      : (validate.errors ?? []).map(
          (error) =>
            `${error.instancePath || "/"} ${error.message ?? ""}${
              error.keyword === "additionalProperties"
                ? ` (${String((error.params as { additionalProperty?: unknown }).additionalProperty)})`
                : ""
            }`,
        )
}
