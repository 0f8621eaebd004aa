import { Message } from "@salesintel/airbyte"
import type { Read } from "@salesintel/source"
import { describe, expect, it } from "vitest"
import * as RunFigures from "./RunFigures.ts"

const record = (stream: string): Read.Item => ({
  _tag: "Message",
  message: Message.record(stream, { id: 1 }, 0),
})
const spent = (stream: string, credits: number): Read.Item => ({ _tag: "Spent", stream, credits })
const stateOf = (stream: string) => Message.streamState(stream, { cursor: stream }, 1)
const budget = (spent: number, uncertain = 0) => ({ spent, uncertain })

/** The items folded in order, each with its budget. */
const fold = (
  figures: RunFigures.RunFigures,
  items: ReadonlyArray<readonly [Read.Item, { readonly spent: number; readonly uncertain: number }]>,
) => items.reduce((folded, [item, at]) => RunFigures.step(folded, item, at), figures)

/** A commit as the loader makes it: recorded in its transaction, then committed. */
const commit = (
  figures: RunFigures.RunFigures,
  state: Message.StateMessage,
  records: Readonly<Record<string, number>>,
  rejected: Readonly<Record<string, number>> = {},
) => {
  const counted = Object.fromEntries(
    [...new Set([...Object.keys(records), ...Object.keys(rejected)])].map((stream) => [
      stream,
      {
        records: records[stream] ?? 0,
        ...((rejected[stream] ?? 0) > 0 ? { rejected: rejected[stream] } : {}),
      },
    ]),
  )
  return RunFigures.committing(figures, state, counted, records)[1]
}

describe("RunFigures.step", () => {
  it("counts pages, estimates, the streams read and the budget, and changes nothing in place", () => {
    const start = RunFigures.initial(5_000, 1_000)
    const estimate: Read.Item = { _tag: "Message", message: Message.estimate("contacts", 600, undefined, 0) }
    const figures = fold(start, [
      [{ _tag: "PageRead", stream: "contacts" }, budget(20)],
      [estimate, budget(20)],
      [record("contacts"), budget(20)],
      [record("companies"), budget(25, 2)],
      [
        { _tag: "Tally", stream: "contacts", work: "search", counts: { bought: 1, creditedRequests: 1 } },
        budget(25, 2),
      ],
    ])
    expect(figures).toMatchObject({ pages: 1, creditsSpent: 25, creditsUncertain: 2, checkpoints: 0 })
    expect(figures.estimatedByStream).toEqual(new Map([["contacts", 600]]))
    expect(RunFigures.seen(figures)).toEqual([{ stream: "contacts" }, { stream: "companies" }])
    expect(start).toEqual(RunFigures.initial(5_000, 1_000))
    // A record of a stream already read, the budget as it was: the same value.
    expect(RunFigures.step(figures, record("contacts"), budget(25, 2))).toBe(figures)
  })

  it("keeps the read's summary, its last item", () => {
    const summary = { streams: [], pages: 0, creditsSpent: 0 } as unknown as Read.ReadSummary
    expect(RunFigures.step(RunFigures.initial(1, 0), { _tag: "Summary", summary }, budget(0)).summary).toBe(
      summary,
    )
  })

  it("the streams that only spent come after those that read, in the order they spent", () => {
    const figures = fold(RunFigures.initial(100, 0), [
      [spent("companies", 3), budget(3)],
      [record("contacts"), budget(3)],
      [spent("taxonomy_products", 0), budget(3)],
    ])
    expect(RunFigures.seen(figures).map(({ stream }) => stream)).toEqual([
      "contacts",
      "companies",
      "taxonomy_products",
    ])
  })
})

