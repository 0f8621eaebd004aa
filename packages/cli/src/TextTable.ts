/**
 * A query result as an aligned text table, the way psql prints one: a header, a rule, one line per
 * row, numbers right-aligned, NULL shown as NULL (the empty string as nothing), multi-line values
 * on one line; values are cut (with …) only to a `maxWidth` the caller asks for.
 */

/** A non-NULL value as text: dates in ISO 8601, JSON values (jsonb, arrays) as JSON. */
export const cellText = (value: unknown): string => {
  if (value instanceof Date) return value.toISOString()
  if (typeof value === "object" && value !== null) return JSON.stringify(value, jsonSafe)
  return String(value)
}

/** For JSON.stringify: a bigint as its decimal text (JSON has no 64-bit integers). */
export const jsonSafe = (_key: string, value: unknown): unknown =>
  typeof value === "bigint" ? value.toString() : value

const cell = (value: unknown): string => (value === null || value === undefined ? "NULL" : cellText(value))

const fit = (text: string, maxWidth: number | undefined): string => {
  const oneLine = text.replace(/[\r\n\t]+/g, " ")
  return maxWidth !== undefined && oneLine.length > maxWidth
    ? `${oneLine.slice(0, Math.max(0, maxWidth - 1))}…`
    : oneLine
}

const isNumeric = (value: unknown) =>
  typeof value === "number" ||
  typeof value === "bigint" ||
  (typeof value === "string" && /^-?\d+(\.\d+)?$/.test(value))

/** A result as an aligned table; `rows` are arrays of values in the order of `columns`. */
export const format = (
  columns: ReadonlyArray<string>,
  rows: ReadonlyArray<ReadonlyArray<unknown>>,
  options: {
    readonly maxWidth?: number | undefined
    /** Which columns are numbers (right-aligned); default: those whose every value looks like one. */
    readonly numeric?: ReadonlyArray<boolean> | undefined
  } = {},
): string => {
  const count = `(${rows.length} ${rows.length === 1 ? "row" : "rows"})`
  if (columns.length === 0) return `${count}\n`
  const texts = rows.map((row) => columns.map((_, index) => fit(cell(row[index]), options.maxWidth)))
  const widths = columns.map((column, index) =>
    Math.max(column.length, ...texts.map((line) => line[index]?.length ?? 0)),
  )
  const numeric =
    options.numeric ??
    columns.map(
      (_, index) => rows.length > 0 && rows.every((row) => row[index] === null || isNumeric(row[index])),
    )
  const pad = (text: string, index: number) =>
    numeric[index] ? text.padStart(widths[index] ?? 0) : text.padEnd(widths[index] ?? 0)
  const lines = [
    columns.map((column, index) => column.padEnd(widths[index] ?? 0)).join(" | "),
    widths.map((width) => "-".repeat(width)).join("-+-"),
    ...texts.map((line) => line.map(pad).join(" | ")),
    count,
  ]
  return `${lines.map((line) => line.trimEnd()).join("\n")}\n`
}

/** Rows as objects, as JSON shows them: a column whose name came before is named `name_2`, `name_3`... */
export const objects = (
  columns: ReadonlyArray<string>,
  rows: ReadonlyArray<ReadonlyArray<unknown>>,
): ReadonlyArray<Readonly<Record<string, unknown>>> => {
  const names: Array<string> = []
  for (const column of columns) {
    let name = column
    for (let n = 2; names.includes(name); n++) name = `${column}_${n}`
    names.push(name)
  }
  return rows.map((row) => Object.fromEntries(names.map((name, index) => [name, row[index]])))
}
