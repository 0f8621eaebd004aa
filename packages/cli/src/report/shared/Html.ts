/**
 * HTML text from values that may come from the database: every string goes through `escapeText`, so
 * a company, product or category named `<script>` shows as text and never runs.
 */

const entities: Readonly<Record<string, string>> = {
  "&": "&amp;",
  "<": "&lt;",
  ">": "&gt;",
  '"': "&quot;",
  "'": "&#39;",
}

/** Text safe in element content and in quoted attribute values. */
export const escapeText = (text: string): string => text.replace(/[&<>"']/g, (char) => entities[char] ?? char)

export type Cell = string | number

export interface DataTable {
  readonly columns: ReadonlyArray<string>
  /** Numbers are right-aligned and grouped by thousands; strings are escaped. */
  readonly rows: ReadonlyArray<ReadonlyArray<Cell>>
  /** Columns whose cells keep to one line (a date or a range cut at its hyphen reads as two). */
  readonly oneLine?: ReadonlyArray<string>
}

const number = new Intl.NumberFormat("en-US", { maximumFractionDigits: 2 })

const cell = (value: Cell, tag: "td" | "th", oneLine = false): string =>
  typeof value === "number"
    ? `<${tag} class="num">${escapeText(number.format(value))}</${tag}>`
    : `<${tag}${oneLine ? ' class="line"' : ""}>${escapeText(value)}</${tag}>`

/** An HTML table of `data`, every value escaped. */
export const table = (data: DataTable): string => {
  const oneLine = data.columns.map((column) => data.oneLine?.includes(column) === true)
  return `<table><thead><tr>${data.columns.map((column) => cell(column, "th")).join("")}</tr></thead><tbody>${data.rows
    .map((row) => `<tr>${row.map((value, index) => cell(value, "td", oneLine[index])).join("")}</tr>`)
    .join("")}</tbody></table>`
}
