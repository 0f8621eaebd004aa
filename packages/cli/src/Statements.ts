/**
 * SQL text split into its statements at the semicolons that end them, the way psql does: not
 * inside a 'string' (or E'string' with backslash escapes), a "quoted identifier", a $tag$dollar
 * quote$tag$, a -- comment or a nested block comment. `salesintel sql "select 1; select 2"` runs
 * and prints each statement; the database's query call takes one statement at a time.
 *
 * A backslash where a statement would begin starts one of psql's meta-commands (`\d contacts`): it
 * runs to the end of its line (or a semicolon, so that `\d; select 1` works on one shell line) and
 * is kept whole, backslash first, for Describe.ts.
 */

/**
 * The statements of `text`, trimmed, without their semicolons; empty ones (`;;`) are dropped. A
 * meta-command is one item, starting with its backslash.
 */
export const split = (text: string): ReadonlyArray<string> => {
  const statements: Array<string> = []
  let start = 0
  let index = 0
  const at = (offset: number) => text[index + offset] ?? ""
  while (index < text.length) {
    const char = text[index] ?? ""
    if (char === "\\" && text.slice(start, index).trim() === "") {
      const end = /[;\n]/.exec(text.slice(index))
      index = end === null ? text.length : index + end.index
      statements.push(text.slice(start, index))
      start = index
    } else if (char === "'") {
      // E'...' (or e'...') takes backslash escapes; a standard string only doubles its quote.
      const escapes = /[eE]/.test(text[index - 1] ?? "") && !/\w/.test(text[index - 2] ?? "")
      index++
      while (index < text.length) {
        if (escapes && at(0) === "\\") index += 2
        else if (at(0) === "'" && at(1) === "'") index += 2
        else if (at(0) === "'") break
        else index++
      }
      index++
    } else if (char === '"') {
      index = text.indexOf('"', index + 1)
      while (index !== -1 && text[index + 1] === '"') index = text.indexOf('"', index + 2)
      index = index === -1 ? text.length : index + 1
    } else if (char === "-" && at(1) === "-") {
      const end = text.indexOf("\n", index)
      index = end === -1 ? text.length : end + 1
    } else if (char === "/" && at(1) === "*") {
      let depth = 1
      index += 2
      while (index < text.length && depth > 0) {
        if (at(0) === "/" && at(1) === "*") {
          depth++
          index += 2
        } else if (at(0) === "*" && at(1) === "/") {
          depth--
          index += 2
        } else index++
      }
    } else if (char === "$") {
      const tag = /^\$([A-Za-z_][A-Za-z0-9_]*)?\$/.exec(text.slice(index))
      // $1 (a parameter) is no quote; neither is a $ inside an identifier (a$b).
      if (tag !== null && !/[\w$]/.test(text[index - 1] ?? "")) {
        const end = text.indexOf(tag[0], index + tag[0].length)
        index = end === -1 ? text.length : end + tag[0].length
      } else index++
    } else if (char === ";") {
      statements.push(text.slice(start, index))
      index++
      start = index
    } else index++
  }
  statements.push(text.slice(start))
  return statements.map((statement) => statement.trim()).filter((statement) => !isEmpty(statement))
}

/** Only whitespace and comments: nothing for the server to run. */
const isEmpty = (statement: string) =>
  statement
    .replace(/--[^\n]*/g, "")
    .replace(/\/\*[\s\S]*?\*\//g, "")
    .trim().length === 0
