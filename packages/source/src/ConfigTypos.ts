/**
 * "Did you mean" for a config field the Schema does not know: the nearest field it does know at
 * that place. Read from the parse error's structure (the struct that refused the field carries its
 * own fields), never from the rendered message.
 */
import { Nearest } from "@salesintel/core"
import type * as ParseResult from "effect/ParseResult"
import * as AST from "effect/SchemaAST"

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
        const field = Nearest.nearest(String(key), fields)
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
