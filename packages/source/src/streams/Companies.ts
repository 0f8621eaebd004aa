/**
 * The companies stream: technologies appended to companies named by domain (or by name), in
 * batches of page_size keys per request, one record per company returned.
 *
 * incremental is by key: a domain or name already appended is not bought again until it is older
 * than refresh_after_days. Within a batch, a domain is marked done as soon as a record for it
 * arrives, and every key of the batch once the batch is read to the end (keys that matched no
 * company cost nothing and are not asked for again).
 */
import { Streams } from "@salesintel/airbyte"
import { Client, type CompanyTechnologies, Pager } from "@salesintel/core"
import { Effect, Schema, Stream } from "effect"
import type { CompaniesConfig, SourceConfig } from "../Config.ts"
import { DatedSet, DatedSetJson, epochDay } from "../DatedSet.ts"
import * as Output from "../Output.ts"
import type { StreamDefinition } from "../StreamDefinition.ts"
import { decodeState } from "./common.ts"

export const CompaniesState = Schema.Struct({
  domains: Schema.optionalWith(DatedSetJson, { default: () => ({}) }),
  names: Schema.optionalWith(DatedSetJson, { default: () => ({}) }),
})

type KeyKind = "domains" | "names"

const techFilters = (settings: CompaniesConfig) => ({
  ...(settings.tech_category === undefined ? {} : { tech_category: settings.tech_category }),
  ...(settings.tech_subcategory === undefined ? {} : { tech_subcategory: settings.tech_subcategory }),
  ...(settings.tech_product === undefined ? {} : { tech_product: settings.tech_product }),
  ...(settings.tech_vendor === undefined ? {} : { tech_vendor: settings.tech_vendor }),
  ...(settings.is_international === undefined ? {} : { is_international: settings.is_international }),
  ...(settings.verified === undefined ? {} : { verified: settings.verified }),
})

const chunksOf = <A>(items: ReadonlyArray<A>, size: number): Array<Array<A>> => {
  const chunks: Array<Array<A>> = []
  for (let start = 0; start < items.length; start += size) chunks.push(items.slice(start, start + size))
  return chunks
}

const isConfigured = (config: SourceConfig) =>
  config.companies !== undefined && config.companies.domains.length + config.companies.names.length > 0

export const companies: StreamDefinition<CompanyTechnologies.CompanyTechnologies> = {
  stream: Streams.streams.companies,
  isConfigured,
  read: (input) =>
    Stream.unwrap(
      Effect.gen(function* () {
        const settings = input.config.companies
        if (settings === undefined || !isConfigured(input.config)) return Stream.empty
        const client = yield* Client.SalesIntelClient
        const state = yield* decodeState("companies", CompaniesState, input.state)
        const done: Record<KeyKind, DatedSet> = {
          domains: DatedSet.fromJson(state.domains),
          names: DatedSet.fromJson(state.names),
        }
        const today = epochDay(input.startedAt)
        const fetchedAt = new Date(input.startedAt).toISOString()
        const incremental = input.syncMode === "incremental"
        const pending = (kind: KeyKind, keys: ReadonlyArray<string>) =>
          [...new Set(keys.map((key) => key.toLowerCase()))].filter(
            (key) => !incremental || done[kind].needsBuying(key, today, settings.refresh_after_days),
          )
        const checkpoint = () =>
          Output.checkpoint({ domains: done.domains.toJson(), names: done.names.toJson() })
        const pageSize = input.config.page_size
        let stopped = false
        let left = 0

        const batches = [
          ...chunksOf(pending("domains", settings.domains), pageSize).map((keys) => ({
            kind: "domains" as const,
            keys,
          })),
          ...chunksOf(pending("names", settings.names), pageSize).map((keys) => ({
            kind: "names" as const,
            keys,
          })),
        ]
        const reads = Stream.fromIterable(batches).pipe(
          Stream.flatMap(({ kind, keys }) => {
            if (stopped) {
              left += keys.length
              return Stream.empty
            }
            const filters = {
              ...(kind === "domains" ? { company_domain: keys } : { company_name: keys }),
              ...techFilters(settings),
            }
            const pages = Pager.stream({
              fetch: (paging) => client.appendTechnologies(filters, paging),
              credited: true,
              pageSize,
              concurrency: input.config.concurrency,
            }).pipe(
              Stream.mapConcat(
                (event): ReadonlyArray<Output.Output<CompanyTechnologies.CompanyTechnologies>> => {
                  if (event._tag === "BudgetExhausted") {
                    stopped = true
                    // At least one company per key still to read; append charges per company returned.
                    left += event.recordsRemaining ?? keys.length
                    return []
                  }
                  if (event._tag === "DepthLimitReached")
                    return [
                      Output.log(
                        "WARN",
                        `companies: a batch matched more than ${event.recordsReachable} companies`,
                      ),
                    ]
                  if (kind === "domains") {
                    for (const item of event.page.items)
                      for (const domain of item.record.company_domains ?? [])
                        if (keys.includes(domain.toLowerCase())) done.domains.add(domain.toLowerCase(), today)
                  }
                  // An empty page changes nothing: the batch's own checkpoint follows it.
                  if (event.page.items.length === 0) return [Output.pageRead]
                  return [
                    Output.pageRead,
                    ...event.page.items.map((item) =>
                      Output.record(Streams.streams.companies, item, {
                        [Streams.addedFields.fetchedAt]: fetchedAt,
                      }),
                    ),
                    checkpoint(),
                  ]
                },
              ),
            )
            const finish = Stream.suspend(() => {
              if (stopped) return Stream.empty
              for (const key of keys) done[kind].add(key, today)
              return Stream.make(checkpoint())
            })
            return Stream.concat(pages, finish)
          }),
        )
        const summary = Stream.suspend(() =>
          left === 0
            ? Stream.empty
            : Stream.make(
                Output.shortfall(left, left, "companies (at least one credit per domain or name left)"),
              ),
        )
        return Stream.concat(
          reads,
          Stream.concat(
            summary,
            Stream.suspend(() => Stream.make(checkpoint())),
          ),
        )
      }),
    ),
}
