#!/usr/bin/env node
// Assembles the file tree of the source-salesintel image: the source, the workspaces it
// imports (core, airbyte, command-line), and the production dependency closure of those three, read from
// package-lock.json, and nothing else: no Postgres driver, no PGlite, no CLI, no dev tools.
//
//   node scripts/assemble-source.mjs <built checkout> <empty output directory>
//
// The checkout must have had `npm ci` and the build (`npx tsc -b packages/source`); the files
// are copied from its node_modules, so the versions are exactly the lock file's. The Dockerfile
// (packages/source/Dockerfile) runs this script, and integration-tests/image.test.ts runs it into
// a temporary directory and runs spec, check and read from there: one set of steps for both.
//
// The closure follows npm's own rules: dependencies, optional dependencies that were installed,
// and peer dependencies not marked optional, each resolved from the requiring package's
// directory upwards through node_modules, workspace links followed to their package.
import { cpSync, existsSync, mkdirSync, readdirSync, readFileSync, symlinkSync, writeFileSync } from "node:fs"
import { dirname, join, relative, resolve } from "node:path"
import { fileURLToPath } from "node:url"

/** The workspaces the image carries, the source first. */
export const workspaces = ["packages/source", "packages/core", "packages/airbyte", "packages/command-line"]
/** What of a workspace the image needs: its manifest, its build and its command file. */
const workspaceFiles = ["package.json", "dist", "bin"]

const usage = "usage: node scripts/assemble-source.mjs <built checkout> <empty output directory>"

/** The lock path of `name` as required from the package at lock path `from` (npm's lookup). */
const resolveFrom = (packages, from, name) => {
  let base = from
  for (;;) {
    const candidate = base === "" ? `node_modules/${name}` : `${base}/node_modules/${name}`
    if (packages[candidate] !== undefined) return candidate
    if (base === "") return undefined
    const nested = base.lastIndexOf("/node_modules/")
    base = nested >= 0 ? base.slice(0, nested) : ""
  }
}

/** Every lock path the workspaces need at run time: node_modules entries and workspace links. */
export const closure = (lock) => {
  const packages = lock.packages
  const needed = new Set()
  const queue = [...workspaces]
  while (queue.length > 0) {
    const path = queue.shift()
    if (needed.has(path)) continue
    needed.add(path)
    const entry = packages[path]
    if (entry.link === true) {
      queue.push(entry.resolved)
      continue
    }
    const optionalPeers = new Set(
      Object.entries(entry.peerDependenciesMeta ?? {})
        .filter(([, meta]) => meta.optional === true)
        .map(([name]) => name),
    )
    const wanted = [
      ...Object.keys(entry.dependencies ?? {}).map((name) => [name, true]),
      ...Object.keys(entry.optionalDependencies ?? {}).map((name) => [name, false]),
      ...Object.keys(entry.peerDependencies ?? {})
        .filter((name) => !optionalPeers.has(name))
        .map((name) => [name, true]),
    ]
    for (const [name, required] of wanted) {
      const found = resolveFrom(packages, path, name)
      if (found === undefined) {
        if (required) throw new Error(`${path} needs ${name}, which package-lock.json does not have`)
        continue
      }
      // An optional dependency for another platform is in the lock but was not installed.
      if (packages[found].optional === true && packages[found].link !== true) {
        const os = packages[found].os
        if (os !== undefined && !os.includes(process.platform)) continue
        const cpu = packages[found].cpu
        if (cpu !== undefined && !cpu.includes(process.arch)) continue
      }
      queue.push(found)
    }
  }
  return [...needed].sort()
}

/** Copies a package directory without its nested node_modules (those are copied as needed). */
const copyPackage = (from, to) => {
  cpSync(from, to, {
    recursive: true,
    filter: (source) => relative(from, source).split(/[\\/]/)[0] !== "node_modules",
  })
}

export const assemble = (checkout, out) => {
  const root = resolve(checkout)
  const target = resolve(out)
  if (existsSync(target) && readdirSync(target).length > 0)
    throw new Error(`${target} is not empty: the image's tree is assembled into an empty directory`)
  for (const workspace of workspaces)
    if (!existsSync(join(root, workspace, "dist", "index.js")))
      throw new Error(`${workspace}/dist is missing: build first (npx tsc -b packages/source)`)
  const lock = JSON.parse(readFileSync(join(root, "package-lock.json"), "utf8"))
  const paths = closure(lock)
  for (const path of paths) {
    const entry = lock.packages[path]
    const destination = join(target, path)
    if (workspaces.includes(path)) {
      for (const file of workspaceFiles)
        if (existsSync(join(root, path, file)))
          cpSync(join(root, path, file), join(destination, file), { recursive: true })
    } else if (entry.link === true) {
      // As npm lays a workspace out: node_modules/@salesintel/x -> ../../packages/x.
      mkdirSync(dirname(destination), { recursive: true })
      symlinkSync(relative(dirname(destination), join(target, entry.resolved)), destination, "dir")
    } else {
      if (!existsSync(join(root, path))) {
        // An optional dependency npm chose not to install here (another platform's binary).
        if (entry.optional === true) continue
        throw new Error(`${path} is in the closure but not installed: run npm ci`)
      }
      copyPackage(join(root, path), destination)
    }
  }
  // The root manifest: a workspace root of the three, so the layout resolves as it does in a checkout.
  const manifest = JSON.parse(readFileSync(join(root, "package.json"), "utf8"))
  writeFileSync(
    join(target, "package.json"),
    `${JSON.stringify({ name: manifest.name, private: true, type: "module", workspaces }, null, 2)}\n`,
  )
  return paths
}

if (process.argv[1] !== undefined && resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  const [checkout, out] = process.argv.slice(2)
  if (checkout === undefined || out === undefined || process.argv.length > 4) {
    process.stderr.write(`${usage}\n`)
    process.exit(2)
  }
  try {
    const paths = assemble(checkout, out)
    process.stdout.write(`assembled ${paths.length} packages into ${resolve(out)}\n`)
  } catch (e) {
    process.stderr.write(`assemble-source: ${e instanceof Error ? e.message : String(e)}\n`)
    process.exit(1)
  }
}
