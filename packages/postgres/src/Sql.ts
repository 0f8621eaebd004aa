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
