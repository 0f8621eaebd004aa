/**
 * What the views need from the observation log (Observations.ts), kept as tables by the loader in
 * the transaction that writes the log, so that a view reads them instead of comparing every
 * observation with the one before at each query (2,000,000 rows joined twice at 20,000 companies):
 *  - `technology_log_changes`: each company observation's products adopted and dropped against the
 *    company's observation before (what `log_changes` computed from the log);
 *  - `technology_sightings`: per company and product, its first and last sighting, how often it
 *    was seen, its latest labels, its first adoption and last drop;
 *  - `technology_in_use`: each company's products at its latest observation (what the market views
 *    read: a lookup per company into the log cost a second over 20,000 companies);
 *  - `technology_usage_months`, `technology_category_usage_months`, `observed_months`: per month
 *    (and product, or category) the companies whose last observation that month showed it in use,
 *    the adoptions and drops, and the companies observed.
 * The first three are a company's own: its changes made again from the log from its first new
 * observation on (deleted and recomputed, so loads out of order and reloads agree with the log),
 * its sightings added to from its new observations (its log only grows; forget deletes it whole),
 * its products in use made again when a new observation is its latest.
 * The counts are across companies, kept by difference: a company's contributions (to the
 * months it is observed anew in, and through its changes) are subtracted before its observations
 * are written and added again after, each computed from the log as it then is. All of it under a
 * transaction-level advisory lock per schema (`lockSql`): two transactions computing the same
 * company's contributions from two states of the log would corrupt the counts.
 */

import { ident, literal, qualified } from "../database/Sql.ts"
import type { ColumnShape, TableShape } from "../schema/Table.ts"
import { carriedTechnologies, companyObservationsTable, technologyObservationsTable } from "./Observations.ts"

const companyId: ColumnShape = {
  name: "company_id",
  type: "bigint",
  notNull: true,
  doc: "the company (companies.company_id)",
}
const category: ColumnShape = { name: "category", type: "text", doc: "the product's technology category" }
const subcategory: ColumnShape = {
  name: "subcategory",
  type: "text",
  doc: "the product's technology subcategory",
}
const product: ColumnShape = {
  name: "product",
  type: "text",
  notNull: true,
  doc: "the product (taxonomy_products.product)",
}
const vendor: ColumnShape = { name: "vendor", type: "text", doc: "the product's vendor" }
const month: ColumnShape = {
  name: "month",
  type: "date",
  notNull: true,
  doc: "the calendar month (UTC), as its first day",
}
const count = (name: string, doc: string): ColumnShape => ({
  name,
  type: "bigint",
  notNull: true,
  default: "0",
  doc,
})
const rowId = (name: string): ColumnShape => ({
  name,
  type: "bigint",
  identity: true,
  notNull: true,
  doc: "the order the rows were written in (the key: a vendor or category may be null)",
})

export const logChangesTable: TableShape = {
  name: "technology_log_changes",
  doc: "the observation log's changes, kept by the loader with the log: one row per company observation and product adopted (in use at it and not at the company's observation before) or dropped (the reverse); a company's first observation has none",
  primaryKey: ["company_id", "observed_at", "log_change_id"],
  columns: [
    rowId("log_change_id"),
    companyId,
    {
      name: "observed_at",
      type: "timestamptz",
      notNull: true,
      doc: "the observation that showed the change (company_observations.observed_at)",
    },
    {
      name: "previous_at",
      type: "timestamptz",
      notNull: true,
      doc: "the company's observation before it: the change happened in between",
    },
    { name: "company_name", type: "text", doc: "the company's name as the observation observed_at says it" },
    { ...category, doc: "the product's technology category (for a drop, as the observation before says it)" },
    {
      ...subcategory,
      doc: "the product's technology subcategory (for a drop, as the observation before says it)",
    },
    product,
    vendor,
    { name: "change", type: "text", notNull: true, doc: "adopted or dropped" },
  ],
}

