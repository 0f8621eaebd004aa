import { describe, expect, it } from "vitest"
import { escapeText, table } from "./Html.ts"

describe("Html", () => {
  it("escapes every character that could open a tag, an entity or leave a quoted attribute", () => {
    expect(escapeText(`<a href="x" title='y'>&amp;</a>`)).toBe(
      "&lt;a href=&quot;x&quot; title=&#39;y&#39;&gt;&amp;amp;&lt;/a&gt;",
    )
    expect(escapeText("Zoom Video Communications")).toBe("Zoom Video Communications")
  })

  it("a table escapes its headings and cells and right-aligns numbers, grouped by thousands", () => {
    const html = table({ columns: ["<b>name</b>", "n"], rows: [["<script>x</script>", 12345]] })
    expect(html).toBe(
      '<table><thead><tr><th>&lt;b&gt;name&lt;/b&gt;</th><th>n</th></tr></thead><tbody><tr><td>&lt;script&gt;x&lt;/script&gt;</td><td class="num">12,345</td></tr></tbody></table>',
    )
  })

  it("keeps the cells of the columns named one-line to one line, the others free to wrap", () => {
    const html = table({
      columns: ["when", "evidence"],
      rows: [["2026-11-20", "a long text"]],
      oneLine: ["when"],
    })
    expect(html).toContain('<td class="line">2026-11-20</td><td>a long text</td>')
  })
})
