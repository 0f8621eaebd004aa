/**
 * A query result as an aligned text table, the way psql prints one: a header, a rule, one line per
 * row, numbers right-aligned, NULL shown as such, long or multi-line values shortened to fit.
 */

const maxWidth = 60

const cell = (value: unknown): string => {
  if (value === null || value === undefined) return "NULL"
  if (value instanceof Date) return value.toISOString()
  if (typeof value === "object") return JSON.stringify(value)
  return String(value)
}

const fit = (text: string): string => {
  const oneLine = text.replace(/[\r\n\t]+/g, " ")
  return oneLine.length > maxWidth ? `${oneLine.slice(0, maxWidth - 1)}…` : oneLine
}

const isNumeric = (value: unknown) =>
  typeof value === "number" ||
  typeof value === "bigint" ||
  (typeof value === "string" && /^-?\d+(\.\d+)?$/.test(value))

export const format = (
  columns: ReadonlyArray<string>,
  rows: ReadonlyArray<Readonly<Record<string, unknown>>>,
): string => {
  if (columns.length === 0) return `(${rows.length} ${rows.length === 1 ? "row" : "rows"})\n`
  const texts = rows.map((row) => columns.map((column) => fit(cell(row[column]))))
  const widths = columns.map((column, index) =>
    Math.max(column.length, ...texts.map((line) => line[index]?.length ?? 0)),
  )
  const numeric = columns.map(
    (column) => rows.length > 0 && rows.every((row) => row[column] === null || isNumeric(row[column])),
  )
  const pad = (text: string, index: number) =>
    numeric[index] ? text.padStart(widths[index] ?? 0) : text.padEnd(widths[index] ?? 0)
  const lines = [
    columns.map((column, index) => column.padEnd(widths[index] ?? 0)).join(" | "),
    widths.map((width) => "-".repeat(width)).join("-+-"),
    ...texts.map((line) => line.map(pad).join(" | ")),
    `(${rows.length} ${rows.length === 1 ? "row" : "rows"})`,
  ]
  return `${lines.map((line) => line.trimEnd()).join("\n")}\n`
}
