/**
 * What the source tells a user whose account, config or address is wrong, against the sandbox
 * over real HTTP: `check` names each missing permission (every combination of the three), a
 * provider 400 ends a read as a config_error naming the parameter and the provider's message, and
 * a base_url where nothing listens says "connection refused" at once.
 */
import { createServer } from "node:http"
import type { AddressInfo } from "node:net"
import { Message } from "@salesintel/airbyte"
import { type Permission, permissionCombinations, permissionKey, permissions } from "@salesintel/sandbox"
import { Commands } from "@salesintel/source"
import * as Effect from "effect/Effect"
import * as Stream from "effect/Stream"
import { beforeEach, describe, expect, it } from "vitest"
import { messageProblems } from "../packages/airbyte/src/testing/AirbyteSchema.ts"
import { sandboxForFile } from "./sandbox.ts"

const sandbox = sandboxForFile({
  seed: 7,
  contacts: 3_000,
  companies: 300,
  accounts: permissionCombinations(),
})
beforeEach(() => {
  sandbox.reset()
})

const configFor = (overrides: Record<string, unknown> = {}) => ({
  api_key: "sandbox-full",
  base_url: sandbox.url,
  credit_budget: 10_000,
  retry: { initial_delay_ms: 5, max_delay_ms: 50 },
  ...overrides,
})

const collect = async (stream: Stream.Stream<Message.Message>) => {
  const messages = [...(await Effect.runPromise(Stream.runCollect(stream)))]
  for (const message of messages) expect(messageProblems(message)).toEqual([])
  return messages
}

const checkWith = async (config: unknown) => {
  const [status, ...rest] = await collect(Commands.check(config))
  expect(rest).toEqual([])
  if (status?.type !== "CONNECTION_STATUS") throw new Error(`expected a connection status: ${status?.type}`)
  return status.connectionStatus
}

const contactsWithTech = {
  searches: [{ name: "crm-vps", filters: { job_levels: ["vp"], tech_category: ["CRM"] } }],
}
const companiesWithTech = { domains: ["example.com"], tech_product: ["Salesforce"] }

describe("check: each permission probed by the request that needs it", () => {
  // What the sandbox (like the provider) requires: people for the people endpoints, technologies
  // for append, either of technologies or the add-on for the taxonomy, the add-on for tech_*.
  const configs = {
    contacts: { contacts: contactsWithTech },
    companies: { companies: companiesWithTech },
    everything: {
      contacts: contactsWithTech,
      companies: companiesWithTech,
      taxonomy: { products: ["cloud"] },
    },
  } as const
  const expectedMissing = (name: keyof typeof configs, has: (p: Permission) => boolean) => {
    const config: Record<string, unknown> = configs[name]
    const missing: Array<string> = []
    if ("contacts" in config) {
      if (!has("people")) missing.push("people access (needed by the contacts stream)")
      else if (!has("tech_addon"))
        missing.push(
          'the technology add-on (needed by the tech_category filter of contacts search "crm-vps")',
        )
    }
    if ("companies" in config) {
      if (!has("technologies")) missing.push("technologies access (needed by the companies stream)")
      else if (!has("tech_addon"))
        missing.push("the technology add-on (needed by the tech_product filter of companies)")
    }
    if ("taxonomy" in config && !has("technologies") && !has("tech_addon"))
      missing.push("taxonomy access (needed by the taxonomy streams)")
    return missing
  }
  const allMissingPhrases = [
    "people access (needed",
    "technologies access (needed",
    "the technology add-on (needed",
    "taxonomy access (needed",
  ]

  for (const name of Object.keys(configs) as Array<keyof typeof configs>) {
    it(`names exactly the permissions missing, for all ${2 ** permissions.length} combinations (${name})`, async () => {
      for (const account of permissionCombinations()) {
        const has = (p: Permission) => account.permissions.includes(p)
        const status = await checkWith(configFor({ api_key: account.key, ...configs[name] }))
        const missing = expectedMissing(name, has)
        const context = `${account.key}: ${status.message}`
        expect(status.status, context).toBe(missing.length === 0 ? "SUCCEEDED" : "FAILED")
        for (const phrase of missing) expect(status.message, context).toContain(phrase)
        // No permission the account has is blamed.
        for (const phrase of allMissingPhrases)
          if (!missing.some((m) => m.startsWith(phrase)))
            expect(status.message, context).not.toContain(phrase)
      }
      // The probes are free: the technologies probe asks for a domain no company has.
      for (const [key, account] of Object.entries(sandbox.running.accounts()))
        expect(account.credits_charged, key).toBe(0)
    })
  }

  it("an account with the add-on but no people access is told it lacks people access (the issue's case)", async () => {
    const status = await checkWith(
      configFor({ api_key: permissionKey(["technologies", "tech_addon"]), contacts: contactsWithTech }),
    )
    expect(status.status).toBe("FAILED")
    expect(status.message).toContain("lacks people access (needed by the contacts stream)")
    expect(status.message).toContain("people.preview answered 403")
    expect(status.message).not.toContain("add-on")
  })

  it("a rejected key ends the check with the key's problem, not a permission", async () => {
    const status = await checkWith(configFor({ api_key: "no-such-key", contacts: contactsWithTech }))
    expect(status.status).toBe("FAILED")
    expect(status.message).toContain("rejected the API key")
    expect(status.message).not.toContain("no-such-key")
  })
})