describe("RunFigures: a STATE's commit", () => {
  it("records the credits each stream had spent at the STATE, though the read has gone further", () => {
    const first = stateOf("contacts")
    const second = stateOf("contacts")
    const read = fold(RunFigures.initial(5_000, 0), [
      [record("contacts"), budget(40)],
      [record("contacts"), budget(40)],
      [spent("contacts", 2), budget(40)],
      [{ _tag: "Message", message: first }, budget(40)],
      [record("contacts"), budget(40)],
      [spent("contacts", 3), budget(40)],
      [{ _tag: "Message", message: second }, budget(40)],
      // Pages read ahead of the loader: bought, not committed.
      [spent("contacts", 40), budget(40)],
    ])
    expect(read.awaiting.map(({ state }) => state)).toEqual([first, second])
    const recording = commit(read, first, { contacts: 2 })
    expect(recording.recorded).toEqual({ contacts: { records: 2, credits: 2 } })
    expect(recording.awaiting.map(({ state }) => state)).toEqual([second])
    // Not committed until its COMMIT is done.
    expect(RunFigures.countsOf(recording, 0)).toMatchObject({
      records: 0,
      creditsCommitted: 0,
      checkpoints: 0,
    })
    const done = RunFigures.committed(recording, first)
    expect(RunFigures.countsOf(done, 0)).toMatchObject({
      records: 2,
      creditsCommitted: 2,
      creditsSpent: 40,
      checkpoints: 1,
    })
    expect(done.committing).toBeUndefined()
  })

  it("a group's STATEs each count a checkpoint; the last commits the group's records and credits", () => {
    const [a, b] = [stateOf("contacts"), stateOf("taxonomy_products")]
    const read = fold(RunFigures.initial(5_000, 0), [
      [record("contacts"), budget(1)],
      [spent("contacts", 1), budget(1)],
      [{ _tag: "Message", message: a }, budget(1)],
      [record("taxonomy_products"), budget(1)],
      [spent("taxonomy_products", 0), budget(1)],
      [{ _tag: "Message", message: b }, budget(1)],
    ])
    const recording = commit(read, b, { contacts: 1, taxonomy_products: 1 })
    // The free taxonomy costs nothing.
    expect(recording.recorded).toEqual({
      contacts: { records: 1, credits: 1 },
      taxonomy_products: { records: 1, credits: 0 },
    })
    expect(recording.awaiting).toEqual([])
    const first = RunFigures.committed(recording, a)
    expect(RunFigures.countsOf(first, 0)).toMatchObject({ records: 0, creditsCommitted: 0, checkpoints: 1 })
    const both = RunFigures.committed(first, b)
    expect(RunFigures.countsOf(both, 0)).toMatchObject({ records: 2, creditsCommitted: 1, checkpoints: 2 })
    expect(RunFigures.countsOf(both, 0).recordsByStream).toEqual(
      new Map([
        ["contacts", 1],
        ["taxonomy_products", 1],
      ]),
    )
  })

  it("rejected records were paid for: their credits are the stream's, their count the row's", () => {
    const state = stateOf("contacts")
    const read = fold(RunFigures.initial(5_000, 0), [
      [record("contacts"), budget(3)],
      [record("_rejected"), budget(3)],
      [record("_rejected"), budget(3)],
      [spent("contacts", 3), budget(3)],
      [{ _tag: "Message", message: state }, budget(3)],
    ])
    const done = RunFigures.committed(commit(read, state, { contacts: 1 }, { contacts: 2 }), state)
    expect(done.recorded).toEqual({ contacts: { records: 1, rejected: 2, credits: 3 } })
    expect(RunFigures.countsOf(done, 0)).toMatchObject({ records: 1, creditsCommitted: 3 })
  })

  it("the run row has the stream's credits at the STATE; the progress line those of the records committed", () => {
    const state = stateOf("contacts")
    // A purchase's batch of 50 bought, its first 2 records checkpointed.
    const read = fold(RunFigures.initial(5_000, 0), [
      [record("contacts"), budget(50)],
      [record("contacts"), budget(50)],
      [spent("contacts", 50), budget(50)],
      [{ _tag: "Message", message: state }, budget(50)],
    ])
    const done = RunFigures.committed(commit(read, state, { contacts: 2 }), state)
    expect(done.recorded).toEqual({ contacts: { records: 2, credits: 50 } })
    expect(RunFigures.countsOf(done, 0)).toMatchObject({ records: 2, creditsCommitted: 2, creditsSpent: 50 })
  })

  it("elapsed time and the budget for the progress line", () => {
    expect(RunFigures.countsOf(RunFigures.initial(700, 1_000), 3_500)).toMatchObject({
      creditBudget: 700,
      elapsedMillis: 2_500,
    })
  })
})
