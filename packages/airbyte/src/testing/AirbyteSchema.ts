/**
 * Test support: validators for the official Airbyte protocol schema (spec/airbyte/, a verbatim
 * copy), so tests can assert that every message the source prints is a valid AirbyteMessage.
 */
import { readFileSync } from "node:fs"
import { fileURLToPath } from "node:url"
import { Ajv } from "ajv"
import addFormats from "ajv-formats"
import { parse } from "yaml"

const protocolPath = fileURLToPath(new URL("../../../../spec/airbyte/airbyte_protocol.yaml", import.meta.url))

const protocol = parse(readFileSync(protocolPath, "utf8")) as Record<string, unknown>
const ajv = new Ajv({ strict: false, allErrors: true })
addFormats.default(ajv)
ajv.addSchema(protocol, "airbyte_protocol")

const validatorFor = (definition: string) => {
  const validate = ajv.getSchema(`airbyte_protocol#/definitions/${definition}`)
  if (validate === undefined) throw new Error(`no definition ${definition} in the Airbyte protocol schema`)
  return (value: unknown): ReadonlyArray<string> =>
    validate(value)
      ? []
      : (validate.errors ?? []).map((error) => `${error.instancePath || "/"} ${error.message ?? ""}`)
}

/** The problems of a message against #/definitions/AirbyteMessage; empty when it is valid. */
export const messageProblems = validatorFor("AirbyteMessage")
/** The problems of a configured catalog against #/definitions/ConfiguredAirbyteCatalog. */
export const configuredCatalogProblems = validatorFor("ConfiguredAirbyteCatalog")
