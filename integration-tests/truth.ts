/**
 * What the one-truth tests share (one-truth.test.ts, one-truth.property.test.ts): the sandbox they
 * read (small: nothing there needs a search past the 10,000-deep paging limit), two disjoint
 * searches and three emails outside both, a config over the sandbox with a key of its own, and the
 * check that the ledger is the contacts table's index.
 */
import { Sql } from "@salesintel/postgres"
import type { Dataset } from "@salesintel/sandbox"
import { fastPace } from "./sandbox.ts"

/**
 * 20,000 contacts: searchA finds 193 of them, searchB 159, and "it" (case 10) 2,362, which a read
 * paced at 50 requests a second takes about a second to page through.
 */
export const truthSandbox = { seed: 42, contacts: 20_000, companies: 2_000 }

export const searchA = { name: "it-vps", filters: { job_departments: ["it_is"], job_levels: ["vp"] } }
export const searchB = { name: "finance-vps", filters: { job_departments: ["fnad"], job_levels: ["vp"] } }

/** Three emails of contacts outside both searches (in neither department). */
export const outsideEmails = (dataset: Dataset): ReadonlyArray<string> => {
  const picked: Array<string> = []
  for (let index = 0; picked.length < 3 && index < 5_000; index++) {
    const contact = dataset.contact(index)
    if (contact.job_department !== "it_is" && contact.job_department !== "fnad")
      picked.push(String(contact.email))
  }
  return picked
}

/** A config of the sandbox at `url`, with `key` and these contacts settings, at the tests' pace. */
export const configOver = (url: string, key: string, contacts: Record<string, unknown>) => ({
  api_key: key,
  base_url: url,
  credit_budget: 20_000,
  requests_per_minute: fastPace,
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
