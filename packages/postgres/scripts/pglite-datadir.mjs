// @ts-check
/**
 * Build step (`npm run build` runs it after `tsc -b`): makes the initialized PGlite data directory
 * that PGliteDataDir.ts copies into a new database directory, so that no run ever runs initdb.
 * PGlite's initdb starts a second Postgres instance and copies its heap and a tar of its files:
 * ~800 MB for a few seconds. Done here once per build instead, exactly as a run did it
 * (`PGlite.create(directory)` on a new directory, then closed).
 *
 * Writes dist/pglite-datadir/, the same database as a gzipped tar (dist/pglite-datadir.tar.gz,
 * PGlite's `dumpDataDir`: an in-memory database is loaded from it with PGlite's `loadDataDir`)
 * and dist/pglite-datadir.json: the PGlite version it was made with
 * (a data directory only opens with the Postgres build that made it, so a different PGlite at
 * run time falls back to initdb) and the database's system identifier. Skipped when both are
 * there for the installed version.
 */
import { existsSync, mkdirSync, mkdtempSync, readFileSync, renameSync, rmSync, writeFileSync } from "node:fs"
import { createRequire } from "node:module"
import { dirname, join } from "node:path"
import { fileURLToPath } from "node:url"
import { PGlite } from "@electric-sql/pglite"

const dist = fileURLToPath(new URL("../dist/", import.meta.url))
const target = join(dist, "pglite-datadir")
const tarball = join(dist, "pglite-datadir.tar.gz")
const manifest = join(dist, "pglite-datadir.json")

// The installed PGlite's version, read the way PGliteDataDir.ts reads it at run time.
const entry = createRequire(import.meta.url).resolve("@electric-sql/pglite")
const pgliteVersion = JSON.parse(readFileSync(join(dirname(entry), "..", "package.json"), "utf8")).version

const current = () => {
  try {
    const made = JSON.parse(readFileSync(manifest, "utf8"))
    return (
      existsSync(join(target, "PG_VERSION")) &&
      existsSync(tarball) &&
      made.pglite === pgliteVersion &&
      typeof made.systemIdentifier === "string"
    )
  } catch {
    return false
  }
}

if (current()) {
  console.log(`pglite-datadir: ${target} is up to date (PGlite ${pgliteVersion})`)
} else {
  const started = performance.now()
  mkdirSync(dist, { recursive: true })
  // Made beside its final place, then renamed: a build cut short leaves no half directory.
  const making = mkdtempSync(join(dist, "pglite-datadir-making-"))
  try {
    const db = await PGlite.create(making)
    // Every directory copied from this one has its system identifier (an initdb makes a new one):
    // recorded so that tests can tell the two apart.
    const [control] = (await db.query("SELECT system_identifier::text AS id FROM pg_control_system()")).rows
    const systemIdentifier = /** @type {{ id: string }} */ (control).id
    const dump = await db.dumpDataDir("gzip")
    await db.close()
    writeFileSync(tarball, Buffer.from(await dump.arrayBuffer()))
    rmSync(target, { recursive: true, force: true })
    renameSync(making, target)
    writeFileSync(manifest, `${JSON.stringify({ pglite: pgliteVersion, systemIdentifier }, null, 2)}\n`)
  } finally {
    rmSync(making, { recursive: true, force: true })
  }
  console.log(
    `pglite-datadir: made ${target} (PGlite ${pgliteVersion}) in ${((performance.now() - started) / 1000).toFixed(1)} s`,
  )
}
