/**
 * Identifier quoting. Schema names come from users (`My "odd" Schema`), so every identifier that
 * reaches SQL text goes through `ident`; values always travel as parameters or COPY data.
 */

/** A quoted identifier: double quotes doubled, the whole wrapped in double quotes. */
export const ident = (name: string): string => `"${name.replaceAll('"', '""')}"`

/** schema.table, both quoted. */
export const qualified = (schema: string, name: string): string => `${ident(schema)}.${ident(name)}`

/** The default schema the tables live in. */
export const defaultSchema = "salesintel"

/**
 * A string literal for SQL text the DDL writes itself (comments, the label rows): single quotes
 * doubled. Only for the connector's own constants; values from records travel as COPY data.
 */
export const literal = (text: string): string => `'${text.replaceAll("'", "''")}'`

/** Days since 1970-01-01 (UTC) of a timestamptz expression, as the source counts them. */
export const epochDaySql = (expression: string): string =>
  `floor(extract(epoch from ${expression}) / 86400)::integer`

/** The day a row (aliased `alias`) was bought: when it was fetched (or, for older rows, loaded). */
export const fetchedDaySql = (alias: string): string =>
  epochDaySql(`coalesce(${alias}.fetched_at, ${alias}."_synced_at")`)
