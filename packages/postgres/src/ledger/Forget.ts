/**
 * Erasure: the rows of people (by match id, email or LinkedIn URL) and companies (by domain)
 * deleted from every table that holds them: the stream tables, their children and histories, the
 * change and observation tables (and the tables kept from the observations: LogDerived.ts),
 * `_rejected`, the ledger `_bought`, the known identities done (`_known_done`) and the saved
 * states' bought sets. The views (champion_moves, ...) are over these tables and lose them with them. Which rows
 * go is found first (`found`), then counted (a dry run) or deleted, all in the caller's transaction.
 */
import * as Effect from "effect/Effect"
import { Database, type DatabaseError, type Row } from "../database/Database.ts"
import { qualified } from "../database/Sql.ts"
import * as LogDerived from "../history/LogDerived.ts"
import * as ForgetState from "./ForgetState.ts"

/** What to forget, each identifier as the user gave it. */
export interface Request {
  readonly matchIds: ReadonlyArray<string>
  readonly emails: ReadonlyArray<string>
  readonly linkedinUrls: ReadonlyArray<string>
  readonly domains: ReadonlyArray<string>
}

/** The rows found for a request, and the identifiers they held (what the suppression hashes). */
export interface Found {
  readonly matchIds: ReadonlyArray<string>
  readonly emails: ReadonlyArray<string>
  readonly linkedinUrls: ReadonlyArray<string>
  readonly companyIds: ReadonlyArray<string>
  readonly domains: ReadonlyArray<string>
  /**
   * The people's names at their companies' domains, as a known identity's key writes them
   * (`name:first|last|domain`): the identities done (`_known_done`) that name them.
   */
  readonly names: ReadonlyArray<string>
}

export interface TableCount {
  readonly table: string
  readonly rows: number
}

/** A URL or domain compared bare: as the source's Suppression.normalise writes it. */
const bare = (sql: string) =>
  `regexp_replace(regexp_replace(regexp_replace(lower(btrim(${sql})), '^https?://', ''), '^www\\.', ''), '/+$', '')`

