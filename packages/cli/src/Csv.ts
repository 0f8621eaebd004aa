/**
 * A query result as CSV (RFC 4180): a header line, then one line per row, lines ended by CRLF;
 * a field holding a comma, a double quote, CR or LF is quoted, its quotes doubled. NULL is an
 * empty field and the empty string a quoted one (`""`), so the two stay apart (as in COPY ... CSV).
 */
import { cellText } from "./TextTable.ts"

const field = (text: string): string =>
  /[",\r\n]/.test(text) || text.length === 0 ? `"${text.replaceAll('"', '""')}"` : text

export const format = (
  columns: ReadonlyArray<string>,
  rows: ReadonlyArray<ReadonlyArray<unknown>>,
): string => {
  if (columns.length === 0) return ""
  const lines = [
    columns.map(field).join(","),
    ...rows.map((row) =>
      columns
        .map((_, index) => {
          const value = row[index]
          return value === null || value === undefined ? "" : field(cellText(value))
        })
        .join(","),
    ),
  ]
  return `${lines.join("\r\n")}\r\n`
}
