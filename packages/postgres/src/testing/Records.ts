/** Synthetic messages for the loader's tests: contacts with phones, companies with technologies. */
import { Message } from "@salesintel/airbyte"

export { company, contact } from "../../../core/src/testing/Records.ts"

import { contact } from "../../../core/src/testing/Records.ts"

export const record = (stream: string, data: Record<string, unknown>): Message.RecordMessage =>
  Message.record(stream, data, 1_700_000_000_000)

export const state = (
  stream: string,
  streamState: Message.JsonObject,
  recordCount = 0,
): Message.StateMessage => Message.streamState(stream, streamState, recordCount)

/** `count` contacts, a STATE `{ upto }` after every `every` records and at the end. */
export const contactMessages = (count: number, every: number, from = 0): Array<Message.Message> => {
  const messages: Array<Message.Message> = []
  for (let index = from; index < from + count; index++) {
    messages.push(record("contacts", contact(index)))
    if ((index + 1) % every === 0 || index === from + count - 1)
      messages.push(state("contacts", { upto: index + 1 }, every))
  }
  return messages
}
