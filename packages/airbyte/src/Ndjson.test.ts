/**
 * JSON lines in: lines cut on the input's bytes, whatever the block boundaries (a line, or a
 * multi-byte character, split across blocks), CRLF endings, a byte order mark, no final newline.
 */
import { Readable } from "node:stream"
import * as Chunk from "effect/Chunk"
import * as Effect from "effect/Effect"
import * as Stream from "effect/Stream"
import fc from "fast-check"
import { describe, expect, it } from "vitest"
import * as Ndjson from "./Ndjson.ts"

const record = (id: number, name: string) =>
  JSON.stringify({
    type: "RECORD",
    record: { stream: "contacts", data: { match_id: `m-${id}`, name }, emitted_at: 1 },
  })

const read = (blocks: ReadonlyArray<Uint8Array | string>) =>
  Effect.runPromise(Stream.runCollect(Ndjson.fromReadable(Readable.from(blocks, { objectMode: true })))).then(
    (messages) =>
      Chunk.toReadonlyArray(messages).map((message) =>
        message.type === "RECORD" ? (message.record.data as { name: string }).name : message.type,
      ),
  )

describe("Ndjson.fromReadable", () => {
  it("reads the same messages however the bytes are cut into blocks", async () => {
    const names = ["plain", "é ü ß", "日本語", "emoji 😀 here", 'quote " and \\ backslash']
    const text = `\uFEFF${names.map((name, id) => record(id, name)).join("\r\n")}\n\n${record(9, "last, no newline")}`
    const bytes = Buffer.from(text, "utf8")
    await fc.assert(
      fc.asyncProperty(
        fc.uniqueArray(fc.integer({ min: 1, max: bytes.length - 1 }), { maxLength: 12 }),
        async (cuts) => {
          const points = [0, ...[...cuts].sort((a, b) => a - b), bytes.length]
          const blocks = points
            .slice(1)
            .map((end, index) => Uint8Array.from(bytes.subarray(points[index], end)))
          expect(await read(blocks)).toEqual([...names, "last, no newline"])
        },
      ),
      { numRuns: 200 },
    )
  })

  it("reports a line that is not JSON with its position", async () => {
    const error = await Effect.runPromise(
      Effect.flip(Stream.runDrain(Ndjson.fromReadable(Readable.from([`${record(1, "a")}\nnot json\n`])))),
    )
    expect(error.position).toBe(2)
    expect(error.reason).toContain("not JSON")
  })

  it("a last line cut off in the middle ends the input, said to onCutOff; without it, or a bad line with its newline, fails", async () => {
    const whole = `${record(1, "a")}\n${record(2, "b")}\n`
    const cut = record(3, "c").slice(0, 40)
    const positions: Array<number> = []
    const options: Ndjson.ReadOptions = {
      onCutOff: (position) => Effect.sync(() => positions.push(position)),
    }
    const names = await Effect.runPromise(
      Stream.runCollect(Ndjson.fromReadable(Readable.from([whole, cut]), options)),
    ).then((messages) =>
      Chunk.toReadonlyArray(messages).map((m) => (m.type === "RECORD" ? m.record.data.match_id : m.type)),
    )
    expect(names).toEqual(["m-1", "m-2"])
    expect(positions).toEqual([3])
    // Without onCutOff the cut line fails the input as before; with its newline it is a bad line.
    const unheeded = await Effect.runPromise(
      Effect.flip(Stream.runDrain(Ndjson.fromReadable(Readable.from([whole, cut])))),
    )
    expect(unheeded.reason).toContain("not JSON")
    const terminated = await Effect.runPromise(
      Effect.flip(Stream.runDrain(Ndjson.fromReadable(Readable.from([whole, `${cut}\n`]), options))),
    )
    expect(terminated.position).toBe(3)
    expect(positions).toEqual([3])
    // A last line without a newline that is JSON but no message is refused as such.
    const notMessage = await Effect.runPromise(
      Effect.flip(Stream.runDrain(Ndjson.fromReadable(Readable.from([whole, '{"x": 1}']), options))),
    )
    expect(notMessage.reason).toContain("no type")
  })

  it("emits the messages before a bad line, then fails", async () => {
    const state = JSON.stringify({
      type: "STATE",
      state: { type: "STREAM", stream: { stream_descriptor: { name: "contacts" }, stream_state: { a: 1 } } },
    })
    const input = Readable.from([
      `${record(1, "a")}\n${state}\n${record(2, "b")}\nnot json\n${record(3, "c")}\n`,
    ])
    const seen: Array<string> = []
    const error = await Effect.runPromise(
      Effect.flip(
        Stream.runForEach(Ndjson.fromReadable(input), (message) =>
          Effect.sync(() => {
            seen.push(
              message.type === "RECORD" ? (message.record.data as { name: string }).name : message.type,
            )
          }),
        ),
      ),
    )
    expect(seen).toEqual(["a", "STATE", "b"])
    expect(error.position).toBe(4)
  })
})