describe("a provider 400 during a read", () => {
  const catalog = {
    streams: [
      {
        stream: { name: "contacts" },
        sync_mode: "incremental",
        destination_sync_mode: "append_dedup",
      },
    ],
  }

  it("is a config_error naming the parameter and quoting the provider, and nothing is charged", async () => {
    // Digits only passes the config's own check; the provider also wants 7 to 15 of them.
    const config = configFor({
      contacts: { searches: [{ name: "by-phone", filters: { mobile_phone: "12345" } }] },
    })
    const messages = await collect(Commands.read({ config, catalog }))
    const trace = messages.find(Message.isTraceError)
    expect(trace?.trace.error.failure_type).toBe("config_error")
    expect(trace?.trace.error.message).toContain("HTTP 400")
    expect(trace?.trace.error.message).toContain("refused the parameter mobile_phone")
    expect(trace?.trace.error.message).toContain("'mobile_phone' must be 7 to 15 digits")
    expect(trace?.trace.error.message).toContain("Correct mobile_phone in the config's filters")
    expect(messages.filter((m) => m.type === "RECORD")).toEqual([])
    expect(sandbox.requests()["people.preview"]?.["400"]).toBe(1)
    expect(sandbox.charged()).toBe(0)
  })

  it("the config refuses up front what needs no request: a ZIP radius without ZIP codes, a bare LinkedIn token", async () => {
    const config = configFor({
      contacts: {
        searches: [
          { name: "near", filters: { company_location_zipcodes_distance: 25 } },
          { name: "one", filters: { linkedin_url: "dana-reyes" } },
        ],
      },
    })
    const messages = await collect(Commands.read({ config, catalog }))
    expect(messages).toHaveLength(1)
    const trace = messages.find(Message.isTraceError)
    expect(trace?.trace.error.failure_type).toBe("config_error")
    expect(trace?.trace.error.message).toContain(
      "contacts.searches[0].filters.company_location_zipcodes_distance: company_location_zipcodes_distance is a radius around ZIP codes",
    )
    expect(trace?.trace.error.message).toContain(
      "contacts.searches[1].filters.linkedin_url: linkedin_url must be a full profile URL",
    )
    expect(sandbox.requests()).toEqual({})
  })
})

describe("a base_url where nothing listens", () => {
  const closedPort = () =>
    new Promise<number>((resolve) => {
      const server = createServer()
      server.listen(0, "127.0.0.1", () => {
        const { port } = server.address() as AddressInfo
        server.close(() => resolve(port))
      })
    })

  it("check says connection refused, naming host and port, at once", async () => {
    const port = await closedPort()
    const started = Date.now()
    // The default retry settings: before, these retried silently for about 6 s.
    const status = await checkWith({
      api_key: "sandbox-full",
      base_url: `http://127.0.0.1:${port}`,
      credit_budget: 0,
    })
    expect(Date.now() - started).toBeLessThan(1_500)
    expect(status.status).toBe("FAILED")
    expect(status.message).toContain(`connection refused by 127.0.0.1:${port}`)
    expect(status.message).toContain("Check base_url")
  })

  it("a read ends with a transient_error saying connection refused, and no credits are counted as spent", async () => {
    const port = await closedPort()
    const started = Date.now()
    const messages = await collect(
      Commands.read({
        config: {
          api_key: "sandbox-full",
          base_url: `http://127.0.0.1:${port}`,
          credit_budget: 100,
          contacts: { searches: [{ name: "vps", filters: { job_levels: ["vp"] } }] },
        },
        catalog: {
          streams: [
            { stream: { name: "contacts" }, sync_mode: "incremental", destination_sync_mode: "append_dedup" },
          ],
        },
      }),
    )
    expect(Date.now() - started).toBeLessThan(1_500)
    const trace = messages.find(Message.isTraceError)
    expect(trace?.trace.error.failure_type).toBe("transient_error")
    expect(trace?.trace.error.message).toContain(`connection refused by 127.0.0.1:${port}`)
  })
})
