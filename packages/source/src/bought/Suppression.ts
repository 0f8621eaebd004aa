/**
 * Suppressions: the people and companies a target was asked to forget (`salesintel forget`), kept
 * as keyed hashes so that the list itself names no one. Each identifier is normalised (as the
 * provider's records and a user's input may spell it differently), prefixed with its kind and
 * hashed with HMAC-SHA256 under the target's own random key. Without the key a hash cannot be
 * tested against a guessed email (unlike a plain SHA-256 of an email, which a list of addresses
 * reverses); with it, anyone can check whether a given identifier was forgotten, which is what the
 * connector itself must do before it buys. The key is held by the target (and in an export file),
 * so it protects the list where the list travels alone, not a database read whole.
 */
import { createHmac, randomBytes } from "node:crypto"
import { readFileSync } from "node:fs"
import * as Either from "effect/Either"
import * as Schema from "effect/Schema"

/** What an identifier is: a person's match id, email or LinkedIn URL, or a company's domain. */
export const kinds = ["match_id", "email", "linkedin_url", "domain"] as const
export type Kind = (typeof kinds)[number]

/** A domain or URL as written anywhere: no scheme, no `www.`, no trailing slash, lower case. */
const bare = (text: string): string =>
  text
    .trim()
    .toLowerCase()
    .replace(/^https?:\/\//, "")
    .replace(/^www\./, "")
    .replace(/\/+$/, "")

/** The form an identifier is hashed in, so that the same person gives the same hash however written. */
export const normalise = (kind: Kind, value: string): string => {
  switch (kind) {
    case "match_id":
      return value.trim()
    case "email":
      return value.trim().toLowerCase()
    case "linkedin_url":
    case "domain":
      return bare(value)
  }
}

/** A new random key (32 bytes), base64: created once per target. */
export const newKey = (): string => randomBytes(32).toString("base64")

/** The keyed hash of an identifier (base64url of HMAC-SHA256 over `kind:normalised`). */
export const hash = (key: string, kind: Kind, value: string): string =>
  hashWith(Buffer.from(key, "base64"), kind, value)

const hashWith = (key: Buffer, kind: Kind, value: string): string =>
  createHmac("sha256", key)
    .update(`${kind}:${normalise(kind, value)}`)
    .digest("base64url")

/** A list of suppressions under one key: the hashes, each in a set. */
export interface Keyed {
  readonly key: string
  readonly hashes: ReadonlySet<string>
}

/** Tests identifiers against every list (a target's, a file's). */
export interface Matcher {
  /** No suppression at all: the reads take their usual, cheapest paths. */
  readonly empty: boolean
  readonly has: (kind: Kind, value: string | null | undefined) => boolean
}

export const matcher = (lists: ReadonlyArray<Keyed>): Matcher => {
  // Each key decoded once: a read tests every id its listings name.
  const held = lists
    .filter((list) => list.hashes.size > 0)
    .map((list) => ({ key: Buffer.from(list.key, "base64"), hashes: list.hashes }))
  return {
    empty: held.length === 0,
    has: (kind, value) =>
      value !== null &&
      value !== undefined &&
      value.trim() !== "" &&
      held.some((list) => list.hashes.has(hashWith(list.key, kind, value))),
  }
}

export const none: Matcher = matcher([])

/**
 * The file `salesintel forget --export` writes and the source's `suppress_file` reads: the key and
 * the hashes, no identifier in the clear.
 */
export const ExportFile = Schema.Struct({
  salesintel_suppressions: Schema.Literal(1),
  key: Schema.String.pipe(Schema.pattern(/^[A-Za-z0-9+/]{43}=$/)).annotations({
    message: () => "expected the 32-byte key in base64, as salesintel forget --export writes it",
  }),
  hashes: Schema.Array(Schema.String),
})
export type ExportFile = typeof ExportFile.Type

/** An export file's text, decoded: its list, or what is wrong with it. */
export const decodeExport = (text: string): Either.Either<Keyed, string> =>
  Either.flatMap(Either.try({ try: (): unknown => JSON.parse(text), catch: () => "not JSON" }), (json) =>
    Either.match(Schema.decodeUnknownEither(ExportFile)(json), {
      onLeft: (error) =>
        Either.left(
          `expected a file written by salesintel forget --export (${error.message.split("\n")[0]})`,
        ),
      onRight: (file) => Either.right({ key: file.key, hashes: new Set(file.hashes) }),
    }),
  )

/** The config's `suppress_file`, read and decoded; a file that does not decode is refused with its path. */
export const fromFile = (path: string): Either.Either<Keyed, string> =>
  Either.flatMap(
    Either.try({
      try: () => readFileSync(path, "utf8"),
      catch: (error) =>
        `suppress_file: cannot read ${path}: ${error instanceof Error ? error.message : String(error)}`,
    }),
    (text) => Either.mapLeft(decodeExport(text), (why) => `suppress_file: ${path}: ${why}`),
  )
