/**
 * The technology taxonomy: the category/subcategory tree (4.4) and the product/vendor values
 * (4.5) that the tech_* filters accept. Bodies are undocumented; decoded loosely, raw kept.
 */
import * as Schema from "effect/Schema"
import { optionalNullable } from "./Values.ts"

export const Category = Schema.Struct({
  category: Schema.String.pipe(Schema.minLength(1)),
  subcategories: optionalNullable(Schema.Array(Schema.String)),
})
export type Category = typeof Category.Type

export const Product = Schema.Struct({
  product: Schema.String.pipe(Schema.minLength(1)),
  /** Half of the product's key, so never null: '' when the provider sends none. */
  vendor: Schema.optionalWith(Schema.String, { nullable: true, default: () => "" }),
  category: optionalNullable(Schema.String),
  subcategory: optionalNullable(Schema.String),
})
export type Product = typeof Product.Type
