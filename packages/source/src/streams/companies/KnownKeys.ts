/**
 * Companies named where a team keeps them: `companies.domains_file` (CSV with a header row, or
 * NDJSON) and `companies.domains_query` (SQL on the target's database, under `salesintel sync`),
 * each row a `domain`, a `name`, or both. They join the configured `domains` and `names`. Checked
 * whole before the read's first credit (Read.ts asks `check` first), so a bad row refuses the run
 * with nothing bought.
 */
import * as Chunk from "effect/Chunk"
import * as Effect from "effect/Effect"
import * as Either from "effect/Either"
import * as Stream from "effect/Stream"
import type { CompaniesConfig } from "../../Config.ts"
import * as File from "../../known/File.ts"
import * as Rows from "../../known/Rows.ts"

const fields = ["domain", "name"] as const

interface Keys {
  readonly domain: string | undefined
  readonly name: string | undefined
}

const text = (field: string, value: string | undefined): Either.Either<string | undefined, string> => {
  const trimmed = value?.trim()
  if (trimmed === undefined || trimmed.length === 0) return Either.right(undefined)
  // The provider takes a comma-separated list: a comma would split the key in two.
  if (trimmed.includes(",") || trimmed.includes("\u0000"))
    return Either.left(`${field} "${trimmed}" holds a comma or a NUL, which the provider's list cannot carry`)
  return Either.right(trimmed)
}

const decode = Rows.decodeRow(fields, (row) =>
  Either.flatMap(Either.all([text("domain", row.domain), text("name", row.name)]), ([domain, name]) =>
    domain === undefined && name === undefined
      ? Either.left("expected a domain, a name, or both")
      : Either.right<Keys>({ domain, name }),
  ),
)

/** A file or query of companies is configured. */
export const configured = (settings: CompaniesConfig): boolean =>
  settings.domains_file !== undefined || settings.domains_query !== undefined

const rows = (settings: CompaniesConfig): Stream.Stream<Rows.Row, Rows.KnownInputError> =>
  Stream.concat(
    settings.domains_file === undefined
      ? Stream.empty
      : File.rows("companies.domains_file", settings.domains_file, fields),
    settings.domains_query === undefined
      ? Stream.empty
      : Rows.queryRows("companies.domains_query", settings.domains_query),
  )

/** Every row checked, before anything is bought. */
export const check = (settings: CompaniesConfig) =>
  Rows.checked("companies", rows(settings), decode, (values) => Effect.succeed(values.length))

/**
 * The domains and names the rows give, in order (checked first: `check`). Held whole, as the
 * configured lists are (a team's accounts number thousands, not millions): each kind's keys are
 * deduplicated and diffed against what was appended as the read begins (companies/CompaniesState.ts).
 */
export const keys = (
  settings: CompaniesConfig,
): Effect.Effect<
  { readonly domains: ReadonlyArray<string>; readonly names: ReadonlyArray<string> },
  Rows.KnownInputError
> =>
  Effect.map(
    Stream.runCollect(Stream.filterMap(rows(settings), (row) => Either.getRight(decode(row)))),
    (chunk) => {
      const all = Chunk.toReadonlyArray(chunk)
      return {
        domains: all.flatMap((row) => (row.domain === undefined ? [] : [row.domain])),
        names: all.flatMap((row) => (row.name === undefined ? [] : [row.name])),
      }
    },
  )
