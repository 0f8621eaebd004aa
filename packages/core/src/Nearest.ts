/**
 * "Did you mean": the name of a known list nearest a name that is not in it, when it is near
 * enough to be what was meant. The config's misspelt fields and the streams named on the command
 * line and in a catalog are all answered with it.
 */

/** Edits from `a` to `b`: insertions, deletions, substitutions and swaps of two neighbours. */
export const distance = (a: string, b: string): number => {
  const rows = Array.from({ length: a.length + 1 }, (_, i) =>
    Array.from({ length: b.length + 1 }, (_, j) => (i === 0 ? j : j === 0 ? i : 0)),
  )
  const at = (i: number, j: number) => rows[i]?.[j] ?? Number.POSITIVE_INFINITY
  for (let i = 1; i <= a.length; i++)
    for (let j = 1; j <= b.length; j++) {
      const cost = a[i - 1] === b[j - 1] ? 0 : 1
      let best = Math.min(at(i - 1, j) + 1, at(i, j - 1) + 1, at(i - 1, j - 1) + cost)
      if (i > 1 && j > 1 && a[i - 1] === b[j - 2] && a[i - 2] === b[j - 1])
        best = Math.min(best, at(i - 2, j - 2) + 1)
      const row = rows[i]
      if (row !== undefined) row[j] = best
    }
  return at(a.length, b.length)
}

/** Case, `_` and `-` aside: `matchOnJobHistory` is `match_on_job_history`. */
const folded = (name: string) => name.toLowerCase().replace(/[-_]/g, "")

/**
 * The name of `known` nearest `name`, when it is near enough to be what was meant: at most one
 * edit in four characters (at least one), so `contact` is `contacts` and `foo` is nothing.
 */
export const nearest = (name: string, known: ReadonlyArray<string>): string | undefined => {
  let best: string | undefined
  let bestDistance = Number.POSITIVE_INFINITY
  for (const candidate of known) {
    const edits = distance(folded(name), folded(candidate))
    if (edits < bestDistance) {
      best = candidate
      bestDistance = edits
    }
  }
  return bestDistance <= Math.max(1, Math.floor(name.length / 4)) ? best : undefined
}
