/**
 * Encodes cells for `COPY ... FROM` in Postgres's text format (tab-separated, `\N` for NULL,
 * backslash escapes), which both a server (COPY FROM STDIN) and PGlite (COPY FROM '/dev/blob')
 * read. This is also where the NUL policy is applied (see Nul.ts): Postgres text cannot hold
 * U+0000, so it is removed from text cells and escaped inside JSON.
 */

import { jsonText, stripNul } from "./Nul.ts"
import type { ColumnType } from "./Table.ts"

/** JSON text to write into a jsonb cell as it is (already checked clean: see RecordLine). */
export class JsonText {
  constructor(readonly text: string) {}
}

const specials = /[\\\t\n\r\0]/
const specialsGlobal = /[\\\t\n\r\0]/g
const escapes: Record<string, string> = { "\\": "\\\\", "\t": "\\t", "\n": "\\n", "\r": "\\r", "\0": "" }

/** A string as a COPY text field: backslash, tab, newline and CR escaped, NUL removed. */
export const escapeField = (text: string): string =>
  specials.test(text) ? text.replace(specialsGlobal, (char) => escapes[char] ?? "") : text

export const nullField = "\\N"

/** A Postgres array literal of text elements (each quoted), before COPY escaping. */
const arrayLiteral = (items: ReadonlyArray<unknown>): string =>
  `{${items
    .map((item) =>
      item === null || item === undefined
        ? "NULL"
        : `"${stripNul(String(item)).replace(/[\\"]/g, (char) => `\\${char}`)}"`,
    )
    .join(",")}}`

/** One cell of the given column type. Values the mapper could not type become NULL. */
export const encodeCell = (type: ColumnType, value: unknown): string => {
  if (value === null || value === undefined) return nullField
  switch (type) {
    case "text":
      return escapeField(String(value))
    case "bigint":
    case "integer":
    case "numeric":
      return typeof value === "number" && Number.isFinite(value) ? String(value) : nullField
    case "boolean":
      return typeof value === "boolean" ? (value ? "t" : "f") : nullField
    case "timestamptz":
    case "date":
      return typeof value === "string" ? escapeField(value) : nullField
    case "text[]":
      return Array.isArray(value) ? escapeField(arrayLiteral(value)) : nullField
    case "jsonb":
      return escapeField(value instanceof JsonText ? value.text : jsonText(value))
  }
}