export const sightingsTable: TableShape = {
  name: "technology_sightings",
  doc: "per company and product ever observed in use there: its first and last sighting, how many observations showed it, its labels as the last says them, its first adoption and last drop (technology_log_changes); kept by the loader with the log",
  primaryKey: ["company_id", "sighting_id"],
  columns: [
    rowId("sighting_id"),
    companyId,
    product,
    vendor,
    { ...category, doc: "the product's technology category as its last sighting says it" },
    { ...subcategory, doc: "the product's technology subcategory as its last sighting says it" },
    {
      name: "first_seen_at",
      type: "timestamptz",
      notNull: true,
      doc: "the first observation of the company that showed it in use",
    },
    {
      name: "last_seen_at",
      type: "timestamptz",
      notNull: true,
      doc: "the last observation of the company that showed it in use",
    },
    count("observations", "how many observations of the company showed it in use"),
    {
      name: "adopted_at",
      type: "timestamptz",
      doc: "the first observation that showed it adopted (technology_log_changes); null when none did",
    },
    {
      name: "dropped_at",
      type: "timestamptz",
      doc: "the last observation that showed it dropped (technology_log_changes); null when none did",
    },
  ],
}

export const inUseTable: TableShape = {
  name: "technology_in_use",
  doc: "each company's products in use at its latest observation, kept by the loader with the log (a company whose latest observation lists none has no row)",
  primaryKey: ["company_id", "in_use_id"],
  columns: [
    rowId("in_use_id"),
    companyId,
    {
      name: "observed_at",
      type: "timestamptz",
      notNull: true,
      doc: "the company's latest observation (company_observations.observed_at)",
    },
    { ...category, doc: "the product's technology category as that observation says it" },
    { ...subcategory, doc: "the product's technology subcategory as that observation says it" },
    product,
    vendor,
  ],
}

const usageCounts: ReadonlyArray<ColumnShape> = [
  count(
    "companies_using",
    "the companies whose last observation that month showed it in use (one that dropped it mid-month does not count)",
  ),
  count("adoptions", "adoptions observed that month (technology_log_changes)"),
  count("drops", "drops observed that month (technology_log_changes)"),
]

export const usageMonthsTable: TableShape = {
  name: "technology_usage_months",
  doc: "per month and product: the companies whose last observation that month showed it in use, and the adoptions and drops observed; kept by the loader with the log (a row of zeros means none)",
  primaryKey: ["usage_id"],
  columns: [rowId("usage_id"), month, product, vendor, ...usageCounts],
}

export const categoryUsageMonthsTable: TableShape = {
  name: "technology_category_usage_months",
  doc: "per month and technology category: the companies whose last observation that month showed a product of it in use, and the adoptions and drops of its products observed; kept by the loader with the log (a row of zeros means none)",
  primaryKey: ["usage_id"],
  columns: [rowId("usage_id"), month, { ...category, doc: "the technology category" }, ...usageCounts],
}

export const observedMonthsTable: TableShape = {
  name: "observed_months",
  doc: "per month: how many companies were observed (bought with their technologies); kept by the loader with the log",
  primaryKey: ["month"],
  columns: [month, count("companies_observed", "the companies observed that month")],
}

export const tables: ReadonlyArray<TableShape> = [
  logChangesTable,
  sightingsTable,
  inUseTable,
  usageMonthsTable,
  categoryUsageMonthsTable,
  observedMonthsTable,
]

/** The temporary table of a batch's new observations (company, time), filled before they are written. */
export const newObservations = "pg_temp._salesintel_new_observations"

/** The temporary table of the sightings in a batch's new observations (per company and product). */
const newSightings = "pg_temp._salesintel_new_sightings"

/**
 * Creates them (once per session, as the staging tables: Merge.prepare); emptied at each commit,
 * and analysed at each batch: the planner joins them with the log and the derived tables, and
 * without their size it nested-looped 40,000 sightings against 40,000 (154 s for 20,000 companies).
 */
