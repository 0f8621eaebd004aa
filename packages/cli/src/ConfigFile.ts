/**
 * The config file `sync` and `plan` read: the source's JSON config, checked, with two more ways
 * to give the API key that only the CLI offers (the Airbyte spec is unchanged): `api_key_file`,
 * the path of a file holding the key (relative to the config file's directory; trimmed), and the
 * SALESINTEL_API_KEY environment variable, used when the config names no key. A key the config
 * names (api_key or api_key_file) wins over the variable, as a file written for one run is more
 * particular than the environment it runs in; the command says so when both are there. The key
 * itself is never printed.
 */
import { readFile } from "node:fs/promises"
import { dirname, resolve } from "node:path"
import { CommandLine, JsonFile } from "@salesintel/command-line"
import { Config } from "@salesintel/source"
import * as Effect from "effect/Effect"
import * as Either from "effect/Either"

export const apiKeyVariable = "SALESINTEL_API_KEY"

export interface ConfigFile {
  /** The config as the source decodes it: `api_key` filled in, `api_key_file` gone. */
  readonly config: unknown
  /** Lines for stderr: where the key came from when that may surprise (never the key). */
  readonly notes: ReadonlyArray<string>
  /**
   * Where the key came from when not the config's api_key, as a rejected key's message names it
   * (Client.ClientOptions.keySource): the key file's path, or the environment variable.
   */
  readonly keySource?: string | undefined
}

const isRecord = (value: unknown): value is Readonly<Record<string, unknown>> =>
  typeof value === "object" && value !== null && !Array.isArray(value)

/** The key in the file at `path`, trimmed, or what is wrong with it in the field's name. */
const keyFromFile = (path: string): Effect.Effect<string, string> =>
  Effect.flatMap(
    Effect.tryPromise({
      try: () => readFile(path, "utf8"),
      catch: (error) =>
        `api_key_file: cannot read the key file ${path}: ${error instanceof Error ? error.message : String(error)}`,
    }),
    (text) => {
      const key = text.trim()
      return key.length === 0
        ? Effect.fail(`api_key_file: the key file ${path} is empty; expected the API key in it`)
        : Effect.succeed(key)
    },
  )

/** `${NAME}` written as the key: JSON expands nothing, and the provider would be sent those characters. */
const unexpanded = /^\$\{[A-Za-z_][A-Za-z0-9_]*\}$/

/** The config with its key resolved from api_key, api_key_file or the environment. */
export const withApiKey = (
  config: unknown,
  directory: string,
  env: Readonly<Record<string, string | undefined>>,
): Effect.Effect<ConfigFile, string> =>
  Effect.gen(function* () {
    if (!isRecord(config)) return { config, notes: [] }
    const { api_key: key, api_key_file: keyFile, ...rest } = config
    const fromEnv = env[apiKeyVariable]
    const envIgnored = (field: string) =>
      fromEnv !== undefined && fromEnv.length > 0
        ? [`the config's ${field} is used; ${apiKeyVariable} is set too, and ignored`]
        : []
    if (key !== undefined && keyFile !== undefined)
      return yield* Effect.fail("api_key and api_key_file: expected one of them, got both")
    if (keyFile !== undefined) {
      if (typeof keyFile !== "string" || keyFile.trim().length === 0)
        return yield* Effect.fail(
          `api_key_file: expected the path of a file holding the API key, got ${JSON.stringify(keyFile)}`,
        )
      const path = resolve(directory, keyFile)
      const fileKey = yield* keyFromFile(path)
      return {
        config: { ...rest, api_key: fileKey },
        notes: envIgnored("api_key_file"),
        keySource: `the key file ${path} (api_key_file in the config)`,
      }
    }
    if (typeof key === "string" && unexpanded.test(key))
      return yield* Effect.fail(
        `api_key: ${key} is not expanded (the config is plain JSON): leave api_key out and set ${apiKeyVariable}, or name a file holding the key in api_key_file`,
      )
    if (key !== undefined) return { config, notes: envIgnored("api_key") }
    if (fromEnv !== undefined && fromEnv.length > 0)
      return {
        config: { ...rest, api_key: fromEnv },
        notes: [],
        keySource: `${apiKeyVariable} (the key came from that environment variable: the config names none)`,
      }
    return { config, notes: [] }
  })

/**
 * A config with no key, refused with every problem the source finds in it, the key's saying every
 * way to give one. Any other config is checked where it always was (after the options), as is.
 */
const checked = (config: unknown): Either.Either<unknown, string> =>
  isRecord(config) && config.api_key !== undefined
    ? Either.right(config)
    : Either.match(Config.decode(config), {
        onRight: () => Either.right(config),
        onLeft: (error) =>
          Either.left(
            new Config.ConfigError(
              error.problems.map((problem) =>
                problem.path === "api_key" && problem.message === "is missing"
                  ? {
                      ...problem,
                      message: `is missing: give api_key or api_key_file in the config, or set ${apiKeyVariable}`,
                    }
                  : problem,
              ),
            ).message,
          ),
      })

/**
 * The config file at `path` (relative to `cwd`, else to the process's directory), its key
 * resolved (or its absence said); errors in the user's words.
 */
export const read = (
  path: string,
  env: Readonly<Record<string, string | undefined>>,
  cwd?: string,
): Effect.Effect<ConfigFile, string> =>
  Effect.gen(function* () {
    const parsed = yield* JsonFile.read(path, "config", cwd)
    const directory = dirname(resolve(cwd ?? ".", path))
    const resolved = yield* withApiKey(parsed, directory, env)
    yield* checked(resolved.config)
    return { ...resolved, config: withSuppressFile(resolved.config, directory) }
  })

/** `suppress_file` relative to the config's directory, as `api_key_file` is. */
const withSuppressFile = (config: unknown, directory: string): unknown =>
  isRecord(config) && typeof config.suppress_file === "string" && config.suppress_file.length > 0
    ? { ...config, suppress_file: resolve(directory, config.suppress_file) }
    : config

/** The config a command runs with, and where its key came from (see ConfigFile.keySource). */
export interface Loaded {
  readonly config: unknown
  readonly keySource: string | undefined
}

/**
 * `read` in the invocation's directory and environment, its notes said on stderr (as
 * --log-format writes log lines).
 */
export const load = (path: string): Effect.Effect<Loaded, string, CommandLine.Io> =>
  Effect.flatMap(CommandLine.Io, (io) =>
    Effect.flatMap(read(path, io.env, io.cwd), ({ config, notes, keySource }) =>
      Effect.as(
        Effect.forEach(notes, (note) => CommandLine.logLine("INFO", note, note)),
        { config, keySource },
      ),
    ),
  )
