/**
 * The taxonomy streams, both free: the category/subcategory tree, and the product/vendor values.
 *
 * The products endpoint needs a term, so a full crawl asks for every letter and digit as a
 * product term (all at once, paced by the client) and keeps each (product, vendor) pair once. Configured terms are asked for as
 * product and as vendor terms respectively.
 */
import { Streams } from "@salesintel/airbyte"
import { Client, type Filters, Pager, type Taxonomy } from "@salesintel/core"
import * as Effect from "effect/Effect"
import * as Stream from "effect/Stream"
import type { SourceConfig } from "../Config.ts"
import * as Output from "../read/Output.ts"
import type { StreamDefinition } from "../read/StreamDefinition.ts"

export const crawlTerms = [..."abcdefghijklmnopqrstuvwxyz0123456789"]

export const taxonomyCategories: StreamDefinition<Taxonomy.Category> = {
  stream: Streams.streams.taxonomy_categories,
  credited: false,
  isConfigured: (config: SourceConfig) => config.taxonomy !== undefined,
  configuredBy: "taxonomy",
  read: (input) =>
    Stream.unwrap(
      Effect.gen(function* () {
        if (input.config.taxonomy === undefined) return Stream.empty
        const client = yield* Client.SalesIntelClient
        const items = yield* client.taxonomyCategories
        return Stream.fromIterable([
          Output.pageRead,
          Output.tally("taxonomy", { freeRequests: 1 }),
          ...items.map((item) => Output.record(Streams.streams.taxonomy_categories, item)),
          Output.checkpoint({ categories: items.length }),
        ])
      }),
    ),
}

/** The product taxonomy queries a read asks: every crawl term, or the configured terms. */
export const productQueries = (config: SourceConfig): ReadonlyArray<Filters.ProductFilters> => {
  const settings = config.taxonomy
  if (settings === undefined) return []
  if (settings.full_crawl) return crawlTerms.map((term) => ({ product: [term] }))
  return [
    ...settings.products.map((term) => ({ product: [term] })),
    ...settings.vendors.map((term) => ({ vendor: [term] })),
  ]
}

export const taxonomyProducts: StreamDefinition<Taxonomy.Product> = {
  stream: Streams.streams.taxonomy_products,
  credited: false,
  isConfigured: (config) => productQueries(config).length > 0,
  configuredBy: "taxonomy.full_crawl, taxonomy.products or taxonomy.vendors",
  read: (input) =>
    Stream.unwrap(
      Effect.gen(function* () {
        const client = yield* Client.SalesIntelClient
        const seen = new Set<string>()
        const queries = productQueries(input.config)
        const asked = Output.tally("taxonomy", { queries: queries.length })
        return Stream.fromIterable(queries).pipe(
          // The terms at the same time (the in-flight gate and the rate limit pace them): one after
          // another, a full crawl's 36 terms took 36 round trips and more, 70 s at 2 s of latency.
          // Each pair is kept once whichever term brings it first.
          Stream.flatMap(
            (filters) =>
              Pager.stream({
                fetch: (paging) => client.taxonomyProducts(filters, paging),
                credited: false,
                concurrency: input.config.concurrency,
              }),
            { concurrency: input.config.concurrency },
          ),
          Stream.mapConcat((event): ReadonlyArray<Output.Output<Taxonomy.Product>> => {
            if (event._tag === "DepthLimitReached")
              return [
                Output.log(
                  "WARN",
                  `taxonomy_products: a term matched ${event.resultCount ?? "more than"} products; only ${event.recordsReachable} are reachable by paging`,
                ),
              ]
            if (event._tag !== "PageFetched") return []
            const fresh = event.page.items.filter((item) => {
              const key = `${item.record.product}\u0000${item.record.vendor}`
              if (seen.has(key)) return false
              seen.add(key)
              return true
            })
            return [
              Output.pageRead,
              Output.tally("taxonomy", { freeRequests: 1 }),
              ...fresh.map((item) => Output.record(Streams.streams.taxonomy_products, item)),
            ]
          }),
          (records) =>
            Stream.concat(
              Stream.concat(Stream.make(asked), records),
              Stream.suspend(() =>
                Stream.make(Output.checkpoint({ products: seen.size, terms: queries.length })),
              ),
            ),
        )
      }),
    ),
}