export const prepareSql = `CREATE TEMP TABLE IF NOT EXISTS _salesintel_new_observations (company_id bigint, observed_at timestamptz) ON COMMIT DELETE ROWS;
CREATE TEMP TABLE IF NOT EXISTS _salesintel_new_sightings (company_id bigint, product text, vendor text, category text, subcategory text, first_seen_at timestamptz, last_seen_at timestamptz, observations bigint) ON COMMIT DELETE ROWS`

/**
 * The same product (vendor compared null-safely), as a row: the log's product index (for the
 * trends' labels) is never taken for it, where `product = product` made the planner AND it with the
 * key's index and read every row of the product at each probe (a migration took 118 s, not 15).
 */
export const sameProduct = (a: string, b: string): string =>
  `(${a}.product, ${a}.vendor) IS NOT DISTINCT FROM (${b}.product, ${b}.vendor)`

/**
 * The observation whose labels a change row carries (`row` a table's alias with its dot, or ''):
 * an adoption's own, a drop's the one before. Indexed, with the product and time (`fillSql`).
 */
export const labelledAt = (row: string): string =>
  `CASE WHEN ${row}change = 'adopted' THEN ${row}observed_at ELSE ${row}previous_at END`

/** The calendar month (UTC, whatever the session's time zone) of a timestamptz, as a date. */
export const monthOf = (column: string): string => `date_trunc('month', ${column} AT TIME ZONE 'UTC')::date`

const names = (schema: string) => ({
  companyObservations: qualified(schema, companyObservationsTable.name),
  technologyObservations: qualified(schema, technologyObservationsTable.name),
  logChanges: qualified(schema, logChangesTable.name),
  sightings: qualified(schema, sightingsTable.name),
  inUse: qualified(schema, inUseTable.name),
  usage: qualified(schema, usageMonthsTable.name),
  categoryUsage: qualified(schema, categoryUsageMonthsTable.name),
  observedMonths: qualified(schema, observedMonthsTable.name),
})

/** Serialises the work on the derived tables of one schema until the transaction ends. */
export const lockSql = (schema: string): string =>
  `SELECT pg_advisory_xact_lock(hashtext(${literal(`salesintel-observation-log:${schema}`)}))`

/** A month's bounds as timestamptz (UTC), for a range scan of (company_id, observed_at). */
export const monthStart = (m: string) => `(${m}::timestamp AT TIME ZONE 'UTC')`
export const monthEnd = (m: string) => `((${m} + interval '1 month') AT TIME ZONE 'UTC')`

/** Null-safe and hashable equality of the listed columns of two rows ('' and null stay apart). */
const sameKeys = (a: string, b: string, keys: ReadonlyArray<string>, nullable: ReadonlySet<string>) =>
  keys
    .map((key) =>
      nullable.has(key)
        ? `coalesce(${a}.${key}, '') = coalesce(${b}.${key}, '') AND (${a}.${key} IS NULL) = (${b}.${key} IS NULL)`
        : `${a}.${key} = ${b}.${key}`,
    )
    .join(" AND ")

/**
 * Adds `delta` (rows of the keys and the counts, several per key allowed) to `table`: an UPDATE of
 * the rows held, an INSERT of the others. Not an upsert: a nullable key has no unique index. Safe
 * under `lockSql` only.
 */
const addSql = (
  table: string,
  keys: ReadonlyArray<string>,
  nullable: ReadonlySet<string>,
  counts: ReadonlyArray<string>,
  delta: string,
): string => {
  const keyList = keys.join(", ")
  return `WITH delta AS (
  SELECT ${keyList}, ${counts.map((c) => `sum(${c})::bigint AS ${c}`).join(", ")} FROM (${delta}) d GROUP BY ${keyList}
),
updated AS (
  UPDATE ${table} t SET ${counts.map((c) => `${c} = t.${c} + d.${c}`).join(", ")}
  FROM delta d WHERE ${sameKeys("t", "d", keys, nullable)}
  RETURNING ${keys.map((key) => `t.${key}`).join(", ")}
)
INSERT INTO ${table} (${keyList}, ${counts.join(", ")})
SELECT ${keyList}, ${counts.join(", ")} FROM delta d
WHERE NOT EXISTS (SELECT 1 FROM updated u WHERE ${sameKeys("u", "d", keys, nullable)})`
}

