/**
 * vitest's global setup for every test run: says which Postgres the tests use, and checks that
 * they leave nothing behind in it. The schemas and databases of the server are listed before the
 * run and after it; a schema or database the run left (a test that did not drop what it made)
 * fails the run, named. Without a server (PGlite only) there is nothing to check.
 */
import pg from "pg"

const url = process.env.DATABASE_URL || "postgres://postgres@127.0.0.1:5432/test"
const shown = url.replace(/\/\/([^:@/]+):[^@/]*@/, "//$1:***@")

const catalogue = async (): Promise<ReadonlySet<string> | undefined> => {
  const client = new pg.Client({ connectionString: url, connectionTimeoutMillis: 2_000 })
  client.on("error", () => {})
  try {
    await client.connect()
  } catch {
    return undefined
  }
  try {
    const schemas = await client.query<{ name: string }>(
      "SELECT nspname AS name FROM pg_namespace WHERE nspname NOT LIKE 'pg\\_%' AND nspname <> 'information_schema'",
    )
    const databases = await client.query<{ name: string }>("SELECT datname AS name FROM pg_database")
    return new Set([
      ...schemas.rows.map((row) => `schema "${row.name}"`),
      ...databases.rows.map((row) => `database "${row.name}"`),
    ])
  } finally {
    await client.end()
  }
}

const version = async (): Promise<string | undefined> => {
  const client = new pg.Client({ connectionString: url, connectionTimeoutMillis: 2_000 })
  client.on("error", () => {})
  try {
    await client.connect()
    const [row] = (
      await client.query<{ version: string }>("SELECT current_setting($1) AS version", ["server_version"])
    ).rows
    await client.end()
    return row?.version
  } catch {
    return undefined
  }
}

export default async function setup() {
  const before = await catalogue()
  const server = await version()
  console.log(
    server === undefined
      ? `tests: no Postgres answers at ${shown}; the database tests run on PGlite only`
      : `tests: PostgreSQL ${server} at ${shown}, and embedded PGlite`,
  )
  return async () => {
    if (before === undefined) return
    const after = await catalogue()
    const left = [...(after ?? [])].filter((entry) => !before.has(entry))
    if (left.length > 0)
      throw new Error(`the tests left ${left.join(", ")} in ${shown}: each test must drop what it makes`)
  }
}
