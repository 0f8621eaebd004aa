/**
 * The registry of streams: every stream the connector offers, once. Each entry names the stream,
 * its primary key and cursor, the sync modes the source supports, the core's record Schema (with
 * its fast decoder), and the fields the connector adds to a record. The source's catalog, the
 * loader's table descriptions, the views and the demo all take their names from here; the source's
 * definitions and the loader's tables are keyed by `StreamName`, so a stream added here without
 * them (or the reverse) does not build.
 */
import { FastDecode, Nearest, ParseIssue } from "@salesintel/core"
import * as Either from "effect/Either"
import * as Schema from "effect/Schema"
import { conformer } from "./Conform.ts"
import { type Json, recordSchema } from "./JsonSchema.ts"

/** How a source reads a stream (the protocol's SyncMode): the modes each stream supports are listed below. */
export const SyncMode = Schema.Literal("full_refresh", "incremental")
export type SyncMode = typeof SyncMode.Type

/** The fields the source adds to a record beside the provider's JSON. */
export const addedFields = {
  /** The configured search that returned a contact (null for an email enrichment). */
  search: "_salesintel_search",
  /** When the source fetched the record (ISO-8601): the cursor of the credited streams. */
  fetchedAt: "_salesintel_fetched_at",
} as const

const nullableString: Json = { type: ["string", "null"] }
const timestamp: Json = { type: "string", format: "date-time" }

/** A stream as the protocol and both ends see it. `A` is its decoded record. */
export interface StreamEntry<A> {
  readonly name: StreamName
  /** Each key a path of field names (Airbyte's form). */
  readonly primaryKey: ReadonlyArray<ReadonlyArray<string>>
  readonly cursorField: ReadonlyArray<string> | undefined
  readonly syncModes: ReadonlyArray<SyncMode>
  /** The record's JSON Schema as emitted (provider JSON plus the added fields), for the catalog. */
  readonly jsonSchema: Readonly<Record<string, unknown>>
  /** Decodes a record's data: the fast path where it is sure, the Schema otherwise. */
  readonly decode: (data: unknown) => Either.Either<A, ParseIssue.ParseIssue>
  /**
   * The provider's JSON of a record with its loosely sent values in their declared types (taken
   * from `decoded`), so that it validates against `jsonSchema` (Conform.ts). A method, so that
   * an entry of a record type stands where an entry of unknown records is expected.
   */
  conform(raw: Readonly<Record<string, unknown>>, decoded: A): Readonly<Record<string, unknown>>
}

const define = <const Name extends string, A, I>(spec: {
  readonly name: Name
  readonly primaryKey: ReadonlyArray<ReadonlyArray<string>>
  readonly cursorField?: ReadonlyArray<string>
  readonly syncModes: ReadonlyArray<SyncMode>
  /** The core's record Schema and its fast decoder. */
  readonly record: FastDecode.Decoder<A, I>
  /** JSON Schemas of the added fields this stream's records carry. */
  readonly added?: Readonly<Record<string, Json>>
}) => ({
  name: spec.name,
  primaryKey: spec.primaryKey,
  cursorField: spec.cursorField,
  syncModes: spec.syncModes,
  schema: spec.record.schema,
  jsonSchema: recordSchema(spec.record.schema, spec.added),
  decode: spec.record.decode,
  conform: conformer(spec.record.schema),
})

/** The credited streams: read in either mode, with the fetch time as their cursor. */
const incremental = {
  cursorField: [addedFields.fetchedAt],
  syncModes: ["full_refresh", "incremental"],
} as const satisfies { cursorField: ReadonlyArray<string>; syncModes: ReadonlyArray<SyncMode> }

/** Every stream, in the order a read runs them: the free taxonomy first, credited streams after. */
export const streams = {
  taxonomy_categories: define({
    name: "taxonomy_categories",
    primaryKey: [["category"]],
    syncModes: ["full_refresh"],
    record: FastDecode.decoders.category,
  }),
  taxonomy_products: define({
    name: "taxonomy_products",
    primaryKey: [["product"], ["vendor"]],
    syncModes: ["full_refresh"],
    record: FastDecode.decoders.product,
  }),
  contacts: define({
    name: "contacts",
    primaryKey: [["match_id"]],
    ...incremental,
    record: FastDecode.decoders.contact,
    added: { [addedFields.search]: nullableString, [addedFields.fetchedAt]: timestamp },
  }),
  companies: define({
    name: "companies",
    primaryKey: [["company_id"]],
    ...incremental,
    record: FastDecode.decoders.companyTechnologies,
    added: { [addedFields.fetchedAt]: timestamp },
  }),
}