/**
 * The companies a query of company_id lists, as a condition on `column` (probes its index); every
 * company when undefined (the array's search is linear: no place for the whole log's companies).
 */
const among = (column: string, companies: string | undefined) =>
  companies === undefined ? "true" : `${column} = ANY (ARRAY(${companies}))`

/**
 * The changes held of the companies and times `since` lists (a query of company_id, since): each
 * company's from that time on, looked up by the key company by company (a join would hash them all).
 */
const changesSince = (schema: string, since: string): string => `SELECT c.* FROM (${since}) f
  CROSS JOIN LATERAL (
    SELECT * FROM ${names(schema).logChanges} c WHERE c.company_id = f.company_id AND c.observed_at >= f.since OFFSET 0
  ) c`

/**
 * The statements adding `sign` (1 or -1) times the contributions to the counts of the companies
 * and months `months` lists (a query of company_id, month), computed from the log as it is: each
 * company's last observation of each month (its products and categories, and one company observed),
 * and the changes held from the times `since` lists on (`changesSince`). Looked up by the log's key,
 * company and month by company and month: a join would hash the whole log.
 */
const contributionsSql = (schema: string, months: string, since: string, sign: 1 | -1): string => {
  const t = names(schema)
  const lastOf = `SELECT k.company_id, k.month, l.observed_at
  FROM (SELECT DISTINCT company_id, month FROM (${months}) m) k
  CROSS JOIN LATERAL (
    SELECT max(o.observed_at) AS observed_at FROM ${t.companyObservations} o
    WHERE o.company_id = k.company_id AND o.observed_at >= ${monthStart("k.month")} AND o.observed_at < ${monthEnd("k.month")}
  ) l
  WHERE l.observed_at IS NOT NULL`
  const usage = (keys: ReadonlyArray<string>) => {
    const listed = (row: string) => keys.map((key) => `${row}.${key}`).join(", ")
    return `SELECT month, ${keys.join(", ")}, ${sign} AS companies_using, 0 AS adoptions, 0 AS drops
  FROM (
    SELECT DISTINCT l.company_id, l.month, ${listed("u")} FROM (${lastOf}) l
    CROSS JOIN LATERAL (
      SELECT * FROM ${t.technologyObservations} u WHERE u.company_id = l.company_id AND u.observed_at = l.observed_at OFFSET 0
    ) u
  ) used
  UNION ALL
  SELECT ${monthOf("c.observed_at")}, ${listed("c")}, 0, ${sign} * (c.change = 'adopted')::int, ${sign} * (c.change = 'dropped')::int
  FROM (${changesSince(schema, since)}) c`
  }
  const counts = ["companies_using", "adoptions", "drops"]
  return [
    addSql(
      t.observedMonths,
      ["month"],
      new Set(),
      ["companies_observed"],
      `SELECT month, ${sign} AS companies_observed FROM (${lastOf}) l`,
    ),
    addSql(
      t.usage,
      ["month", "product", "vendor"],
      new Set(["vendor"]),
      counts,
      usage(["product", "vendor"]),
    ),
    addSql(t.categoryUsage, ["month", "category"], new Set(["category"]), counts, usage(["category"])),
  ].join(";\n")
}

/**
 * The statements that make the changes of the companies and times `since` lists (a query of
 * company_id, since) again from the log: each company's changes from that time on deleted, then
 * computed as the views computed them, for its observations from then on, each against the one
 * before: the products of both, looked up by the log's key, joined by hash (a product at one and
 * not at the other is a change; an anti-join per product compared each with every product of the
 * other observation). An observation added at t changes only the steps to t and from t to the next: those
 * before stay. A company's first observation has none before it: what it shows is seen, not adopted.
 */
