/**
 * A file of known records, read as a stream of rows (Rows.Row): CSV with a header row (.csv), or
 * one JSON object a line (.ndjson, .jsonl). Columns and fields are named as the config's fields;
 * one that is not is refused at its line, so a typo is not read as a blank.
 */
import { createReadStream } from "node:fs"
import { access } from "node:fs/promises"
import * as readline from "node:readline"
import * as Effect from "effect/Effect"
import * as Stream from "effect/Stream"
import { KnownInputError, type Row } from "./Rows.ts"

type Format = "csv" | "ndjson"

const formatOf = (path: string): Format | undefined =>
  /\.csv$/i.test(path) ? "csv" : /\.(ndjson|jsonl)$/i.test(path) ? "ndjson" : undefined

/** One CSV line's cells: commas separate, double quotes enclose a cell, "" is a quote inside one. */
export const csvCells = (line: string): ReadonlyArray<string> | string => {
  const cells: Array<string> = []
  let cell = ""
  let quoted = false
  let at = 0
  while (at < line.length) {
    const char = line[at]
    if (quoted) {
      if (char === '"' && line[at + 1] === '"') {
        cell += '"'
        at++
      } else if (char === '"') quoted = false
      else cell += char
    } else if (char === '"' && cell.length === 0) quoted = true
    else if (char === ",") {
      cells.push(cell)
      cell = ""
    } else cell += char
    at++
  }
  if (quoted) return "a quoted cell is not closed on its line (a cell may not hold a line break)"
  cells.push(cell)
  return cells
}

const lines = (path: string): Stream.Stream<string, KnownInputError> =>
  Stream.fromAsyncIterable(
    readline.createInterface({ input: createReadStream(path, { encoding: "utf8" }), crlfDelay: Infinity }),
    (cause) => new KnownInputError({ description: `${path} could not be read: ${String(cause)}` }),
  )

type Parsed = { readonly fields: Readonly<Record<string, string | undefined>> } | { readonly problem: string }

const unknownColumns = (names: ReadonlyArray<string>, allowed: ReadonlyArray<string>) =>
  names.filter((name) => !allowed.includes(name))

const csvRow = (header: ReadonlyArray<string>, line: string): Parsed => {
  const cells = csvCells(line)
  if (typeof cells === "string") return { problem: cells }
  if (cells.length !== header.length)
    return { problem: `expected ${header.length} cells as the header has, found ${cells.length}` }
  return { fields: Object.fromEntries(header.map((name, index) => [name, cells[index]])) }
}

const jsonRow = (line: string, allowed: ReadonlyArray<string>): Parsed => {
  let value: unknown
  try {
    value = JSON.parse(line)
  } catch {
    return { problem: 'expected a JSON object on the line, such as {"email": "jane@example.com"}' }
  }
  if (typeof value !== "object" || value === null || Array.isArray(value))
    return { problem: 'expected a JSON object on the line, such as {"email": "jane@example.com"}' }
  const fields: Record<string, string | undefined> = {}
  for (const [name, inner] of Object.entries(value)) {
    if (!allowed.includes(name))
      return { problem: `"${name}" is not a field here; expected ${allowed.join(", ")}` }
    if (typeof inner === "string") fields[name] = inner
    else if (typeof inner === "number") fields[name] = String(inner)
    else if (inner !== null) return { problem: `${name} should be a string, got ${JSON.stringify(inner)}` }
  }
  return { fields }
}

/**
 * The file's rows, each with its line (`path:line`); a line that does not parse is a row whose
 * fields are undefined and whose problem the decoder is told. Blank lines are skipped.
 */
export const rows = (
  field: string,
  path: string,
  allowed: ReadonlyArray<string>,
): Stream.Stream<Row, KnownInputError> =>
  Stream.unwrap(
    Effect.gen(function* () {
      const format = formatOf(path)
      if (format === undefined)
        return yield* new KnownInputError({
          description: `${field}: "${path}" should end in .csv, .ndjson or .jsonl (its format is told by its extension)`,
        })
      yield* Effect.tryPromise({
        try: () => access(path),
        catch: () =>
          new KnownInputError({
            description: `${field}: "${path}" cannot be read (no such file, or no permission)`,
          }),
      })
      const numbered = Stream.zipWithIndex(lines(path)).pipe(
        Stream.map(([text, index]) => ({ text, line: index + 1 })),
      )
      if (format === "ndjson")
        return numbered.pipe(
          Stream.filter(({ text }) => text.trim().length > 0),
          Stream.map(({ text, line }) => {
            const parsed = jsonRow(text, allowed)
            const where = `${path}:${line}`
            return "problem" in parsed
              ? { where, fields: {}, problem: parsed.problem }
              : { where, fields: parsed.fields }
          }),
        )
      return numbered.pipe(
        Stream.mapAccum<
          ReadonlyArray<string> | undefined,
          { text: string; line: number },
          ReadonlyArray<Row>
        >(undefined, (header, { text, line }) => {
          const where = `${path}:${line}`
          if (header === undefined) {
            const names = csvCells(text.replace(/^\uFEFF/, ""))
            if (typeof names === "string") return [[], [{ where, fields: {}, problem: names }]]
            const trimmed = names.map((name) => name.trim().toLowerCase())
            const unknown = unknownColumns(trimmed, allowed)
            const problems =
              unknown.length === 0
                ? []
                : [
                    {
                      where,
                      fields: {},
                      problem: `the header names ${unknown.map((n) => `"${n}"`).join(", ")}, not a column here; expected ${allowed.join(", ")}`,
                    },
                  ]
            return [trimmed, problems]
          }
          if (text.trim().length === 0) return [header, []]
          const parsed = csvRow(header, text)
          return [
            header,
            [
              "problem" in parsed
                ? { where, fields: {}, problem: parsed.problem }
                : { where, fields: parsed.fields },
            ],
          ]
        }),
        Stream.flattenIterables,
      )
    }),
  )
