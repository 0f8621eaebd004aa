/**
 * The config's `market`: the team's own products, its rivals' and its complements', each a
 * product or a vendor as the technology taxonomy names it. `salesintel sync` writes it into the
 * target's `market` table, which the market views join. A name is checked against the taxonomy
 * (the one the target holds, else free lookups), so a misspelt rival is an error that names the
 * entry and the nearest name, not a view that silently finds nobody.
 */
import { type ApiError, Client, type Filters, Nearest } from "@salesintel/core"
import * as Effect from "effect/Effect"
import * as Either from "effect/Either"
import * as Schema from "effect/Schema"

const MarketName = Schema.String.pipe(
  Schema.filter(
    (name) =>
      name.trim().length > 0 || "a product or vendor name as the taxonomy gives it, such as Marketo Engage",
  ),
)

const names = (role: string) =>
  Schema.optionalWith(
    Schema.Array(MarketName).annotations({
      message: (issue) =>
        `Expected a list of ${role}: products or vendors as the taxonomy names them, such as ["Marketo Engage", "HubSpot"], actual ${JSON.stringify(issue.actual)}`,
    }),
    { default: () => [] },
  )

export const MarketConfig = Schema.Struct({
  ours: names("the team's own products"),
  rivals: names("rivals' products"),
  complements: names("complements (products that go with ours)"),
})
export type MarketConfig = typeof MarketConfig.Type

/** The config's fields and the role each gives its entries in the `market` table. */
export const fields = [
  ["ours", "ours"],
  ["rivals", "rival"],
  ["complements", "complement"],
] as const

export type Role = (typeof fields)[number][1]

/** A `market` row: a product (vendor null) or a vendor (product null). */
export interface Entry {
  readonly role: Role
  readonly product: string | null
  readonly vendor: string | null
}

/** The product and vendor names a market is checked against. */
export interface TaxonomyNames {
  readonly products: ReadonlyArray<string>
  readonly vendors: ReadonlyArray<string>
}

export interface Problem {
  /** Where the entry is, as config errors say it: `market.rivals[2]`. */
  readonly path: string
  readonly message: string
}

/** The problem with `name`, or none when the taxonomy has it as a product or a vendor. */
const problemOf = (name: string, known: TaxonomyNames, all: ReadonlyArray<string>): string | undefined => {
  if (known.products.includes(name) || known.vendors.includes(name)) return undefined
  const sameLetters = all.find((candidate) => candidate.toLowerCase() === name.toLowerCase())
  const near = sameLetters ?? Nearest.nearest(name, all)
  const expected = "a product or vendor as the taxonomy names it"
  return near === undefined
    ? `"${name}" is not a product or vendor of the taxonomy; expected ${expected}`
    : `"${name}" is not a product or vendor of the taxonomy; did you mean "${near}"?`
}

/**
 * The `market` rows of `market`, each name checked against `known`: a vendor's name is the vendor
 * (every product of it has the role), else a product's. With nothing known (no taxonomy to check
 * against) a name is kept as both, so it matches a product or a vendor of that name.
 */
export const entriesOf = (
  market: MarketConfig,
  known: TaxonomyNames,
): Either.Either<ReadonlyArray<Entry>, ReadonlyArray<Problem>> => {
  const all = [...new Set([...known.products, ...known.vendors])]
  const unchecked = all.length === 0
  const problems: Array<Problem> = []
  const entries: Array<Entry> = []
  for (const [field, role] of fields)
    market[field].forEach((name, index) => {
      if (unchecked) {
        entries.push({ role, product: name, vendor: null }, { role, product: null, vendor: name })
        return
      }
      const problem = problemOf(name, known, all)
      if (problem !== undefined) problems.push({ path: `market.${field}[${index}]`, message: problem })
      else if (known.vendors.includes(name)) entries.push({ role, product: null, vendor: name })
      else entries.push({ role, product: name, vendor: null })
    })
  return problems.length > 0 ? Either.left(problems) : Either.right(entries)
}

const firstPage: Client.Paging = { page: 1, pageSize: 50 }

/**
 * The taxonomy's names near the market's, from free lookups (4.5: a "contains" match, case
 * aside): each name as a product and as a vendor, and for a name found neither way its first
 * four letters, which bring the spellings a "did you mean" picks from.
 */
export const lookUp = (
  market: MarketConfig,
): Effect.Effect<TaxonomyNames, ApiError.ApiError, Client.SalesIntelClient> =>
  Effect.gen(function* () {
    const client = yield* Client.SalesIntelClient
    const products = new Set<string>()
    const vendors = new Set<string>()
    const ask = (filters: Filters.ProductFilters) =>
      Effect.map(client.taxonomyProducts(filters, firstPage), (page) => {
        for (const { record } of page.items) {
          products.add(record.product)
          if (record.vendor !== "") vendors.add(record.vendor)
        }
      })
    const wanted = [...new Set(fields.flatMap(([field]) => market[field]))]
    for (const name of wanted) {
      yield* ask({ product: [name] })
      yield* ask({ vendor: [name] })
      const prefix = name.slice(0, 4)
      if (!products.has(name) && !vendors.has(name) && prefix.length > 0 && prefix !== name) {
        yield* ask({ product: [prefix] })
        yield* ask({ vendor: [prefix] })
      }
    }
    return { products: [...products], vendors: [...vendors] }
  })