const changesSql = (schema: string, since: string, companies: string | undefined): string => {
  const t = names(schema)
  const productsAt = (at: string) =>
    `SELECT * FROM ${t.technologyObservations} u WHERE u.company_id = s.company_id AND u.observed_at = ${at} OFFSET 0`
  return `DELETE FROM ${t.logChanges} c USING (${since}) f
WHERE ${among("c.company_id", companies)} AND c.company_id = f.company_id AND c.observed_at >= f.since;
WITH log_steps AS (
  SELECT s.* FROM (
    SELECT company_id, observed_at, company_name,
      lag(observed_at) OVER (PARTITION BY company_id ORDER BY observed_at) AS previous_at
    FROM ${t.companyObservations} WHERE ${among("company_id", companies)}
  ) s JOIN (${since}) f ON f.company_id = s.company_id AND s.observed_at >= f.since
  WHERE s.previous_at IS NOT NULL
),
at_step AS (
  SELECT s.company_id, s.observed_at, s.previous_at, s.company_name, n.category, n.subcategory, n.product, n.vendor
  FROM log_steps s CROSS JOIN LATERAL (${productsAt("s.observed_at")}) n
),
before_step AS (
  SELECT s.company_id, s.observed_at, s.previous_at, s.company_name, p.category, p.subcategory, p.product, p.vendor
  FROM log_steps s CROSS JOIN LATERAL (${productsAt("s.previous_at")}) p
)
INSERT INTO ${t.logChanges} (company_id, observed_at, previous_at, company_name, category, subcategory, product, vendor, change)
SELECT coalesce(n.company_id, p.company_id), coalesce(n.observed_at, p.observed_at), coalesce(n.previous_at, p.previous_at),
  coalesce(n.company_name, p.company_name),
  CASE WHEN n.company_id IS NULL THEN p.category ELSE n.category END,
  CASE WHEN n.company_id IS NULL THEN p.subcategory ELSE n.subcategory END,
  coalesce(n.product, p.product), CASE WHEN n.company_id IS NULL THEN p.vendor ELSE n.vendor END,
  CASE WHEN n.company_id IS NULL THEN 'dropped' ELSE 'adopted' END
FROM at_step n FULL JOIN before_step p
  ON ${sameKeys("n", "p", ["company_id", "observed_at", "product", "vendor"], new Set(["vendor"]))}
WHERE n.company_id IS NULL OR p.company_id IS NULL`
}

const latest = (column: string) => `(array_agg(${column} ORDER BY observed_at DESC))[1]`
const sighted = (rows: string) => `SELECT company_id, product, vendor, ${latest("category")} AS category,
    ${latest("subcategory")} AS subcategory, min(observed_at) AS first_seen_at, max(observed_at) AS last_seen_at,
    count(*) AS observations
  FROM (${rows}) r GROUP BY company_id, product, vendor`

/**
 * The sightings of the batch's new observations (`newObservations`) added to those held: a
 * company's log only grows (forget deletes it whole, sightings included), so the first and last
 * sighting, the count and the labels at the last one follow from the new rows alone.
 */
const sightingsAddSql = (schema: string): string => {
  const t = names(schema)
  return `DELETE FROM ${newSightings};
INSERT INTO ${newSightings} (company_id, product, vendor, category, subcategory, first_seen_at, last_seen_at, observations)
${sighted(`SELECT u.* FROM ${newObservations} o CROSS JOIN LATERAL (
  SELECT * FROM ${t.technologyObservations} u WHERE u.company_id = o.company_id AND u.observed_at = o.observed_at OFFSET 0
) u`)};
ANALYZE ${newSightings};
UPDATE ${t.sightings} s SET first_seen_at = least(s.first_seen_at, f.first_seen_at),
  last_seen_at = greatest(s.last_seen_at, f.last_seen_at), observations = s.observations + f.observations,
  category = CASE WHEN f.last_seen_at > s.last_seen_at THEN f.category ELSE s.category END,
  subcategory = CASE WHEN f.last_seen_at > s.last_seen_at THEN f.subcategory ELSE s.subcategory END
FROM ${newSightings} f
WHERE ${among("s.company_id", `SELECT company_id FROM ${newObservations}`)}
  AND ${sameKeys("s", "f", ["company_id", "product", "vendor"], new Set(["vendor"]))};
INSERT INTO ${t.sightings} (company_id, product, vendor, category, subcategory, first_seen_at, last_seen_at, observations)
SELECT company_id, product, vendor, category, subcategory, first_seen_at, last_seen_at, observations FROM ${newSightings} f
WHERE NOT EXISTS (SELECT 1 FROM ${t.sightings} s WHERE s.company_id = f.company_id AND ${sameProduct("s", "f")})`
}

