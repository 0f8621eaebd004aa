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
