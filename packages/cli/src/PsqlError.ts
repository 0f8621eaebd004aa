/**
 * A statement's error as psql prints it (libpq's pqBuildErrorMessage3 at its default verbosity):
 * `ERROR:  message`, the line of the statement holding the position with a caret under it (`LINE
 * 2:   compnay_name from contacts`), then `DETAIL:`, `HINT:`, `QUERY:` and `CONTEXT:` when the
 * server sent them. A user who knows psql reads it at once, and the hint (`Perhaps you meant to
 * reference the column "contacts.company_name"`) is often the answer.
 */
import type { Database } from "@salesintel/postgres"

// libpq's reportErrorPosition: a line wider than this is cut around the position.
const displaySize = 60
const minRightCut = 10

/**
 * `LINE n: ` and the line of `query` holding character `position` (from 1), cut with `...` as libpq
 * cuts a long one, and the caret line; "" when the position is past the query. Tabs are shown as
 * spaces (as libpq does), every character one column wide.
 */
export const positionLines = (query: string, position: number): string => {
  const chars = Array.from(query)
  const loc = position - 1
  if (loc < 0 || loc > chars.length) return ""
  let line = 1
  let begin = 0
  let end = chars.length
  for (let index = 0; index < chars.length; index++) {
    const char = chars[index]
    if (char !== "\r" && char !== "\n") continue
    if (index >= loc) {
      end = index
      break
    }
    // \r\n is one line end; a \r or a \n alone is one too.
    if (char === "\r" || index === 0 || chars[index - 1] !== "\r") line++
    begin = index + 1
  }
  let cutBegin = false
  let cutEnd = false
  if (end - begin > displaySize) {
    if (begin + displaySize >= loc + minRightCut) {
      end = begin + displaySize
      cutEnd = true
    } else {
      if (loc + minRightCut < end) {
        end = loc + minRightCut
        cutEnd = true
      }
      if (end - begin > displaySize) {
        begin = end - displaySize
        cutBegin = true
      }
    }
  }
  const prefix = `LINE ${line}: ${cutBegin ? "..." : ""}`
  const text = chars.slice(begin, end).join("").replaceAll("\t", " ")
  return `${prefix}${text}${cutEnd ? "..." : ""}\n${" ".repeat(prefix.length + loc - begin)}^\n`
}

/** The server's error about `statement` as psql prints it, ending with a newline. */
export const format = (error: Database.ServerError, statement: string): string => {
  // The position is in the statement; failing that, in the query a function ran (its QUERY line follows).
  const [query, position] =
    error.position !== undefined
      ? [statement, error.position]
      : error.internalPosition !== undefined && error.internalQuery !== undefined
        ? [error.internalQuery, error.internalPosition]
        : [undefined, undefined]
  const lines = [
    `${error.severity}:  ${error.message}\n`,
    query !== undefined && position !== undefined ? positionLines(query, position) : "",
    error.detail !== undefined ? `DETAIL:  ${error.detail}\n` : "",
    error.hint !== undefined ? `HINT:  ${error.hint}\n` : "",
    error.internalQuery !== undefined ? `QUERY:  ${error.internalQuery}\n` : "",
    error.where !== undefined ? `CONTEXT:  ${error.where}\n` : "",
  ]
  return lines.join("")
}