/**
 * The first adoption and last drop of the sightings of the companies `companies` lists (every one
 * when undefined), from their changes: those with changes set from them, those left with none
 * (an observation loaded out of order took them away) cleared. A sighting without a change is not
 * read (most are not: a first load has none).
 */
const adoptionsSql = (schema: string, companies: string | undefined): string => {
  const t = names(schema)
  return `UPDATE ${t.sightings} s SET adopted_at = x.adopted_at, dropped_at = x.dropped_at
FROM (
  SELECT company_id, product, vendor, min(observed_at) FILTER (WHERE change = 'adopted') AS adopted_at,
    max(observed_at) FILTER (WHERE change = 'dropped') AS dropped_at
  FROM ${t.logChanges} WHERE ${among("company_id", companies)} GROUP BY company_id, product, vendor
) x
WHERE ${among("s.company_id", companies)} AND ${sameKeys("s", "x", ["company_id", "product", "vendor"], new Set(["vendor"]))}
  AND (s.adopted_at IS DISTINCT FROM x.adopted_at OR s.dropped_at IS DISTINCT FROM x.dropped_at);
UPDATE ${t.sightings} s SET adopted_at = NULL, dropped_at = NULL
WHERE ${among("s.company_id", companies)} AND (s.adopted_at IS NOT NULL OR s.dropped_at IS NOT NULL)
  AND NOT EXISTS (SELECT 1 FROM ${t.logChanges} c WHERE c.company_id = s.company_id AND ${sameProduct("c", "s")})`
}

/**
 * The products in use of the companies `companies` lists (a query of company_id; every one when
 * undefined) made again from their latest observations, looked up by the log's key.
 */
const inUseSql = (schema: string, companies: string | undefined): string => {
  const t = names(schema)
  const listed = companies === undefined ? "" : `WHERE ${among("company_id", companies)}`
  return `DELETE FROM ${t.inUse} ${listed};
INSERT INTO ${t.inUse} (company_id, observed_at, category, subcategory, product, vendor)
SELECT l.company_id, l.observed_at, u.category, u.subcategory, u.product, u.vendor
FROM (SELECT company_id, max(observed_at) AS observed_at FROM ${t.companyObservations} ${listed} GROUP BY company_id) l
CROSS JOIN LATERAL (
  SELECT * FROM ${t.technologyObservations} u WHERE u.company_id = l.company_id AND u.observed_at = l.observed_at OFFSET 0
) u`
}

/**
 * The companies of the batch's new observations whose latest observation is now a new one: only
 * their products in use change (an observation loaded out of order, older, changes nothing there).
 */
const newLatest = (schema: string): string =>
  `SELECT o.company_id FROM ${newObservations} o GROUP BY o.company_id
  HAVING max(o.observed_at) >= (SELECT max(a.observed_at) FROM ${names(schema).companyObservations} a WHERE a.company_id = o.company_id)`

/** Rows of counts that hold nothing: deleted, so a view need not tell them from rows that do. */
const tidySql = (schema: string): string => {
  const t = names(schema)
  return [t.usage, t.categoryUsage]
    .map((table) => `DELETE FROM ${table} WHERE companies_using = 0 AND adoptions = 0 AND drops = 0`)
    .concat(`DELETE FROM ${t.observedMonths} WHERE companies_observed = 0`)
    .join(";\n")
}

