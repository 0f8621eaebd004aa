/**
 * Where a new PGlite database comes from. PGlite creates one by running initdb in process: a
 * second Postgres instance, a copy of its heap and a tar of its files, ~800 MB for a few seconds.
 * The build makes that directory once instead (scripts/pglite-datadir.mjs: `PGlite.create(dir)`
 * on a new directory, closed), and a new database is a copy of it: file copies in the kernel, no
 * Postgres started, no memory to speak of. It is used only with the PGlite version that made it
 * (a data directory opens only with the Postgres build that made it); otherwise, or when the
 * build did not make it, PGlite runs initdb as before. An in-memory database is loaded from the
 * same database as a tar, with PGlite's `loadDataDir` option.
 *
 * Creating a database in a directory is marked by a file (`salesintel.initializing`) that goes
 * once the database is whole: a run killed halfway leaves it, and the next run removes the
 * half-made database's files (only Postgres's own entries) and starts again.
 */
import { existsSync, readFileSync, rmSync, unlinkSync, writeFileSync } from "node:fs"
import { copyFile, mkdir, readdir } from "node:fs/promises"
import { createRequire } from "node:module"
import { dirname, join } from "node:path"
import { fileURLToPath } from "node:url"

/** The prepared data directory and what the build recorded about it. */
export interface Prepared {
  /** The initialized data directory, closed. */
  readonly directory: string
  /** The same database as a gzipped tar (PGlite's `dumpDataDir`), for an in-memory database. */
  readonly tarball: string
  /** The PGlite version that made it. */
  readonly pglite: string
  /** Its database's system identifier (shared by every directory unpacked from it). */
  readonly systemIdentifier: string
}

// The same files from src/ (vitest) and from dist/: the build writes them to dist/.
const distDirectory = fileURLToPath(new URL("../../dist/", import.meta.url))

/** The installed PGlite's version (from its package.json, next to the entry point it resolves to). */
export const installedPGliteVersion = (): string => {
  const entry = createRequire(import.meta.url).resolve("@electric-sql/pglite")
  const manifest: unknown = JSON.parse(readFileSync(join(dirname(entry), "..", "package.json"), "utf8"))
  if (typeof manifest !== "object" || manifest === null || !("version" in manifest))
    throw new Error(`no version in @electric-sql/pglite's package.json (${entry})`)
  return String(manifest.version)
}

/**
 * The prepared data directory in `directory` (the build's dist/ by default), if it is there and
 * was made by `pgliteVersion` (the installed PGlite by default); undefined otherwise.
 */
export const prepared = (
  directory: string = distDirectory,
  pgliteVersion: string = installedPGliteVersion(),
): Prepared | undefined => {
  const prepared = join(directory, "pglite-datadir")
  const tarball = join(directory, "pglite-datadir.tar.gz")
  try {
    const made: unknown = JSON.parse(readFileSync(join(directory, "pglite-datadir.json"), "utf8"))
    if (
      typeof made === "object" &&
      made !== null &&
      "pglite" in made &&
      "systemIdentifier" in made &&
      made.pglite === pgliteVersion &&
      typeof made.systemIdentifier === "string" &&
      existsSync(join(prepared, "PG_VERSION")) &&
      existsSync(tarball)
    )
      return { directory: prepared, tarball, pglite: pgliteVersion, systemIdentifier: made.systemIdentifier }
  } catch {}
  return undefined
}

/** The file whose presence says a database was being created in the directory and did not finish. */
export const initializingMarker = "salesintel.initializing"

/**
 * The top-level entries of a Postgres data directory: those initdb makes (PGlite's Postgres 18)
 * and those a running or restored server may add. Only these are removed after an interrupted
 * creation: the directory may hold other files (the run lock, anything of the user's).
 */
export const dataDirectoryEntries: ReadonlyArray<string> = [
  "PG_VERSION",
  "base",
  "global",
  "pg_commit_ts",
  "pg_dynshmem",
  "pg_hba.conf",
  "pg_ident.conf",
  "pg_logical",
  "pg_multixact",
  "pg_notify",
  "pg_replslot",
  "pg_serial",
  "pg_snapshots",
  "pg_stat",
  "pg_stat_tmp",
  "pg_subtrans",
  "pg_tblspc",
  "pg_twophase",
  "pg_wal",
  "pg_xact",
  "postgresql.auto.conf",
  "postgresql.conf",
  "postmaster.opts",
  "postmaster.pid",
  "current_logfiles",
  "backup_label",
  "backup_manifest",
  "tablespace_map",
]

/** What `directory` needs before it can be opened. */
export type Needs = "nothing" | "create"

/**
 * Whether `directory` holds a database (PG_VERSION) or needs one created. A creation that did not
 * finish (its marker is there) has its files removed first, so it is created afresh.
 */
export const inspect = (directory: string): Needs => {
  if (existsSync(join(directory, initializingMarker))) {
    for (const entry of dataDirectoryEntries) rmSync(join(directory, entry), { recursive: true, force: true })
    return "create"
  }
  return existsSync(join(directory, "PG_VERSION")) ? "nothing" : "create"
}

/** Marks `directory` as being created (before the first file of the database is written). */
export const markCreating = (directory: string): void =>
  writeFileSync(join(directory, initializingMarker), `${JSON.stringify({ pid: process.pid })}\n`)

/** The database in `directory` is whole: removes the marker. */
export const markCreated = (directory: string): void => unlinkSync(join(directory, initializingMarker))

/**
 * Copies the prepared data directory into `directory` (which has no database), PG_VERSION last:
 * PGlite takes a directory with PG_VERSION for a whole database.
 */
export const copyInto = async (from: Prepared, directory: string): Promise<void> => {
  await copyTree(from.directory, directory, (name) => name !== "PG_VERSION")
  await copyFile(join(from.directory, "PG_VERSION"), join(directory, "PG_VERSION"))
}

/**
 * Copies a tree's files side by side (libuv's threads), not one after another: the prepared
 * directory is ~970 files, and `fs.cp` took 0.5 to 0.9 s over them where this takes about half.
 */
const copyTree = async (from: string, to: string, keep: (name: string) => boolean): Promise<void> => {
  const entries = (await readdir(from, { withFileTypes: true })).filter((entry) => keep(entry.name))
  await Promise.all(
    entries.map(async (entry) => {
      const source = join(from, entry.name)
      const target = join(to, entry.name)
      if (!entry.isDirectory()) return copyFile(source, target)
      await mkdir(target, { recursive: true })
      return copyTree(source, target, () => true)
    }),
  )
}
