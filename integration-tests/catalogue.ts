/**
 * vitest's global setup for every test run: says which Postgres the tests use, gives the run its
 * tag, and checks that the run leaves nothing of its own behind. Everything a test makes carries
 * the tag (`SALESINTEL_TEST_TAG`, read by Backends.open and the chaos harness: schemas, PGlite
 * directories); the schemas and databases of the server are listed before the run and after it,
 * and one the run made and left (a test that did not drop what it made) fails the run, named. What
 * another program made on the same server meanwhile carries no tag and is not this run's business:
 * a user's own Postgres is such a server.
 */
import { readdirSync } from "node:fs"
import { tmpdir } from "node:os"
import pg from "pg"
import { leftovers, newRunTag, runTagVariable } from "../packages/postgres/src/testing/RunTag.ts"

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
  // Inherited by the test workers and the commands they start, which name what they make with it.
  const tag = process.env[runTagVariable] || newRunTag()
  process.env[runTagVariable] = tag
  const before = await catalogue()
  const server = await version()
  console.log(
    server === undefined
      ? `tests: no Postgres answers at ${shown}; the database tests run on PGlite only`
      : `tests: PostgreSQL ${server} at ${shown}, and embedded PGlite`,
  )
  return async () => {
    const directories = readdirSync(tmpdir())
      .filter((name) => name.includes(tag))
      .map((name) => `directory "${name}"`)
    const after = before === undefined ? undefined : await catalogue()
    const left = [...leftovers(before ?? new Set(), after ?? new Set(), tag), ...directories]
    if (left.length > 0)
      throw new Error(
        `the tests (run ${tag}) left ${left.join(", ")} in ${shown} and ${tmpdir()}: each test must drop what it makes`,
      )
  }
}
