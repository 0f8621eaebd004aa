/**
 * Where known contacts come from: `contacts.emails` (entries of the email kind), `contacts.known`
 * (inline entries), `contacts.known_file` (CSV or NDJSON) and `contacts.known_query` (SQL on the
 * target's database, under `salesintel sync`), as one stream of rows decoded by one function
 * (Identity.fromFields). `check` reads them all once before the first credit: a bad row anywhere
 * refuses the run, named by where it is.
 */

import * as Effect from "effect/Effect"
import * as Either from "effect/Either"
import * as Stream from "effect/Stream"
import type { ContactsConfig } from "../../Config.ts"
import * as File from "../../known/File.ts"
import * as Rows from "../../known/Rows.ts"
import * as Identity from "./Identity.ts"
import type * as KnownDone from "./KnownDone.ts"

/** Some known contact is configured, by any of the ways in. */
export const configured = (settings: ContactsConfig): boolean =>
  settings.emails.length > 0 ||
  settings.known.length > 0 ||
  settings.known_file !== undefined ||
  settings.known_query !== undefined

const rows = (settings: ContactsConfig): Stream.Stream<Rows.Row, Rows.KnownInputError> =>
  Stream.concat(
    Stream.fromIterable([
      ...settings.emails.map((email, index) => ({ where: `contacts.emails[${index}]`, fields: { email } })),
      ...settings.known.map((entry, index) => ({ where: `contacts.known[${index}]`, fields: entry })),
    ]),
    Stream.concat(
      settings.known_file === undefined
        ? Stream.empty
        : File.rows("contacts.known_file", settings.known_file, Identity.fields),
      settings.known_query === undefined
        ? Stream.empty
        : Rows.queryRows("contacts.known_query", settings.known_query),
    ),
  )

const decode = Rows.decodeRow(Identity.fields, Identity.fromFields)

/**
 * Every row checked before the first credit; the identities due a lookup, counted a chunk at a
 * time (duplicates counted each time: an upper bound the read revises as it ends).
 */
export const check = (settings: ContactsConfig, done: KnownDone.KnownDone) =>
  Rows.checked("known contacts", rows(settings), decode, (identities) =>
    Effect.map(done.dueOf(identities.map(Identity.keyOf)), (due) =>
      identities.reduce((sum, identity) => sum + (due.has(Identity.keyOf(identity)) ? 1 : 0), 0),
    ),
  )

/** The identities, in order (checked first: `check`). */
export const identities = (
  settings: ContactsConfig,
): Stream.Stream<Identity.Identity, Rows.KnownInputError> =>
  Stream.filterMap(rows(settings), (row) => Either.getRight(decode(row)))
