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
}

const number = new Intl.NumberFormat("en-US", { maximumFractionDigits: 2 })

const cell = (value: Cell, tag: "td" | "th"): string =>
  typeof value === "number"
    ? `<${tag} class="num">${escapeText(number.format(value))}</${tag}>`
    : `<${tag}>${escapeText(value)}</${tag}>`

/** An HTML table of `data`, every value escaped. */
export const table = (data: DataTable): string =>
  `<table><thead><tr>${data.columns.map((column) => cell(column, "th")).join("")}</tr></thead><tbody>${data.rows
    .map((row) => `<tr>${row.map((value) => cell(value, "td")).join("")}</tr>`)
    .join("")}</tbody></table>`
