// API keys, their permissions and credit balances, and per-key request counters.
import { readFileSync } from "node:fs"

/** people: search + preview; technologies: append (and taxonomy); tech_addon: tech_* filters (and taxonomy). */
export type Permission = "people" | "technologies" | "tech_addon"
export const permissions: readonly Permission[] = ["people", "technologies", "tech_addon"]

export interface AccountSpec {
  readonly key: string
  readonly permissions: readonly Permission[]
  readonly credits: number
}

export const defaultAccounts: readonly AccountSpec[] = [
  { key: "sandbox-full", permissions: ["people", "technologies", "tech_addon"], credits: 1_000_000 },
  { key: "sandbox-no-tech", permissions: ["people", "technologies"], credits: 1_000_000 },
  { key: "sandbox-no-access", permissions: [], credits: 1_000_000 },
  { key: "sandbox-low-credit", permissions: ["people", "technologies", "tech_addon"], credits: 100 },
]

/** The key of the account holding exactly `granted`: "perm-none" or e.g. "perm-people+tech_addon". */
export const permissionKey = (granted: readonly Permission[]): string =>
  granted.length === 0 ? "perm-none" : `perm-${permissions.filter((p) => granted.includes(p)).join("+")}`

/**
 * One account per combination of permissions (all 8), keyed by permissionKey, for tests of what
 * each combination may do: `startSandbox({ accounts: permissionCombinations() })`.
 */
export const permissionCombinations = (credits = 1_000_000): AccountSpec[] =>
  Array.from({ length: 2 ** permissions.length }, (_, mask) => {
    const granted = permissions.filter((_, bit) => (mask & (1 << bit)) !== 0)
    return { key: permissionKey(granted), permissions: granted, credits }
  })

/** One account's live state. */
export class Account {
  creditsLeft: number
  creditsCharged = 0
  /** Requests by endpoint name, then by HTTP status (as a string, like JSON keys). */
  requests: Record<string, Record<string, number>> = {}

  constructor(readonly spec: AccountSpec) {
    this.creditsLeft = spec.credits
  }

  can(permission: Permission): boolean {
    return this.spec.permissions.includes(permission)
  }

  /** Charges `credits` if the balance covers all of them; otherwise charges nothing. */
  charge(credits: number): boolean {
    if (credits > this.creditsLeft) return false
    this.creditsLeft -= credits
    this.creditsCharged += credits
    return true
  }

  /** Counts a request under its status, or "dropped"/"truncated" for those injected faults. */
  count(endpoint: string, status: number | "dropped" | "truncated"): void {
    const byStatus = this.requests[endpoint] ?? {}
    this.requests[endpoint] = byStatus
    byStatus[String(status)] = (byStatus[String(status)] ?? 0) + 1
  }

  reset(): void {
    this.creditsLeft = this.spec.credits
    this.creditsCharged = 0
    this.requests = {}
  }

  snapshot(): {
    credits_charged: number
    credits_left: number
    requests: Record<string, Record<string, number>>
  } {
    return {
      credits_charged: this.creditsCharged,
      credits_left: this.creditsLeft,
      requests: structuredClone(this.requests),
    }
  }
}

const isPermission = (value: unknown): value is Permission => permissions.includes(value as Permission)

/**
 * Reads an accounts file: `{"accounts": [{"key", "permissions", "credits"}]}` or the same
 * array alone. Accounts in the file are added to the built-in ones (same key: the file wins).
 */
export const parseAccounts = (json: unknown, source = "accounts"): AccountSpec[] => {
  const list = Array.isArray(json) ? json : (json as { accounts?: unknown } | null)?.accounts
  if (!Array.isArray(list)) throw new Error(`${source}: expected {"accounts": [...]} or an array`)
  return list.map((entry: unknown, i) => {
    const e = entry as { key?: unknown; permissions?: unknown; credits?: unknown }
    if (typeof e?.key !== "string" || e.key === "")
      throw new Error(`${source}[${i}].key must be a non-empty string`)
    if (!Array.isArray(e.permissions) || !e.permissions.every(isPermission)) {
      throw new Error(`${source}[${i}].permissions must be a list of ${permissions.join(", ")}`)
    }
    if (typeof e.credits !== "number" || !Number.isSafeInteger(e.credits) || e.credits < 0) {
      throw new Error(`${source}[${i}].credits must be a non-negative integer`)
    }
    return { key: e.key, permissions: e.permissions, credits: e.credits }
  })
}

export const loadAccountsFile = (path: string): AccountSpec[] =>
  parseAccounts(JSON.parse(readFileSync(path, "utf8")) as unknown, path)

/** Built-in accounts overlaid with the given ones. */
export const mergeAccounts = (extra: readonly AccountSpec[] = []): AccountSpec[] => {
  const byKey = new Map(defaultAccounts.map((a) => [a.key, a]))
  for (const a of extra) byKey.set(a.key, a)
  return [...byKey.values()]
}
