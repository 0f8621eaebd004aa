/**
 * What `salesintel sql` makes of Postgres's text, by the column's type (its OID): the table and
 * CSV show the text as it is, as psql does; the table right-aligns numbers; JSON keeps numbers,
 * booleans and json values as JSON and everything else (dates, timestamps, intervals, arrays) as
 * the server's text. A 64-bit integer or a numeric stays text in JSON, where a number would lose
 * digits past 2^53 or a numeric's scale.
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

const numbers: ReadonlySet<number> = new Set([...jsonNumbers, types.int8, types.numeric])

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
  return text
}
