/**
 * check: proves that the key works and that the account has each permission the config needs,
 * probing each with the request that needs it, so a refusal names the permission missing:
 *
 * - people access (the contacts stream): a one-record people preview, free;
 * - technologies access (the companies stream): a one-record append for a domain under the
 *   reserved .invalid top-level domain, which no company has. Append charges per company
 *   returned, so it costs nothing;
 * - taxonomy access (the taxonomy streams): the category list, free;
 * - the technographics add-on (tech_* filters): the same request as its stream's probe with one
 *   of the configured tech_* filters added. It runs only once that stream's own probe passed, so
 *   a 403 on it can only mean the add-on.
 *
 * A 403 is recorded and the other probes still run, so every missing permission is named at
 * once; any other failure (a rejected key, an unreachable provider) ends the check there.
 */
import { Message } from "@salesintel/airbyte"
import { type ApiError, Client, Filters } from "@salesintel/core"
import * as Effect from "effect/Effect"
import type { SourceConfig } from "./Config.ts"
import { scrubber } from "./read/Read.ts"

/** A domain no company has (RFC 2606 reserves .invalid): the technologies probe buys nothing. */
export const probeDomain = "salesintel-check.invalid"

/** One tech_* filter of a filter set, narrowed to its first value, or undefined when none. */
const firstTechFilter = (
  filters: Readonly<Record<string, unknown>>,
): Readonly<Record<string, ReadonlyArray<string>>> | undefined => {
  const [key] = Filters.techFiltersUsed(filters)
  if (key === undefined) return undefined
  return { [key]: (filters[key] as ReadonlyArray<string>).slice(0, 1) }
}

interface Probe {
  /** The permission, as the message names it. */
  readonly permission: string
  /** What in the config needs it. */
  readonly neededBy: string
  readonly request: Effect.Effect<unknown, ApiError.ApiError>
  /** The add-on probes run on top of their stream's probe: skipped when that one was refused. */
  readonly after?: string
}

const probesFor = (config: SourceConfig, client: Client.SalesIntelClientService): ReadonlyArray<Probe> => {
  const onePage = { page: 1, pageSize: 1 }
  const probes: Array<Probe> = []
  const nothingConfigured =
    config.contacts === undefined && config.companies === undefined && config.taxonomy === undefined
  if (config.contacts !== undefined || nothingConfigured) {
    probes.push({
      permission: "people access",
      neededBy: "the contacts stream",
      request: client.previewPeople({}, onePage),
    })
    for (const search of config.contacts?.searches ?? []) {
      const tech = firstTechFilter(search.filters)
      if (tech === undefined) continue
      probes.push({
        permission: "the technology add-on",
        neededBy: `the ${Object.keys(tech).join(", ")} filter of contacts search "${search.name}"`,
        request: client.previewPeople(tech, onePage),
        after: "people access",
      })
      break
    }
  }
  if (config.companies !== undefined) {
    const probe = { company_domain: [probeDomain] }
    probes.push({
      permission: "technologies access",
      neededBy: "the companies stream",
      request: client.appendTechnologies(probe, onePage),
    })
    const tech = firstTechFilter(config.companies)
    if (tech !== undefined)
      probes.push({
        permission: "the technology add-on",
        neededBy: `the ${Object.keys(tech).join(", ")} filter of companies`,
        request: client.appendTechnologies({ ...probe, ...tech }, onePage),
        after: "technologies access",
      })
  }
  if (config.taxonomy !== undefined)
    probes.push({
      permission: "taxonomy access",
      neededBy: "the taxonomy streams",
      request: client.taxonomyCategories,
    })
  return probes
}

export const check = (
  config: SourceConfig,
): Effect.Effect<Message.ConnectionStatusMessage, never, Client.SalesIntelClient> =>
  Effect.gen(function* () {
    const client = yield* Client.SalesIntelClient
    const scrub = scrubber(config)
    const confirmed: Array<string> = []
    const missing: Array<string> = []
    for (const probe of probesFor(config, client)) {
      if (probe.after !== undefined && !confirmed.includes(probe.after)) continue
      const outcome = yield* Effect.either(probe.request)
      if (outcome._tag === "Right") {
        if (!confirmed.includes(probe.permission)) confirmed.push(probe.permission)
        continue
      }
      const error = outcome.left
      if (error._tag !== "Forbidden")
        return Message.connectionStatus(
          false,
          scrub(`${probe.permission} check (for ${probe.neededBy}) failed: ${error.message}`),
        )
      const said = error.providerMessage === undefined ? "" : ` (provider said "${error.providerMessage}")`
      missing.push(`${probe.permission} (needed by ${probe.neededBy}): ${error.endpoint} answered 403${said}`)
    }
    if (missing.length > 0)
      return Message.connectionStatus(
        false,
        scrub(
          `the key is accepted, but the account lacks ${missing.join("; and ")}.${confirmed.length > 0 ? ` Confirmed: ${confirmed.join(", ")}.` : ""} Ask the provider to enable what is missing, or remove what needs it from the config.`,
        ),
      )
    return Message.connectionStatus(true, `key accepted; confirmed: ${confirmed.join(", ")}`)
  })

/**
 * The key and the provider, checked with the first of `check`'s probes (a free request): what
 * `salesintel sync` asks before it opens or creates its target, so a rejected key or a provider
 * out of reach leaves nothing behind. A 403 passes: the run names a missing permission where it
 * is needed, as it always has.
 */
export const keyAccepted = (
  config: SourceConfig,
): Effect.Effect<void, ApiError.ApiError, Client.SalesIntelClient> =>
  Effect.gen(function* () {
    const [first] = probesFor(config, yield* Client.SalesIntelClient)
    if (first === undefined) return
    yield* Effect.catchTag(first.request, "Forbidden", () => Effect.void)
  })
