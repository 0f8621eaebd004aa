/**
 * The source image's file tree for tests, without Docker: scripts/assemble-source.mjs (the script
 * packages/source/Dockerfile runs) into a temporary directory with no node_modules above it, and
 * its command file run as the image's ENTRYPOINT runs it, as an unprivileged user when the tests
 * run as root (the image's USER node).
 */
import { execFile } from "node:child_process"
import { chmodSync, mkdtempSync, rmSync, writeFileSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"

const repo = join(import.meta.dirname, "..")
export const assembleScript = join(repo, "scripts/assemble-source.mjs")

/** The unprivileged user to run as, when the tests run as root (as the image's USER node does). */
export const unprivileged =
  process.getuid?.() === 0 ? { uid: 65534, gid: 65534 } : ({} as { uid?: number; gid?: number })

export interface Ran {
  readonly code: number
  readonly stdout: string
  readonly stderr: string
}

/** `file args` as a process in `cwd`; asynchronous on purpose: the sandbox answers from this process. */
export const runFile = (
  file: string,
  args: ReadonlyArray<string>,
  cwd: string,
  options: { uid?: number; gid?: number } = {},
) =>
  new Promise<Ran>((resolve) => {
    execFile(
      file,
      [...args],
      { timeout: 120_000, cwd, maxBuffer: 64 * 1024 * 1024, ...options },
      (error, stdout, stderr) =>
        resolve({
          code: error === null ? 0 : typeof error.code === "number" ? error.code : -1,
          stdout,
          stderr: error !== null && typeof error.code !== "number" ? `${error.message}\n${stderr}` : stderr,
        }),
    )
  })

export interface ImageTree {
  /** The temporary directory: the tree is its `integration_code`, files written by `write` sit beside it. */
  readonly work: string
  readonly tree: string
  /** The image's ENTRYPOINT, inside the tree. */
  readonly bin: string
  /** A JSON file in `work`, readable by the unprivileged user; its path. */
  readonly write: (name: string, value: unknown) => string
  readonly remove: () => void
}

/** A new temporary directory for a tree, readable by the unprivileged user as the image's root-owned files are. */
export const imageTreeDirectory = (): ImageTree => {
  const work = mkdtempSync(join(tmpdir(), "source-image-"))
  chmodSync(work, 0o755)
  const tree = join(work, "integration_code")
  return {
    work,
    tree,
    bin: join(tree, "packages/source/bin/source-salesintel.js"),
    write: (name, value) => {
      const path = join(work, name)
      writeFileSync(path, typeof value === "string" ? value : JSON.stringify(value), { mode: 0o644 })
      return path
    },
    remove: () => rmSync(work, { recursive: true, force: true }),
  }
}

/** Runs the assembly script from this checkout into the tree's directory. */
export const assemble = (image: ImageTree) =>
  runFile(process.execPath, [assembleScript, repo, image.tree], image.work)