export type Streams = typeof streams
export type StreamName = keyof Streams
/** The decoded record of a stream. */
export type RecordOf<Name extends StreamName> = Schema.Schema.Type<Streams[Name]["schema"]>

/** Every entry, in read order. */
export const all: ReadonlyArray<Streams[StreamName]> = Object.values(streams)
export const names: ReadonlyArray<StreamName> = all.map((entry) => entry.name)

export const isStreamName = (name: string): name is StreamName => Object.hasOwn(streams, name)

/** Whether a configured catalog may name `name`: a registry stream, or the rejected records' stream. */
export const isOffered = (name: string): boolean => isStreamName(name) || name === rejected.name

/**
 * `did you mean contacts?` for names that are not streams, when each is near one of `known`
 * (Nearest: `contact`, `Companies`, `taxonomy-products`); undefined when one is not, for the
 * message to list the streams instead.
 */
export const didYouMean = (
  unknown: ReadonlyArray<string>,
  known: ReadonlyArray<string> = names,
): string | undefined => {
  const meant = unknown.map((name) => Nearest.nearest(name, known))
  return meant.length > 0 && meant.every((name) => name !== undefined)
    ? `did you mean ${meant.join(", ")}?`
    : undefined
}

/**
 * A record's decoded value and the entry whose Schema decoded it: what the source hands the loader
 * in process, so the loader does not decode the record a second time.
 */
export interface Decoded<A> {
  readonly stream: StreamEntry<A>
  readonly value: A
}

/** Whether `decoded` was decoded by `entry` (and so holds that stream's record). */
export const isDecodedBy = <A>(
  entry: StreamEntry<A>,
  decoded: Decoded<unknown> | undefined,
): decoded is Decoded<A> => decoded !== undefined && decoded.stream === entry

/**
 * Streams whose bought set (the keys bought, each with its day) can live in the destination's
 * ledger instead of in the state: the state field that holds it, and the record field that is
 * its key. A state whose field holds `inLedger` says "the set is in the ledger": the loader
 * writes a ledger row for every record it commits (in the same transaction), and `salesintel-pg
 * state` puts the set back in the state for a reader without the database (the pipe).
 */
export const ledgers: Partial<
  Readonly<Record<StreamName, { readonly stateField: string; readonly key: string }>>
> = { contacts: { stateField: "known", key: "match_id" } }

/** The value of a ledger's state field when its set is in the ledger. */
export const inLedger = "ledger"

/**
 * Keys a stream's records give another stream (a substream's keys: the companies of the contacts
 * held), each by name, so the source (over records) and the loader (over its tables, in SQL) give
 * the same key. `company_domain`: a contact's company's first domain, lower-cased, from the flat
 * field or else the nested company block (the precedence of the contacts table's
 * `company_domains`, whose first element the loader reads).
 */
export const derivedKeys = {
  contacts: {
    company_domain: (contact: RecordOf<"contacts">): string | undefined => {
      const domain = (contact.company_domains ?? contact.company?.domains)?.[0]?.trim().toLowerCase()
      return domain === undefined || domain.length === 0 ? undefined : domain
    },
  },
} as const

export type DerivedKeys = typeof derivedKeys
/** A stream whose records give keys, and the name of a key they give. */
export type DerivedKey = {
  readonly [Name in keyof DerivedKeys]: { readonly stream: Name; readonly key: keyof DerivedKeys[Name] }
}[keyof DerivedKeys]

/**
 * The records a stream's pages carried that did not decode (Page.ts): paid for where the page was
 * credited, but unfit for the stream's table (a contact without its `match_id` has no key to be
 * held by). The source sends each as a record of this stream, beside its stream's records: the
 * stream it was for, its key when the record carries one, why it was rejected, and the record
 * whole as the provider sent it; the loader keeps them in its `_rejected` table, in the same
 * transaction as the records around them. One that carries its key was bought as surely as a
 * record that decoded: its key is held (the source's bought set, the loader's `_rejected` row)
 * until it is due again. A record without its key is held by nothing: it can never be asked for.
 * Discover offers it beside the registry's streams, so a destination can be configured for it; it
 * is not in `streams` (no definition reads it, no typed table is made from it): its records travel
 * with the streams whose pages they came from, and are sent as records only when the configured
 * catalog lists it (a destination may refuse a record of a stream it was not configured for), as a
 * WARN with the record otherwise.
 */
