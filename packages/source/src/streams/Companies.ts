/**
 * The companies stream, as a description over the keyed purchase: technologies appended to
 * companies named by domain (or by name), in batches of up to page_size keys per request, each
 * reserving one credit per key it asks for, one record per company returned.
 *
 * incremental is by key: a domain or name already appended is not bought again until it is older
 * than refresh_after_days. Every key of a batch is marked done once the batch is read to the end
 * (keys that matched no company cost nothing and are not asked for again).
 */
import { Streams } from "@salesintel/airbyte"
import { Client, type CompanyTechnologies, CreditBudget } from "@salesintel/core"
import { Effect, Ref, Schema, Stream } from "effect"
import type { CompaniesConfig, SourceConfig } from "../Config.ts"
import * as KeyedPurchase from "../components/KeyedPurchase.ts"
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

/**
 * The keys a read asks for: each once (case-folded), and only those not bought or older than
 * `refreshAfterDays` (0: every key, as a full refresh reads them).
 */
export const dueKeys = (
  keys: ReadonlyArray<string>,
  done: DatedSet,
  today: number,
  refreshAfterDays: number | undefined,
): ReadonlyArray<string> =>
  [...new Set(keys.map((key) => key.toLowerCase()))].filter((key) =>
    done.needsBuying(key, today, refreshAfterDays),
  )

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
        const budget = yield* CreditBudget.CreditBudget
        const state = yield* decodeState("companies", CompaniesState, input.state)
        const done: Record<KeyKind, DatedSet> = {
          domains: DatedSet.fromJson(state.domains),
          names: DatedSet.fromJson(state.names),
        }
        const today = epochDay(input.startedAt)
        const fetchedAt = new Date(input.startedAt).toISOString()
        const incremental = input.syncMode === "incremental"
        const pending = (kind: KeyKind, keys: ReadonlyArray<string>) =>
          dueKeys(keys, done[kind], today, incremental ? settings.refresh_after_days : 0)
        const checkpoint = () =>
          Output.checkpoint({ domains: done.domains.toJson(), names: done.names.toJson() })
        const unbought = yield* Ref.make(0)

        const purchase = (kind: KeyKind) =>
          KeyedPurchase.run({
            keys: Stream.fromIterable(pending(kind, kind === "domains" ? settings.domains : settings.names)),
            pageSize: input.config.page_size,
            // One batch at a time: a batch's keys are marked done when it is read to the end.
            concurrency: 1,
            retry: input.config.retry,
            fetch: (keys, paging) =>
              client.appendTechnologies(
                {
                  ...(kind === "domains" ? { company_domain: keys } : { company_name: keys }),
                  ...techFilters(settings),
                },
                paging,
              ),
            oneRecordPerKey: false,
          }).pipe(
            Stream.mapEffect(
              (
                event,
              ): Effect.Effect<ReadonlyArray<Output.Output<CompanyTechnologies.CompanyTechnologies>>> => {
                switch (event._tag) {
                  case "Unbought":
                    // At least one credit per key left: append charges per company returned.
                    return Effect.as(
                      Ref.update(unbought, (n) => n + event.keys.length),
                      [],
                    )
                  case "DepthLimitReached":
                    return Effect.succeed([
                      Output.log(
                        "WARN",
                        `companies: a batch of ${event.keys.length} keys matched more companies than paging reaches`,
                      ),
                    ])
                  case "Bought":
                    for (const key of event.keys) done[kind].add(key, today)
                    return Effect.succeed([
                      Output.pageRead,
                      ...event.items.map((item) =>
                        Output.record(Streams.streams.companies, item, {
                          [Streams.addedFields.fetchedAt]: fetchedAt,
                        }),
                      ),
                      checkpoint(),
                    ])
                }
              },
            ),
            Stream.flattenIterables,
          )

        const summary = Stream.unwrap(
          Effect.map(Ref.get(unbought), (left) =>
            Stream.fromIterable([
              ...(left === 0
                ? []
                : [Output.shortfall(left, left, "companies (at least one credit per domain or name left)")]),
              checkpoint(),
            ]),
          ),
        )
        // One record per key as a rule (a key may match no company, or several): within the budget.
        const { available } = yield* budget.snapshot
        const keys = pending("domains", settings.domains).length + pending("names", settings.names).length
        return Stream.concat(
          Stream.make<Array<Output.Output<CompanyTechnologies.CompanyTechnologies>>>(
            Output.estimate(Math.min(available, keys)),
          ),
          Stream.concat(Stream.concat(purchase("domains"), purchase("names")), summary),
        )
      }),
    ),
}
