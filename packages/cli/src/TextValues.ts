/**
 * What `salesintel sql` makes of Postgres's text, by the column's type (its OID): the table and
 * CSV show the text as it is, as psql does; the table right-aligns numbers; JSON keeps numbers,
 * booleans and json values as JSON and everything else (dates, timestamps, intervals, arrays) as
 * the server's text. A 64-bit integer (what count(*) and sum of ints give) or a whole numeric is a
 * JSON number while it is exact in one (Number.isSafeInteger, up to 2^53 - 1), and its text past
 * that, where a number would lose digits; a numeric with a fraction stays text, keeping its scale.
 * Every value arrives as the server's text on both backends (Database.queryResult), so this is
 * the one place that decides.
 */

const types = {
  bool: 16,
  int8: 20,
  int2: 21,
  int4: 23,
  oid: 26,
  json: 114,
  float4: 700,
  float8: 701,
  numeric: 1700,
  jsonb: 3802,
} as const

/** Exact in a JavaScript number, so a JSON number. */
const jsonNumbers: ReadonlySet<number> = new Set([
  types.int2,
  types.int4,
  types.oid,
  types.float4,
  types.float8,
])

/** A number in JSON only while it is a whole number exact in a JavaScript number. */
const wholeNumbers: ReadonlySet<number> = new Set([types.int8, types.numeric])

const numbers: ReadonlySet<number> = new Set([...jsonNumbers, ...wholeNumbers])

/** Whether a column of this type is a number (right-aligned in the table, as psql does). */
export const isNumber = (type: number | undefined): boolean => type !== undefined && numbers.has(type)

/** A value's text as JSON shows it. */
export const jsonValue = (text: string | null, type: number | undefined): unknown => {
  if (text === null) return null
  if (type === types.bool) return text === "t"
  if (type === types.json || type === types.jsonb) return JSON.parse(text) as unknown
  if (type !== undefined && jsonNumbers.has(type)) {
    const value = Number(text)
    // NaN and Infinity have no JSON number: their text stays.
    return Number.isFinite(value) ? value : text
  }
  if (type !== undefined && wholeNumbers.has(type) && /^-?\d+$/.test(text)) {
    const value = Number(text)
    return Number.isSafeInteger(value) ? value : text
  }
  return text
}