const lowered = (values: ReadonlyArray<string>) => [...new Set(values.map((v) => v.trim().toLowerCase()))]
const bareValues = (values: ReadonlyArray<string>) =>
  lowered(values).map((v) =>
    v
      .replace(/^https?:\/\//, "")
      .replace(/^www\./, "")
      .replace(/\/+$/, ""),
  )

const texts = (rows: ReadonlyArray<Row>, column: string): ReadonlyArray<string> => [
  ...new Set(
    rows.flatMap((row) => (typeof row[column] === "string" && row[column] !== "" ? [row[column]] : [])),
  ),
]

/** The held rows' names at each of their company's domains, as a known identity's key (Identity.keyOf). */
const namesOf = (rows: ReadonlyArray<Row>): ReadonlyArray<string> => [
  ...new Set(
    rows.flatMap((row) =>
      typeof row.name === "string" && Array.isArray(row.company_domains)
        ? row.company_domains.map((domain) => `${row.name}${String(domain).trim().toLowerCase()}`)
        : [],
    ),
  ),
]

/** The people a request names, held or not: the match ids given and those the rows of the emails and URLs hold. */
const people = (schema: string, request: Request) =>
  Effect.gen(function* () {
    const db = yield* Database
    const t = (name: string) => qualified(schema, name)
    const params = [
      [...new Set(request.matchIds.map((id) => id.trim()))],
      lowered(request.emails),
      bareValues(request.linkedinUrls),
    ]
    const matching = (table: string) =>
      `SELECT match_id FROM ${t(table)} WHERE match_id = ANY($1) OR lower(btrim(email)) = ANY($2) OR lower(btrim(personal_email)) = ANY($2) OR ${bare("linkedin_url")} = ANY($3)`
    const ids = yield* db.query(
      `${matching("contacts")} UNION ${matching("contacts_history")}
UNION SELECT match_id FROM ${t("contact_social_profiles")} WHERE ${bare("url")} = ANY($3)
UNION SELECT unnest($1::text[])`,
      params,
    )
    const matchIds = texts(ids, "match_id")
    const held = (table: string) =>
      `SELECT lower(btrim(email)) AS email, lower(btrim(personal_email)) AS personal, linkedin_url AS url,
              'name:' || lower(first_name) || '|' || lower(last_name) || '|' AS name, company_domains
         FROM ${t(table)} WHERE match_id = ANY($1)`
    const rows = yield* db.query(
      `${held("contacts")} UNION ${held("contacts_history")}
UNION SELECT NULL, NULL, url, NULL, NULL FROM ${t("contact_social_profiles")} WHERE match_id = ANY($1) AND lower(type) = 'linkedin'`,
      [matchIds],
    )
    return {
      names: namesOf(rows),
      matchIds,
      emails: [...new Set([...texts(rows, "email"), ...texts(rows, "personal"), ...lowered(request.emails)])],
      linkedinUrls: [...new Set([...texts(rows, "url"), ...bareValues(request.linkedinUrls)])],
    }
  })

/** The companies a request's domains name (any of their domains), and every domain they hold. */
const companies = (schema: string, domains: ReadonlyArray<string>) =>
  Effect.gen(function* () {
    const db = yield* Database
    const t = (name: string) => qualified(schema, name)
    const matching = (table: string) =>
      `SELECT company_id::text AS id, company_domains FROM ${t(table)} WHERE EXISTS (SELECT 1 FROM unnest(company_domains) d WHERE ${bare("d")} = ANY($1))`
    const rows = yield* db.query(`${matching("companies")} UNION ALL ${matching("companies_history")}`, [
      bareValues(domains),
    ])
    const held = rows.flatMap((row) => (Array.isArray(row.company_domains) ? row.company_domains : []))
    return {
      companyIds: texts(rows, "id"),
      domains: [
        ...new Set([
          ...bareValues(held.filter((d): d is string => typeof d === "string")),
          ...bareValues(domains),
        ]),
      ],
    }
  })

export const found = (schema: string, request: Request): Effect.Effect<Found, DatabaseError, Database> =>
  Effect.map(
    Effect.all([people(schema, request), companies(schema, request.domains)]),
    ([person, company]) => ({ ...person, ...company }),
  )

interface Where {
  readonly table: string
  readonly where: string
  readonly params: ReadonlyArray<unknown>
}

/** Every table that holds a row of what was found, with the condition that picks its rows. */
const wheres = (found: Found): ReadonlyArray<Where> => [
  ...(found.matchIds.length === 0
    ? []
    : ["contacts", "contacts_history", "contact_phones", "contact_social_profiles", "job_changes"].map(
        (table) => ({ table, where: "match_id = ANY($1)", params: [found.matchIds] }),
      )),
  ...(found.companyIds.length === 0
    ? []
    : [
        "companies",
        "companies_history",
        "company_technologies",
        "company_sites",
        "company_observations",
        "technology_observations",
        LogDerived.logChangesTable.name,
        LogDerived.sightingsTable.name,
        LogDerived.inUseTable.name,
        "technology_changes",
      ].map((table) => ({ table, where: "company_id::text = ANY($1)", params: [found.companyIds] }))),
  {
    table: "_bought",
    where:
      "(stream = 'contacts' AND key = ANY($1)) OR (stream = 'companies' AND (key = ANY($2) OR lower(key) = ANY($3)))",
    params: [found.matchIds, found.companyIds, found.domains],
  },
  {
    table: "_known_done",
    where: `stream = 'contacts' AND (key = ANY($1) OR key = ANY($2) OR key = ANY($3)
      OR (key LIKE 'linkedin:%' AND ${bare("substr(key, 10)")} = ANY($4)))`,
    params: [
      found.emails,
      found.matchIds.map((id) => `match_id:${id}`),
      found.names,
      bareValues(found.linkedinUrls),
    ],
  },
  {
    table: "_rejected",
    where:
      "(stream = 'contacts' AND (key = ANY($1) OR record->>'match_id' = ANY($1) OR lower(record->>'email') = ANY($2))) OR (stream = 'companies' AND (key = ANY($3) OR record->>'company_id' = ANY($3)))",
    params: [found.matchIds, found.emails, found.companyIds],
  },
]

/** The companies found, as a query of company_id (ids read from the database: digits, checked). */
const companyList = (found: Found): string => {
  const ids = found.companyIds.filter((id) => /^-?\d+$/.test(id))
  return `SELECT unnest(ARRAY[${ids.join(", ")}]::bigint[]) AS company_id`
}

/** The rows each table holds of what was found; deleted unless `dryRun`. Tables with none left out. */
export const rows = (
  schema: string,
  found: Found,
  dryRun: boolean,
): Effect.Effect<ReadonlyArray<TableCount>, DatabaseError, Database> =>
  Effect.gen(function* () {
    const db = yield* Database
    // The monthly counts hold the companies' contributions, not rows of theirs: taken out first,
    // computed from their log before it goes.
    if (!dryRun && found.companyIds.length > 0)
      yield* db.exec(LogDerived.forgetSql(schema, companyList(found)))
    const counts = yield* Effect.forEach(wheres(found), ({ table, where, params }) => {
      const from = `${qualified(schema, table)} WHERE ${where}`
      const sql = dryRun
        ? `SELECT count(*)::int AS n FROM ${from}`
        : `WITH gone AS (DELETE FROM ${from} RETURNING 1) SELECT count(*)::int AS n FROM gone`
      return Effect.map(db.query(sql, params), (result) => ({ table, rows: Number(result[0]?.n ?? 0) }))
    })
    const gone = { people: [...found.matchIds, ...found.emails], domains: found.domains }
    const state = { table: "_state", rows: yield* ForgetState.without(schema, gone, dryRun) }
    return [...counts, state].filter((count) => count.rows > 0)
  })
