import { Either } from "effect"
import { describe, expect, it } from "vitest"
import * as InputState from "./InputState.ts"
import * as Protocol from "./Protocol.ts"

describe("InputState.decode", () => {
  it("reads per-stream states, as Airbyte passes them and as STATE messages", () => {
    const message = Protocol.streamState("contacts", { known: { "1": ["a"] } }, 3)
    for (const input of [[message.state], [message]]) {
      const state = Either.getOrThrow(InputState.decode(input))
      expect(state.get("contacts")).toEqual({ known: { "1": ["a"] } })
    }
  })

  it("reads the legacy object form and no state at all", () => {
    expect(Either.getOrThrow(InputState.decode({ companies: { domains: {} } })).get("companies")).toEqual({
      domains: {},
    })
    expect(Either.getOrThrow(InputState.decode(undefined)).size).toBe(0)
  })

  it("refuses something else", () => {
    expect(Either.isLeft(InputState.decode(42))).toBe(true)
    expect(Either.isLeft(InputState.decode([{ nope: true }]))).toBe(true)
  })
})
