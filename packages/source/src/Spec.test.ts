import { Ajv } from "ajv"
import { describe, expect, it } from "vitest"
import { messageProblems } from "../../airbyte/src/testing/AirbyteSchema.ts"
import * as Config from "./Config.ts"
import * as Spec from "./Spec.ts"
import { fieldTexts } from "./SpecText.ts"

type Node = Readonly<Record<string, unknown>>

const isNode = (value: unknown): value is Node =>
  typeof value === "object" && value !== null && !Array.isArray(value)

/** Every schema node of the spec with its path, and every property with its dotted field path. */
const walk = (root: Node) => {
  const nodes: Array<{ readonly at: string; readonly node: Node }> = []
  const properties: Array<{ readonly field: string; readonly node: Node }> = []
  const visit = (node: unknown, at: string, field: string): void => {
    if (Array.isArray(node)) {
      for (const [index, item] of node.entries()) visit(item, `${at}[${index}]`, field)
      return
    }
    if (!isNode(node)) return
    nodes.push({ at, node })
    for (const [key, value] of Object.entries(node)) {
      if (key === "properties" && isNode(value)) {
        for (const [name, property] of Object.entries(value)) {
          const path = field === "" ? name : `${field}.${name}`
          if (isNode(property)) properties.push({ field: path, node: property })
          visit(property, `${at}.properties.${name}`, path)
        }
      } else {
        visit(value, `${at}.${key}`, field)
      }
    }
  }
  visit(root, "$", "")
  return { nodes, properties }
}

const specification = Spec.connectionSpecification()
const { nodes, properties } = walk(specification)

/** What Effect's JSON Schema generator writes when nobody wrote the words. */
const generatedTitle = /^[a-z]|[a-zA-Z]\(\d+\)|_/
const generatedDescription = /^an? (positive|non-negative|number|string|integer)\b|matching the pattern/

describe("the spec's connectionSpecification", () => {
  it("is a valid SPEC message of the official protocol, with a documentation URL", () => {
    const spec = Spec.spec()
    expect(messageProblems(spec)).toEqual([])
    expect(new URL(spec.spec.documentationUrl ?? "").protocol).toBe("https:")
  })

  it("has no allOf, anyOf or oneOf anywhere, and no $ref", () => {
    const combined = nodes.filter(({ node }) => "allOf" in node || "anyOf" in node || "oneOf" in node)
    expect(combined.map(({ at }) => at)).toEqual([])
    expect(JSON.stringify(specification)).not.toContain("$ref")
  })

  it("never closes an object (additionalProperties is never false)", () => {
    const objects = nodes.filter(({ node }) => node.type === "object")
    expect(objects.length).toBeGreaterThan(5)
    expect(objects.filter(({ node }) => node.additionalProperties === false).map(({ at }) => at)).toEqual([])
  })

  it("gives every field, filters included, a human title and a description", () => {
    // Every field of the Schema is walked: the 34 people filters among them.
    expect(properties.filter(({ field }) => field.startsWith("contacts.searches.filters.")).length).toBe(34)
    for (const { field, node } of properties) {
      expect(typeof node.title, field).toBe("string")
      expect(typeof node.description, field).toBe("string")
      expect(node.title as string, field).not.toMatch(generatedTitle)
      expect(node.description as string, field).not.toMatch(generatedDescription)
      expect(node.description as string, field).not.toContain("no description for")
    }
    // No title or description outside a field is left from the generator.
    for (const { at, node } of nodes)
      if (typeof node.title === "string") expect(node.title, at).not.toMatch(generatedTitle)
  })

  it("has a text for no field that does not exist (texts follow renames)", () => {
    const fields = new Set(properties.map(({ field }) => field))
    expect(Object.keys(fieldTexts).filter((path) => !fields.has(path))).toEqual([])
  })

  it("is a draft-07 schema that accepts a documented config and its own defaults", () => {
    const validate = new Ajv({ strict: false }).compile(specification)
    const config = {
      api_key: "k",
      credit_budget: 10,
      contacts: {
        searches: [{ name: "it-vps", filters: { job_levels: ["vp"], company_min_size: 1000 } }],
        exclude_fields: ["personal_email"],
      },
      companies: { domains: ["example.com"] },
    }
    expect(validate(config), JSON.stringify(validate.errors)).toBe(true)
    expect(validate({ ...config, page_size: 80 })).toBe(false)
    // A single Retry-After waited out stays well below the platform's 900 s between messages.
    for (const field of [
      "retry.max_retry_after_ms",
      "retry.max_delay_ms",
      "timeout_ms",
      "credited_timeout_ms",
    ])
      expect(properties.find((property) => property.field === field)?.node.maximum, field).toBe(600_000)
    expect(validate({ ...config, retry: { max_retry_after_ms: 600_000 } })).toBe(true)
    expect(validate({ ...config, retry: { max_retry_after_ms: 600_001 } })).toBe(false)
    // The form offers exactly the names the decoder accepts for exclude_fields.
    expect(validate({ ...config, contacts: { exclude_fields: ["personal_emial"] } })).toBe(false)
    const offered = (stream: "contacts" | "companies"): ReadonlyArray<string> => {
      const node = properties.find(({ field }) => field === `${stream}.exclude_fields`)?.node
      const items = isNode(node?.items) ? node.items : {}
      return Array.isArray(items.enum) ? (items.enum as ReadonlyArray<string>) : []
    }
    expect(offered("contacts")).toEqual(Config.excludableFields("contacts"))
    expect(offered("contacts")).toEqual(
      expect.arrayContaining(["personal_email", "phone_numbers", "company.revenue"]),
    )
    expect(offered("contacts")).not.toContain("match_id")
    expect(offered("companies")).toContain("technologies.in_use")
    for (const name of offered("contacts"))
      expect(
        Config.decode({ api_key: "k", credit_budget: 1, contacts: { exclude_fields: [name] } })._tag,
      ).toBe("Right")
    // Every default the form shows is one the decoder accepts.
    const defaults = Object.fromEntries(
      properties
        .filter(({ field, node }) => !field.includes(".") && node.default !== undefined)
        .map(({ field, node }) => [field, node.default]),
    )
    // ...and the one it fills in when the field is left out.
    const filled = Config.decode({ api_key: "k", credit_budget: 1 })
    if (filled._tag === "Left") throw filled.left
    expect(Object.keys(defaults)).toEqual(expect.arrayContaining(["page_size", "concurrency", "base_url"]))
    for (const [field, value] of Object.entries(defaults))
      expect((filled.right as unknown as Record<string, unknown>)[field], field).toBe(value)
    expect(Config.decode({ api_key: "k", credit_budget: 1, ...defaults })._tag).toBe("Right")
  })

  it("leaves the decoder strict: an unknown key or a bad value is still refused, naming the field", () => {
    const problems = Config.decode({ api_key: "k", credit_budget: 1, page_sise: 10, concurrency: 0 })
    expect(problems._tag).toBe("Left")
    if (problems._tag === "Left")
      expect(problems.left.problems.map((problem) => problem.path).sort()).toEqual([
        "concurrency",
        "page_sise",
      ])
  })

  it("masks the key", () => {
    const key = (specification.properties as Record<string, Node>).api_key
    expect(key?.airbyte_secret).toBe(true)
    expect(key?.default).toBeUndefined()
  })
})
