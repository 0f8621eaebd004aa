/**
 * A test run's tag and what it left behind: everything a run makes (schemas, databases, PGlite
 * directories) carries its tag, so the run answers for its own leftovers only, never for what
 * another program made on the same server meanwhile.
 */

/** The environment variable that carries the run's tag to the test workers and their commands. */
export const runTagVariable = "SALESINTEL_TEST_TAG"

/** A new tag: short, lower case, safe in a schema name and a file name. */
export const newRunTag = (): string => `t${Date.now().toString(36)}${Math.random().toString(36).slice(2, 6)}`

/** The current run's tag (outside a test run, one of this process's own). */
export const runTag = (): string => {
  const tag = process.env[runTagVariable] || newRunTag()
  process.env[runTagVariable] = tag
  return tag
}

/** The entries (`schema "..."`, `database "..."`) that appeared during the run and carry its tag. */
export const leftovers = (
  before: ReadonlySet<string>,
  after: ReadonlySet<string>,
  tag: string,
): ReadonlyArray<string> => [...after].filter((entry) => !before.has(entry) && entry.includes(tag))
