/**
 * Lenient value schemas for the provider's bodies. The provider's documented model and its real
 * payloads disagree in places (numbers arriving as strings, dates as epoch milliseconds in a
 * "string" field), so documented fields accept every observed spelling and decode to one type.
 */
import * as ParseResult from "effect/ParseResult"
import * as Schema from "effect/Schema"

/** A field that may be absent or null in a record. */
export const optionalNullable = <S extends Schema.Schema.Any>(schema: S) =>
  Schema.optional(Schema.NullOr(schema))

/** A number sent either as a JSON number or as a numeric string. */
export const LooseNumber = Schema.Union(Schema.Number, Schema.NumberFromString).annotations({
  identifier: "LooseNumber",
})

/** An integer sent either as a JSON number or as a numeric string. */
export const LooseInt = Schema.compose(LooseNumber, Schema.Int, { strict: false }).annotations({
  identifier: "LooseInt",
})

/**
 * A point in time as the provider sends it: epoch milliseconds (a number or a numeric string,
 * as a live response showed) or an ISO-8601 string. Decodes to epoch milliseconds.
 */
export const EpochMillis = Schema.transformOrFail(Schema.Union(Schema.Number, Schema.String), Schema.Number, {
  strict: true,
  decode: (input, _, ast) => {
    const fail = ParseResult.fail(
      new ParseResult.Type(ast, input, "epoch milliseconds (number or numeric string) or an ISO-8601 date"),
    )
    if (typeof input === "number") return Number.isFinite(input) ? ParseResult.succeed(input) : fail
    const trimmed = input.trim()
    if (/^-?\d+(\.\d+)?$/.test(trimmed)) return ParseResult.succeed(Number(trimmed))
    const parsed = Date.parse(trimmed)
    return Number.isNaN(parsed) ? fail : ParseResult.succeed(parsed)
  },
  encode: (millis) => ParseResult.succeed(millis),
}).annotations({ identifier: "EpochMillis" })

/**
 * A field the provider's model documents only as an opaque `{}` (`_score`, `cds_batch_id`,
 * `company_score`, `company_status`): any JSON value, kept as sent. Its JSON Schema is the
 * model's: a nullable object, which typed destinations store as a JSON column (a union of scalar
 * types would leave them nothing to map but text).
 */
export const Opaque = Schema.Unknown.annotations({
  identifier: "Opaque",
  jsonSchema: { type: ["object", "null"] },
})
