import { type Catalog, Message, Streams } from "@salesintel/airbyte"
import * as Effect from "effect/Effect"
import * as Either from "effect/Either"
import * as Stream from "effect/Stream"
import { describe, expect, it } from "vitest"
import * as Config from "./Config.ts"
import { excludedPaths, recordFilter, withoutExcluded } from "./Exclusions.ts"

const configWith = (contacts: Record<string, unknown>) =>
  Either.getOrThrow(Config.decode({ api_key: "k", credit_budget: 1, contacts }))

const contactsStream = (properties?: ReadonlyArray<string>): Catalog.ConfiguredStream => {
  const declared = Streams.streams.contacts.jsonSchema.properties as Record<string, unknown>
  return {
    stream: {
      name: "contacts",
      ...(properties === undefined
        ? {}
        : {
            json_schema: { properties: Object.fromEntries(properties.map((name) => [name, declared[name]])) },
          }),
    },
    sync_mode: "full_refresh",
    destination_sync_mode: "overwrite",
  }
}

const data = { match_id: "m", email: "a@b.example", personal_email: "a@home.example", job_title: "CTO" }

describe("the read's record filter", () => {
  it("is the identity when nothing is excluded: the same message object comes back", () => {
    const filter = recordFilter(configWith({}), contactsStream())
    const message = Message.record("contacts", data, 1)
    expect(filter(message)).toBe(message)
  })

  it("takes the excluded fields out of a rejected record of the stream too, and nothing else", () => {
    const filter = recordFilter(configWith({ exclude_fields: ["personal_email"] }), contactsStream())
    const { match_id: _, ...keyless } = data
    const rejected = {
      stream: "contacts",
      key: null,
      reason: "search_results[0].match_id: is missing",
      record: keyless,
      _salesintel_fetched_at: "2026-11-01T00:00:00.000Z",
    }
    const { personal_email: __, ...kept } = keyless
    expect(filter(Message.record(Streams.rejected.name, rejected, 1)).record.data).toEqual({
      ...rejected,
      record: kept,
    })
  })

  it("takes out the config's exclusions and the catalog's deselected fields together", () => {
    const config = configWith({ exclude_fields: ["personal_email"] })
    const stream = contactsStream(["match_id", "email", "personal_email", "_salesintel_fetched_at"])
    expect(excludedPaths(config, stream)).toContain("job_title")
    expect(excludedPaths(config, stream)).toContain("personal_email")
    const filtered = recordFilter(config, stream)(Message.record("contacts", data, 1))
    expect(filtered.record.data).toEqual({ match_id: "m", email: "a@b.example" })
  })

  it("applies a stream's exclusions to that stream only", () => {
    const config = configWith({ exclude_fields: ["personal_email"] })
    const companies: Catalog.ConfiguredStream = {
      stream: { name: "companies" },
      sync_mode: "full_refresh",
      destination_sync_mode: "overwrite",
    }
    expect(excludedPaths(config, companies)).toEqual([])
  })
})

describe("withoutExcluded (the read's stage)", () => {
  it("adds no stage when nothing is excluded: the same stream comes back", () => {
    const messages = Stream.make(Message.record("contacts", data, 1))
    expect(withoutExcluded(configWith({}), contactsStream())(messages)).toBe(messages)
  })

  it("filters RECORDs and passes every other message as it is", async () => {
    const log = Message.log("INFO", "personal_email")
    const messages = Stream.make(Message.record("contacts", data, 1), log)
    const filtered = await Effect.runPromise(
      Stream.runCollect(
        withoutExcluded(configWith({ exclude_fields: ["personal_email"] }), contactsStream())(messages),
      ),
    )
    const [record, passed] = [...filtered]
    expect(record?.type === "RECORD" && "personal_email" in record.record.data).toBe(false)
    expect(passed).toBe(log)
  })
})
