/**
 * "Did you mean" for a config field the Schema does not know: the nearest field it does know at
 * that place. Read from the parse error's structure (the struct that refused the field carries its
 * own fields), never from the rendered message.
 */
import type * as ParseResult from "effect/ParseResult"
import * as AST from "effect/SchemaAST"

/** Edits from `a` to `b`: insertions, deletions, substitutions and swaps of two neighbours. */
const distance = (a: string, b: string): number => {
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

/** The field of `fields` nearest `name`, when it is near enough to be what was meant. */
export const nearest = (name: string, fields: ReadonlyArray<string>): string | undefined => {
  let best: string | undefined
  let bestDistance = Number.POSITIVE_INFINITY
  for (const field of fields) {
    const edits = distance(folded(name), folded(field))
    if (edits < bestDistance) {
      best = field
      bestDistance = edits
    }
  }
  return bestDistance <= Math.max(1, Math.floor(name.length / 4)) ? best : undefined
}

export interface Suggestion {
  /** Where the unknown field is, as the parse error's paths are. */
  readonly path: ReadonlyArray<PropertyKey>
  readonly field: string
}

const asList = <A>(value: A | ReadonlyArray<A>): ReadonlyArray<A> =>
  Array.isArray(value) ? value : [value as A]

/** A suggestion for every unknown field of the parse error that is near a known one. */
export const suggestions = (
  issue: ParseResult.ParseIssue,
  path: ReadonlyArray<PropertyKey> = [],
): ReadonlyArray<Suggestion> => {
  switch (issue._tag) {
    case "Composite": {
      const ast = issue.ast
      const fields = AST.isTypeLiteral(ast)
        ? ast.propertySignatures.flatMap((signature) =>
            typeof signature.name === "string" ? [signature.name] : [],
          )
        : undefined
      return asList(issue.issues).flatMap((child) => {
        if (fields === undefined || child._tag !== "Pointer" || child.issue._tag !== "Unexpected")
          return suggestions(child, path)
        const [key] = asList(child.path)
        const field = nearest(String(key), fields)
        return field === undefined || key === undefined ? [] : [{ path: [...path, key], field }]
      })
    }
    case "Pointer":
      return suggestions(issue.issue, [...path, ...asList(issue.path)])
    case "Refinement":
    case "Transformation":
      return suggestions(issue.issue, path)
    default:
      return []
  }
}
