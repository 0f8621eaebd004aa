/**
 * What the one-truth tests share (one-truth.test.ts, one-truth.property.test.ts): two disjoint
 * searches and three emails outside both, a config over the sandbox, and the check that the ledger
 * is the contacts table's index.
 */
import { Sql } from "@salesintel/postgres"
import type { Sandbox } from "@salesintel/sandbox"

export const searchA = { name: "it-vps", filters: { job_departments: ["it_is"], job_levels: ["vp"] } }
export const searchB = { name: "finance-vps", filters: { job_departments: ["fnad"], job_levels: ["vp"] } }

/** Three emails of contacts outside both searches (in neither department). */
export const outsideEmails = (sandbox: Sandbox): ReadonlyArray<string> => {
  const picked: Array<string> = []
  for (let index = 0; picked.length < 3 && index < 5_000; index++) {
    const contact = sandbox.dataset.contact(index)
    if (contact.job_department !== "it_is" && contact.job_department !== "fnad")
      picked.push(String(contact.email))
  }
  return picked
}

/** A config of the sandbox's full key with these contacts settings. */
export const configOver = (sandbox: Sandbox, contacts: Record<string, unknown>) => ({
  api_key: "sandbox-full",
  base_url: sandbox.url,
  credit_budget: 20_000,
  requests_per_minute: 60_000,
  contacts,
})

/** The pipe's catalog: the contacts, incremental into append_dedup. */
export const contactsCatalog = {
  streams: [
    { stream: { name: "contacts" }, sync_mode: "incremental", destination_sync_mode: "append_dedup" },
  ],
}

/**
 * Keys of the ledger without a row, and rows without a ledger key, in `schema`: both 0 when the
 * ledger is the table's index.
 */
export const apartIn = async (
  query: (sql: string) => Promise<ReadonlyArray<Record<string, unknown>>>,
  schema: string,
): Promise<{ readonly extraKeys: number; readonly missingKeys: number }> => {
  const table = (name: string) => Sql.qualified(schema, name)
  const count = async (sql: string) => Number((await query(sql))[0]?.n ?? 0)
  return {
    extraKeys: await count(
      `SELECT count(*)::int AS n FROM ${table("_bought")} b WHERE b.stream = 'contacts' AND NOT EXISTS (SELECT 1 FROM ${table("contacts")} c WHERE c.match_id = b.key)`,
    ),
    missingKeys: await count(
      `SELECT count(*)::int AS n FROM ${table("contacts")} c WHERE NOT EXISTS (SELECT 1 FROM ${table("_bought")} b WHERE b.stream = 'contacts' AND b.key = c.match_id)`,
    ),
  }
}
