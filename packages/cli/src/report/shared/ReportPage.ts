/**
 * The report as one self-contained HTML page: inline CSS, charts as inline SVG, no script and
 * nothing loaded by URL, so it opens offline, mails as one file and prints. Each section has its
 * chart and the numbers behind it as a table; a section without data says so instead.
 */
import { type DataTable, escapeText, table } from "./Html.ts"

export interface Section {
  readonly id: string
  readonly title: string
  /** One or two sentences on what the chart counts. */
  readonly description: string
  /** The chart's SVG markup, or undefined when there is no data to chart. */
  readonly svg: string | undefined
  /** What the section says when it has nothing to show (default: "no data"). */
  readonly empty?: string
  /** The table is the section's content, shown open (a list to act on, not a chart's numbers). */
  readonly tableOpen?: boolean
  readonly data: DataTable
}

export interface PageContent {
  readonly title: string
  /** Lines under the title: where the data comes from, when the report was made. */
  readonly subtitle: ReadonlyArray<string>
  /** Headline figures: label and value. */
  readonly figures: ReadonlyArray<readonly [string, string]>
  readonly sections: ReadonlyArray<Section>
}

const style = `
body { font-family: system-ui, -apple-system, "Segoe UI", Roboto, Helvetica, Arial, sans-serif; margin: 0; color: #1f2937; background: #f8fafc; }
main { max-width: 1100px; margin: 0 auto; padding: 24px; }
header h1 { margin: 0 0 4px; font-size: 26px; }
header p { margin: 2px 0; color: #4b5563; }
.figures { display: flex; gap: 16px; flex-wrap: wrap; margin: 16px 0 8px; }
.figure { background: #fff; border: 1px solid #e5e7eb; border-radius: 8px; padding: 10px 16px; }
.figure b { display: block; font-size: 22px; }
nav a { margin-right: 14px; color: #2563eb; }
section { background: #fff; border: 1px solid #e5e7eb; border-radius: 8px; padding: 16px 20px; margin: 20px 0; }
section h2 { margin: 0 0 6px; font-size: 19px; }
section p { margin: 0 0 10px; color: #4b5563; }
.chart svg { max-width: 100%; height: auto; }
.list { overflow-x: auto; }
td.line { white-space: nowrap; }
.nodata { padding: 24px; text-align: center; color: #6b7280; background: #f3f4f6; border-radius: 6px; }
details { margin-top: 10px; }
summary { cursor: pointer; color: #2563eb; }
table { border-collapse: collapse; margin-top: 8px; font-size: 13px; }
th, td { border-bottom: 1px solid #e5e7eb; padding: 4px 10px; text-align: left; }
th { background: #f3f4f6; }
.num { text-align: right; font-variant-numeric: tabular-nums; }
.print-numbers { display: none; }
@media print {
  body { background: #fff; }
  details { display: none; }
  .print-numbers { display: block; }
}
`

/**
 * The chart named for what it shows, to screen readers and HTML checkers alike: a `<title>` first
 * in the SVG (its accessible name), and `role="img"`.
 */
export const titled = (svg: string, title: string): string =>
  svg.replace(
    /^<svg\b([^>]*)>/,
    (_, attributes: string) => `<svg${attributes} role="img"><title>${escapeText(title)}</title>`,
  )

const section = (content: Section): string => {
  const rows = content.data.rows.length
  const open = content.tableOpen === true && rows > 0
  const chart =
    content.svg !== undefined
      ? `<div class="chart">${titled(content.svg, content.title)}</div>`
      : open
        ? ""
        : `<div class="nodata">${escapeText(content.empty ?? "no data")}</div>`
  const numbers =
    rows === 0
      ? ""
      : open
        ? `<div class="list">${table(content.data)}</div>`
        : // Folded on screen; a closed <details> prints nothing, so a print gets the table open.
          `<details><summary>The numbers (${content.data.rows.length} ${content.data.rows.length === 1 ? "row" : "rows"})</summary>${table(content.data)}</details><div class="print-numbers">${table(content.data)}</div>`
  return `<section id="${escapeText(content.id)}"><h2>${escapeText(content.title)}</h2><p>${escapeText(content.description)}</p>${chart}${numbers}</section>`
}

/** The whole HTML document. */
export const render = (content: PageContent): string => `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>${escapeText(content.title)}</title>
<style>${style}</style>
</head>
<body>
<main>
<header><h1>${escapeText(content.title)}</h1>${content.subtitle.map((line) => `<p>${escapeText(line)}</p>`).join("")}</header>
<div class="figures">${content.figures
  .map(([label, value]) => `<div class="figure"><b>${escapeText(value)}</b>${escapeText(label)}</div>`)
  .join("")}</div>
<nav>${content.sections.map((s) => `<a href="#${escapeText(s.id)}">${escapeText(s.title)}</a>`).join("")}</nav>
${content.sections.map(section).join("\n")}
</main>
</body>
</html>
`