/**
 * Around the statement that writes a staged batch's observations (`record`, Observations.ts): the
 * batch's new observations (`companies`: its staged parent; a record without fetched_at is
 * observed at the transaction's time, as `record` does) noted first and their companies'
 * contributions subtracted; once written, the companies' changes from their first new observation
 * on made again, their sightings added to, their products in use made again where the new
 * observation is the latest, and their contributions added. A batch that observes nothing new (a
 * reload) costs the note alone.
 */
export const aroundRecordSql = (schema: string, companies: string, record: string): string => {
  const t = names(schema)
  const months = `SELECT company_id, ${monthOf("observed_at")} AS month FROM ${newObservations}`
  const since = `SELECT company_id, min(observed_at) AS since FROM ${newObservations} GROUP BY company_id`
  return [
    lockSql(schema),
    `DELETE FROM ${newObservations}`,
    `INSERT INTO ${newObservations} (company_id, observed_at)
SELECT DISTINCT c.company_id, coalesce(c.fetched_at, now()) FROM ${companies} c
WHERE ${carriedTechnologies("c")} AND NOT EXISTS (
  SELECT 1 FROM ${t.companyObservations} o WHERE o.company_id = c.company_id AND o.observed_at = coalesce(c.fetched_at, now()))`,
    `ANALYZE ${newObservations}`,
    contributionsSql(schema, months, since, -1),
    record,
    changesSql(schema, since, `SELECT company_id FROM ${newObservations}`),
    sightingsAddSql(schema),
    adoptionsSql(schema, `SELECT DISTINCT company_id FROM ${newObservations}`),
    inUseSql(schema, newLatest(schema)),
    contributionsSql(schema, months, since, 1),
    tidySql(schema),
  ].join(";\n")
}

/** Every change of the companies a query of company_id lists: from the beginning of time. */
const always = (companies: string) =>
  `SELECT company_id, '-infinity'::timestamptz AS since FROM (${companies}) a`

/**
 * Before the log of the companies `companies` (a query of company_id) is deleted (salesintel
 * forget): their contributions subtracted from the counts. Their changes and sightings are
 * deleted with their observations (Forget.ts lists the tables).
 */
export const forgetSql = (schema: string, companies: string): string => {
  const t = names(schema)
  const months = `SELECT company_id, ${monthOf("observed_at")} AS month FROM ${t.companyObservations} WHERE ${among("company_id", companies)}`
  return [lockSql(schema), contributionsSql(schema, months, always(companies), -1), tidySql(schema)].join(
    ";\n",
  )
}

/**
 * The derived tables made from the whole log (migration 12), and the indexes the views look
 * labels up by: a product's rows by time, in the log and in its changes (there, ties in time in
 * the order the trends take them: `labelledAt`, then the company).
 */
export const fillSql = (schema: string): string => {
  const t = names(schema)
  const all = `SELECT DISTINCT company_id FROM ${t.companyObservations}`
  const months = `SELECT company_id, ${monthOf("observed_at")} AS month FROM ${t.companyObservations}`
  return [
    lockSql(schema),
    ...[t.logChanges, t.sightings, t.inUse, t.usage, t.categoryUsage, t.observedMonths].map(
      (table) => `DELETE FROM ${table}`,
    ),
    changesSql(schema, always(all), undefined),
    `INSERT INTO ${t.sightings} (company_id, product, vendor, category, subcategory, first_seen_at, last_seen_at, observations)
${sighted(`SELECT * FROM ${t.technologyObservations}`)}`,
    adoptionsSql(schema, undefined),
    inUseSql(schema, undefined),
    contributionsSql(schema, months, always(all), 1),
    tidySql(schema),
    `CREATE INDEX IF NOT EXISTS ${ident(`${technologyObservationsTable.name}_product`)} ON ${t.technologyObservations} (product, observed_at)`,
    `CREATE INDEX IF NOT EXISTS ${ident(`${logChangesTable.name}_product`)} ON ${t.logChanges} (product, observed_at, (${labelledAt("")}), company_id)`,
  ].join(";\n")
}
