/**
 * check: proves, with free requests only, that the key works and the account has the permissions
 * the config needs: people (a one-record preview), technologies (the taxonomy), and the
 * technographics add-on when any tech_* filter is configured.
 */
import { Message } from "@salesintel/airbyte"
import { type ApiError, Client, Filters } from "@salesintel/core"
import { Effect } from "effect"
import type { SourceConfig } from "./Config.ts"
import { scrubber } from "./Read.ts"

/** The first tech_* filter of the config, as a preview filter, to test the add-on. */
const configuredTechFilter = (config: SourceConfig): Filters.PeopleFilters | undefined => {
  const candidates: Array<Readonly<Record<string, unknown>>> = [
    ...(config.contacts?.searches ?? []).map((search) => search.filters),
    ...(config.companies === undefined ? [] : [config.companies]),
  ]
  for (const filters of candidates) {
    const [key] = Filters.techFiltersUsed(filters)
    if (key !== undefined) {
      const values = filters[key] as ReadonlyArray<string>
      return { [key]: values.slice(0, 1) }
    }
  }
  return undefined
}

export const check = (
  config: SourceConfig,
): Effect.Effect<Message.ConnectionStatusMessage, never, Client.SalesIntelClient> =>
  Effect.gen(function* () {
    const client = yield* Client.SalesIntelClient
    const probes: Array<readonly [string, Effect.Effect<unknown, ApiError.ApiError>]> = []
    const wantsPeople =
      config.contacts !== undefined || (config.companies === undefined && config.taxonomy === undefined)
    if (wantsPeople) probes.push(["people", client.previewPeople({}, { page: 1, pageSize: 1 })])
    if (config.companies !== undefined || config.taxonomy !== undefined)
      probes.push(["technologies", client.taxonomyCategories])
    const techFilter = configuredTechFilter(config)
    if (techFilter !== undefined)
      probes.push(["technology add-on", client.previewPeople(techFilter, { page: 1, pageSize: 1 })])
    for (const [name, probe] of probes) {
      const outcome = yield* Effect.either(probe)
      if (outcome._tag === "Left")
        return Message.connectionStatus(
          false,
          scrubber(config)(`${name} access check failed: ${outcome.left.message}`),
        )
    }
    return Message.connectionStatus(
      true,
      `key accepted; access confirmed for ${probes.map(([name]) => name).join(", ")}`,
    )
  })
