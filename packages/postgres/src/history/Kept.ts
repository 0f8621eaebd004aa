/**
 * What a stream keeps beside its rows, described per stream: its changes (the change tables) and
 * its observations (with the tables kept from them), each a statement over the batch's stage,
 * run before the batch's rows replace the ones held (merge/Merge.ts). A stream not listed keeps
 * its rows alone. A new stream with history of its own is described here, not in the merge.
 */
import type { Streams } from "@salesintel/airbyte"
import * as ChangeTables from "./ChangeTables.ts"
import * as LogDerived from "./LogDerived.ts"
import * as Observations from "./Observations.ts"

/** A batch's staging tables: the stream's table's, and its children's by table name. */
export type Staged = ChangeTables.Staged

/** The statements a stream's batch runs before its merge, and what a session prepares for them. */
export interface Kept {
  /** Once per session, before the first batch: the temporary tables the statements use. */
  readonly prepareSql?: string
  /** The batch's changes against the rows held. */
  readonly changesSql?: (schema: string, staged: Staged, runId: number | undefined) => string
  /** The batch's observations, and the tables kept from them made again around them. */
  readonly observationsSql?: (schema: string, staged: Staged, runId: number | undefined) => string
}

export const kept: Partial<Record<Streams.StreamName, Kept>> = {
  // A company's technologies, observed: adoptions and drops, the observation log and its tables.
  companies: {
    prepareSql: LogDerived.prepareSql,
    changesSql: ChangeTables.technologySql,
    observationsSql: (schema, staged, runId) =>
      LogDerived.aroundRecordSql(schema, staged.parent, Observations.recordStagedSql(schema, staged, runId)),
  },
  // A person's job, observed: job changes (champion moves are a view over them).
  contacts: { changesSql: ChangeTables.jobSql },
}

/** What `stream` keeps beside its rows (nothing for a stream not listed). */
export const keptBy = (stream: Streams.StreamName): Kept => kept[stream] ?? {}
