/**
 * The NUL policy. Postgres `text` cannot store U+0000 and `jsonb` rejects the `\u0000` escape, yet
 * provider strings may contain it. So:
 * - in typed text columns (and text[] elements) U+0000 is removed;
 * - in JSONB (`_raw`, `_state.state`) each U+0000 inside a string or key becomes the six characters
 *   `\u0000` (a backslash, `u`, four zeros), so the record stays whole and the spot stays visible.
 * Lone UTF-16 surrogates (which jsonb also rejects) become U+FFFD in JSONB.
 */

export const stripNul = (text: string): string => (text.includes("\0") ? text.replaceAll("\0", "") : text)

const loneSurrogate = /[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/g

const cleanString = (text: string): string =>
  text.replaceAll("\0", "\\u0000").replace(loneSurrogate, "\uFFFD")

const clean = (value: unknown): unknown => {
  if (typeof value === "string") return cleanString(value)
  if (Array.isArray(value)) return value.map(clean)
  if (value !== null && typeof value === "object") {
    const result: Record<string, unknown> = {}
    for (const [key, item] of Object.entries(value)) result[cleanString(key)] = clean(item)
    return result
  }
  return value
}

// JSON.stringify writes U+0000 as \u0000 and lone surrogates as \udXXX; only then is the slow,
// rebuilding path needed (a literal backslash-u text also lands there, harmlessly).
const needsCleaning = /\\u0000|\\ud[89a-f]/i

/** The value as JSON text that jsonb accepts. */
export const jsonText = (value: unknown): string => {
  const text = JSON.stringify(value) ?? "null"
  return needsCleaning.test(text) ? (JSON.stringify(clean(value)) ?? "null") : text
}
