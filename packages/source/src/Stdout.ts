/**
 * Writes protocol messages to stdout, one JSON object per line, a chunk of lines per write, and
 * waits for the pipe to drain when it is full, so a slow reader (the loader, Airbyte) slows the
 * source down instead of the source buffering without bound.
 */
import { Chunk, Effect, Stream } from "effect"
import * as Protocol from "./Protocol.ts"

const write = (text: string): Effect.Effect<void> =>
  Effect.async<void>((resume) => {
    if (process.stdout.write(text)) resume(Effect.void)
    else process.stdout.once("drain", () => resume(Effect.void))
  })

/** Prints every message; succeeds with whether the command ended in a TRACE error. */
export const print = <E, R>(
  messages: Stream.Stream<Protocol.Message, E, R>,
): Effect.Effect<boolean, E, R> => {
  let failed = false
  return messages.pipe(
    Stream.mapChunks((chunk) => {
      let text = ""
      for (const message of chunk) {
        if (message.type === "TRACE" && message.trace.type === "ERROR") failed = true
        text += Protocol.serialize(message)
      }
      return Chunk.of(text)
    }),
    Stream.runForEach(write),
    Effect.map(() => failed),
  )
}
