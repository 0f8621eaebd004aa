/**
 * A record's data in the types its catalog declares. The provider's model is loose in places (a
 * count may arrive as "12", a date as a numeric string, a vendor as null), the core's Schemas
 * decode every spelling to one type, and the catalog declares that type (JsonSchema.ts). So that
 * every record validates against its catalog, the source writes those values as decoded: the
 * fields whose Schema transforms what it reads (and only those) take the decoded value, every
 * other key (the provider's additions included) is written as it arrived.
 *
 * Where those fields are is read once from the Schema's AST; a record then costs a look at each of
 * them, and copies only the objects on the way to a value that changed.
 */
import type * as Schema from "effect/Schema"
import * as SchemaAST from "effect/SchemaAST"

/** Where a record's transformed values sit: the value itself, inside an object, or in each item. */
export type Plan =
  | { readonly _tag: "Take" }
  | { readonly _tag: "Fields"; readonly fields: ReadonlyMap<string, Plan> }
  | { readonly _tag: "Items"; readonly item: Plan }

const take: Plan = { _tag: "Take" }

const fieldsOf = (typeLiteral: SchemaAST.TypeLiteral, taken: ReadonlySet<PropertyKey>): Plan | undefined => {
  const fields = new Map<string, Plan>()
  for (const signature of typeLiteral.propertySignatures) {
    if (typeof signature.name !== "string") continue
    const plan = taken.has(signature.name) ? take : planOf(signature.type)
    if (plan !== undefined) fields.set(signature.name, plan)
  }
  return fields.size === 0 ? undefined : { _tag: "Fields", fields }
}

/** The plan of a Schema's AST; undefined where nothing is transformed. */
export const planOf = (ast: SchemaAST.AST): Plan | undefined => {
  switch (ast._tag) {
    case "Refinement":
      return planOf(ast.from)
    case "TypeLiteral":
      return fieldsOf(ast, new Set())
    case "TupleType": {
      const item = ast.rest[0] === undefined ? undefined : planOf(ast.rest[0].type)
      return item === undefined ? undefined : { _tag: "Items", item }
    }
    case "Union": {
      // A nullable field is a union with null: the plan of its other member.
      const plans = ast.types.map(planOf).filter((plan) => plan !== undefined)
      return plans.some((plan) => plan._tag === "Take") ? take : plans[0]
    }
    case "Transformation": {
      // A struct whose fields carry defaults (`optionalWith`): those fields are taken decoded.
      if (ast.transformation._tag === "TypeLiteralTransformation" && SchemaAST.isTypeLiteral(ast.to)) {
        const renamed = ast.transformation.propertySignatureTransformations
        return fieldsOf(ast.to, new Set(renamed.map((signature) => signature.to)))
      }
      return take
    }
    default:
      return undefined
  }
}

const isRecord = (value: unknown): value is Readonly<Record<string, unknown>> =>
  typeof value === "object" && value !== null && !Array.isArray(value)

/** `raw` with the planned values replaced by `decoded`'s; `raw` itself when nothing differs. */
export const apply = (plan: Plan, raw: unknown, decoded: unknown): unknown => {
  switch (plan._tag) {
    case "Take":
      return decoded === undefined ? raw : decoded
    case "Items": {
      if (!Array.isArray(raw) || !Array.isArray(decoded)) return raw
      let copy: Array<unknown> | undefined
      for (let index = 0; index < raw.length; index++) {
        const value = apply(plan.item, raw[index], decoded[index])
        if (value === raw[index]) continue
        copy ??= [...raw]
        copy[index] = value
      }
      return copy ?? raw
    }
    case "Fields": {
      if (!isRecord(raw) || !isRecord(decoded)) return raw
      let copy: Record<string, unknown> | undefined
      for (const [key, inner] of plan.fields) {
        const value = apply(inner, raw[key], decoded[key])
        if (value === raw[key]) continue
        copy ??= { ...raw }
        copy[key] = value
      }
      return copy ?? raw
    }
  }
}

/** The conformer of a record Schema: (raw, decoded) to the data to write. */
export const conformer = <A, I>(
  schema: Schema.Schema<A, I>,
): ((raw: Readonly<Record<string, unknown>>, decoded: A) => Readonly<Record<string, unknown>>) => {
  const plan = planOf(schema.ast)
  if (plan === undefined) return (raw) => raw
  return (raw, decoded) => {
    const data = apply(plan, raw, decoded)
    return isRecord(data) ? data : raw
  }
}
