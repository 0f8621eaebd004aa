// Injected faults for tests: latency, 500s, 429s, dropped connections, truncated bodies,
// contacts sent without their match_id, paid contacts with a field of the wrong type, records sent
// twice on a page, and a per-key request limit. Settings are global or per key (a key's settings override the
// global ones field by field); the decisions come from a PRNG per key seeded from the
// sandbox seed, so a run with the same requests in the same order fails the same way.
import { hashString, Prng, unit } from "./Random.ts"

export interface FaultSettings {
  /** Fixed delay before every answer, in ms. */
  readonly latency_ms?: number
  /** Extra uniform random delay in [0, jitter_ms). */
  readonly jitter_ms?: number
  /** Share of requests answered 500. */
  readonly error_rate?: number
  /** Share of requests answered 429 with Retry-After. */
  readonly rate_limit_rate?: number
  /** Retry-After seconds on injected 429s. */
  readonly retry_after_s?: number
  /**
   * 1: every 429 carries Retry-After; 0: none does. The provider documents no such header, so a
   * client must also cope without one.
   */
  readonly retry_after_header?: number
  /** Share of requests whose connection is destroyed without an answer. */
  readonly drop_rate?: number
  /** Share of requests whose 200 body is cut in half (the Content-Length still promises all). */
  readonly truncate_rate?: number
  /** Per-key requests allowed in any 60 s window (the provider documents 1,800/min per user); 0 = no limit. */
  readonly requests_per_minute?: number
  /**
   * Share of contacts sent without `match_id`, in search and preview alike: chosen per contact
   * (from the seed and its index), so a contact sent so once is sent so on every request.
   */
  readonly no_match_id_rate?: number
  /**
   * Share of the records of a page (search, preview, append) sent twice in a row: chosen per
   * record, like `no_match_id_rate`. Each copy is a record on the page, and a credited page is
   * charged per record on it (interface-spec.md, Limits 3), so a copy costs a credit.
   */
  readonly duplicate_rate?: number
  /**
   * Share of contacts whose paid record (search) carries `job_level` as a number, not the string
   * the provider documents; the free preview sends it as it is, match_id and all. Chosen per
   * contact like `no_match_id_rate`, so a contact bought so is bought so on every request, and
   * charged like any record on the page.
   */
  readonly bad_field_rate?: number
}

export const defaultFaults: Required<FaultSettings> = {
  latency_ms: 0,
  jitter_ms: 0,
  error_rate: 0,
  rate_limit_rate: 0,
  retry_after_s: 1,
  retry_after_header: 1,
  drop_rate: 0,
  truncate_rate: 0,
  requests_per_minute: 1800,
  no_match_id_rate: 0,
  duplicate_rate: 0,
  bad_field_rate: 0,
}

const numberFields = Object.keys(defaultFaults) as Array<keyof FaultSettings>

/** Validates a JSON fault settings object (from the CLI or POST /_sandbox/faults). */
export const parseFaultSettings = (json: unknown): FaultSettings => {
  if (typeof json !== "object" || json === null) throw new Error("fault settings must be a JSON object")
  const out: Record<string, number> = {}
  for (const [name, value] of Object.entries(json)) {
    if (name === "key") continue
    if (!numberFields.includes(name as keyof FaultSettings))
      throw new Error(`unknown fault setting '${name}'`)
    if (typeof value !== "number" || !Number.isFinite(value) || value < 0) {
      throw new Error(`fault setting '${name}' must be a non-negative number`)
    }
    if (name.endsWith("_rate") && value > 1)
      throw new Error(`fault setting '${name}' is a share between 0 and 1`)
    out[name] = value
  }
  return out
}

/** Salts of the per-record decisions, apart from every field the dataset draws. */
const recordSalts = { noMatchId: 0x6e6d6964, duplicate: 0x64757031, badField: 0x62616466 } as const