export const RejectedRecord = Schema.Struct({
  stream: Schema.String,
  key: Schema.NullOr(Schema.String),
  reason: Schema.String,
  /** The record as sent (a value that is not a JSON object, under `value`). */
  record: Schema.Record({ key: Schema.String, value: Schema.Unknown }),
  [addedFields.fetchedAt]: Schema.String,
})
export type RejectedRecord = typeof RejectedRecord.Type

const decodeRejected = Schema.decodeUnknownEither(RejectedRecord)

export const rejected = {
  name: "_rejected",
  /** None of the record's fields identifies it: one record, once, per stream (the loader keys it by its JSON). */
  primaryKey: [],
  cursorField: [addedFields.fetchedAt],
  syncModes: ["full_refresh", "incremental"],
  jsonSchema: {
    $schema: "http://json-schema.org/draft-07/schema#",
    type: "object",
    additionalProperties: true,
    required: ["stream", "key", "reason", "record", addedFields.fetchedAt],
    properties: {
      stream: { type: "string", description: "the stream the record was for" },
      key: { type: ["string", "null"], description: "its primary key, when the record carries one" },
      reason: {
        type: "string",
        description: "why it did not decode: the path of the bad value and what was wrong",
      },
      record: {
        type: "object",
        additionalProperties: true,
        description:
          "the record whole, as the provider sent it (a value that is not a JSON object, under `value`)",
      },
      [addedFields.fetchedAt]: timestamp,
    },
  },
  decode: (data: unknown): Either.Either<RejectedRecord, ParseIssue.ParseIssue> =>
    Either.mapLeft(decodeRejected(data), (error) => ParseIssue.fromParseError(error)),
} as const

/**
 * The known records' identities (contacts.known, a file's or a query's rows) looked up on a day and
 * found held whole: each matched no one, or every contact it matched was bought. Sent only under
 * `salesintel sync`, whose loader keeps them in its `_known_done` table in the transaction of the
 * STATE that follows them (the contacts' `emails` state field then says "ledger"), so a run looks
 * up again only what is due, and its checkpoints stay small however many identities a team keeps.
 * Never offered by discover: a source without the sync's database keeps them in its state.
 */
export const KnownDoneRecord = Schema.Struct({
  stream: Schema.String,
  /** The identities' keys (an email, `name:...`, `linkedin:...`, `match_id:...`). */
  keys: Schema.Array(Schema.String),
  [addedFields.fetchedAt]: Schema.String,
})
export type KnownDoneRecord = typeof KnownDoneRecord.Type

const decodeKnownDone = Schema.decodeUnknownEither(KnownDoneRecord)

export const knownDone = {
  name: "_known_done",
  /** The state field that holds a stream's identities done, "ledger" when they are in `_known_done`. */
  stateFields: { contacts: "emails" } as Partial<Readonly<Record<StreamName, string>>>,
  decode: (data: unknown): Either.Either<KnownDoneRecord, ParseIssue.ParseIssue> =>
    Either.mapLeft(decodeKnownDone(data), (error) => ParseIssue.fromParseError(error)),
} as const

/**
 * A record's primary key as text, read from its raw JSON by `entry`'s key paths: the one value of a
 * one-field key, a JSON array of several; undefined when a part is missing or not a string or number.
 */
export const keyOfRaw = (
  entry: { readonly primaryKey: ReadonlyArray<ReadonlyArray<string>> },
  raw: unknown,
) => {
  const parts: Array<string | number> = []
  for (const path of entry.primaryKey) {
    let value: unknown = raw
    for (const field of path)
      value =
        typeof value === "object" && value !== null && !Array.isArray(value)
          ? (value as Record<string, unknown>)[field]
          : undefined
    if (typeof value === "number" || (typeof value === "string" && value.length > 0)) parts.push(value)
    else return undefined
  }
  return parts.length === 1 ? String(parts[0]) : parts.length === 0 ? undefined : JSON.stringify(parts)
}
