import * as Either from "effect/Either"
import { describe, expect, it } from "vitest"
import * as Message from "./Message.ts"
import * as StreamState from "./StreamState.ts"

describe("StreamState.decode", () => {
  it("reads per-stream states, as Airbyte passes them, as STATE messages and as _state gives them", () => {
    const message = Message.streamState("contacts", { known: { "1": ["a"] } }, 3)
    for (const input of [
      [message.state],
      [message],
      [StreamState.saved("contacts", { known: { "1": ["a"] } })],
    ]) {
      const state = Either.getOrThrow(StreamState.decode(input))
      expect(state.get("contacts")).toEqual({ known: { "1": ["a"] } })
    }
  })

  it("reads states as the official models write them: every optional field null", () => {
    const blob = { known: { "20000": ["a"] }, emails: {} }
    // AirbyteStateMessage.model_dump_json(), as PyAirbyte writes its state file.
    const stateMessage = {
      type: "STREAM",
      stream: { stream_descriptor: { name: "contacts", namespace: null }, stream_state: blob },
      global: null,
      data: null,
      sourceStats: null,
      destinationStats: null,
    }
    // A whole AirbyteMessage, as a platform that saves messages writes it.
    const message = {
      type: "STATE",
      log: null,
      spec: null,
      connectionStatus: null,
      catalog: null,
      record: null,
      state: stateMessage,
      trace: null,
      control: null,
    }
    for (const input of [[stateMessage], [message]])
      expect(Either.getOrThrow(StreamState.decode(input)).get("contacts")).toEqual(blob)
    // A stream whose blob is null has no state (the protocol's stream_state is optional).
    const noBlob = { ...stateMessage, stream: { ...stateMessage.stream, stream_state: null } }
    const decoded = Either.getOrThrow(StreamState.decode([noBlob]))
    expect(decoded.has("contacts") && decoded.get("contacts")).toBeUndefined()
  })

  it("refuses two states for one stream, naming where", () => {
    const first = StreamState.saved("contacts", { known: {} })
    const refused = StreamState.decode([
      first,
      StreamState.saved("companies", {}),
      { type: "STATE", state: first },
    ])
    expect(Either.isLeft(refused) && refused.left).toBe(
      "invalid state file at [2].state.stream.stream_descriptor.name: a second state for stream contacts (the first is at [0]); keep one state per stream",
    )
  })

  it("refuses a legacy object whose stream state is null, never reading it as no state", () => {
    const refused = StreamState.decode({ contacts: null })
    expect(Either.isLeft(refused) && refused.left).toContain("invalid state file at contacts")
  })

  it("reads the legacy object form and no state at all", () => {
    expect(Either.getOrThrow(StreamState.decode({ companies: { domains: {} } })).get("companies")).toEqual({
      domains: {},
    })
    expect(Either.getOrThrow(StreamState.decode(undefined)).size).toBe(0)
  })

  it("refuses a per-stream state of a stream the registry does not have, naming it", () => {
    const refused = StreamState.decode([StreamState.saved("people", { known: {} })])
    expect(Either.isLeft(refused) && refused.left).toContain('"people" is not a stream')
    expect(Either.isLeft(refused) && refused.left).toContain("(expected one of taxonomy_categories,")
  })

  it("says which stream a misspelt name is near, in either form", () => {
    const perStream = StreamState.decode([StreamState.saved("contact", { known: {} })])
    expect(Either.isLeft(perStream) && perStream.left).toMatch(
      /: "contact" is not a stream \(did you mean contacts\?\)$/,
    )
    const legacy = StreamState.decode({ Companies: {} })
    expect(Either.isLeft(legacy) && legacy.left).toBe(
      'invalid state file: "Companies" is not a stream (did you mean companies?)',
    )
  })

  it("refuses something else", () => {
    expect(Either.isLeft(StreamState.decode(42))).toBe(true)
    expect(Either.isLeft(StreamState.decode([{ nope: true }]))).toBe(true)
  })

  it("names the path of a bad field in the per-stream form", () => {
    const refused = StreamState.decode([
      { type: "STREAM", stream: { stream_descriptor: {}, stream_state: {} } },
    ])
    expect(Either.isLeft(refused) && refused.left).toContain("[0]")
    expect(Either.isLeft(refused) && refused.left).toContain("stream_descriptor.name")
  })

  it("refuses a legacy object that names no stream, naming the key", () => {
    const refused = StreamState.decode({ foo: 1 })
    expect(Either.isLeft(refused) && refused.left).toContain('"foo" is not a stream')
    expect(Either.isLeft(StreamState.decode({ contacts: {}, contact: {} }))).toBe(true)
  })
})