export type FaultDecision =
  | { readonly kind: "none" }
  | { readonly kind: "error" }
  | { readonly kind: "rate_limited"; readonly retryAfterS: number }
  | { readonly kind: "drop" }
  | { readonly kind: "truncate" }

export class Faults {
  private global: FaultSettings
  private perKey = new Map<string, FaultSettings>()
  private streams = new Map<string, Prng>()
  /** Per key: times (ms) of the requests admitted, oldest first from `head`. */
  private windows = new Map<string, { times: number[]; head: number }>()

  constructor(
    private readonly seed: number,
    private readonly initial: FaultSettings = {},
  ) {
    this.global = { ...initial }
  }

  set(settings: FaultSettings, key?: string): void {
    if (key === undefined) this.global = { ...this.global, ...settings }
    else this.perKey.set(key, { ...this.perKey.get(key), ...settings })
  }

  reset(): void {
    this.global = { ...this.initial }
    this.perKey.clear()
    this.streams.clear()
    this.windows.clear()
  }

  settingsFor(key: string): Required<FaultSettings> {
    return { ...defaultFaults, ...this.global, ...this.perKey.get(key) }
  }

  private random(key: string): Prng {
    let stream = this.streams.get(key)
    if (stream === undefined) {
      stream = new Prng(this.seed ^ hashString(key))
      this.streams.set(key, stream)
    }
    return stream
  }

  /** The delay to apply to this request, in ms. */
  delay(key: string): number {
    const s = this.settingsFor(key)
    return s.latency_ms + (s.jitter_ms > 0 ? this.random(key).next() * s.jitter_ms : 0)
  }

  /**
   * The per-key request limit: seconds to wait when over it, otherwise undefined (and the
   * request is admitted into the window). Refused requests do not count against the limit.
   */
  overLimit(key: string, now: number): number | undefined {
    const limit = this.settingsFor(key).requests_per_minute
    if (limit === 0) return undefined
    let window = this.windows.get(key)
    if (window === undefined) {
      window = { times: [], head: 0 }
      this.windows.set(key, window)
    }
    const { times } = window
    while (window.head < times.length && times[window.head]! <= now - 60_000) window.head++
    if (window.head > 4096) {
      times.splice(0, window.head)
      window.head = 0
    }
    if (times.length - window.head >= limit) {
      return Math.max(1, Math.ceil((times[window.head]! + 60_000 - now) / 1000))
    }
    times.push(now)
    return undefined
  }

  /** Whether the contact at `index` is sent without its match_id (the same on every request). */
  lacksMatchId(key: string, index: number): boolean {
    const rate = this.settingsFor(key).no_match_id_rate
    return rate > 0 && unit(this.seed, index, recordSalts.noMatchId) < rate
  }

  /** Whether the record at `index` (a contact's or a company's) is sent twice on its page. */
  isDuplicated(key: string, index: number): boolean {
    const rate = this.settingsFor(key).duplicate_rate
    return rate > 0 && unit(this.seed, index, recordSalts.duplicate) < rate
  }

  /** Whether the paid record of the contact at `index` carries a field of the wrong type (every time). */
  hasBadField(key: string, index: number): boolean {
    const rate = this.settingsFor(key).bad_field_rate
    return rate > 0 && unit(this.seed, index, recordSalts.badField) < rate
  }

  /** One draw per request decides its injected fault, if any. */
  decide(key: string): FaultDecision {
    const s = this.settingsFor(key)
    const total = s.drop_rate + s.error_rate + s.rate_limit_rate + s.truncate_rate
    if (total === 0) return { kind: "none" }
    const r = this.random(key).next()
    if (r < s.drop_rate) return { kind: "drop" }
    if (r < s.drop_rate + s.error_rate) return { kind: "error" }
    if (r < s.drop_rate + s.error_rate + s.rate_limit_rate)
      return { kind: "rate_limited", retryAfterS: s.retry_after_s }
    if (r < total) return { kind: "truncate" }
    return { kind: "none" }
  }
}
