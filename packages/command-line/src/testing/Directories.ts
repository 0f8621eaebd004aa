/**
 * The directories a test file makes, removed when its tests end. Called once at the file's top
 * level (it registers the file's `afterAll`); the function it returns registers a directory and
 * gives it back, so a test writes `made(mkdtempSync(...))`.
 */
import { rmSync } from "node:fs"
import { afterAll } from "vitest"

export const removedAfterAll = (): ((directory: string) => string) => {
  const directories: Array<string> = []
  afterAll(() => {
    for (const directory of directories) rmSync(directory, { recursive: true, force: true })
  })
  return (directory) => {
    directories.push(directory)
    return directory
  }
}
