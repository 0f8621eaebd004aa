import { mkdtempSync, writeFileSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import * as Effect from "effect/Effect"
import * as Either from "effect/Either"
import { describe, expect, it } from "vitest"
import { removedAfterAll } from "../../command-line/src/testing/Directories.ts"
import * as ConfigFile from "./ConfigFile.ts"

// The directories these tests make, removed when the file's tests end.
const made = removedAfterAll()

const base = { credit_budget: 100 }

/** A config file in a new directory, and (when given) a key file beside it. */
const files = (config: unknown, keyFile?: { readonly name: string; readonly text: string }) => {
  const directory = made(mkdtempSync(join(tmpdir(), "salesintel-config-file-")))
  writeFileSync(join(directory, "config.json"), JSON.stringify(config))
  if (keyFile !== undefined) writeFileSync(join(directory, keyFile.name), keyFile.text)
  return join(directory, "config.json")
}

const read = (path: string, env: Readonly<Record<string, string | undefined>> = {}) =>
  Effect.runPromise(Effect.either(ConfigFile.read(path, env)))

const keyOf = (config: unknown) => (config as { readonly api_key?: unknown }).api_key

// What a user writes in the JSON hoping it is expanded: the characters themselves, not a template.
const placeholder = `$${"{SALESINTEL_API_KEY}"}`

describe("ConfigFile.read: where the API key comes from", () => {
  it("takes SALESINTEL_API_KEY when the config has no key", async () => {
    const read_ = await read(files(base), { SALESINTEL_API_KEY: "from-env" })
    expect(Either.isRight(read_) && keyOf(read_.right.config)).toBe("from-env")
    expect(Either.isRight(read_) && read_.right.notes).toEqual([])
  })

  it("keeps the config's own key over SALESINTEL_API_KEY, and says so without either key", async () => {
    const read_ = await read(files({ ...base, api_key: "in-file" }), { SALESINTEL_API_KEY: "from-env" })
    if (Either.isLeft(read_)) throw new Error(read_.left)
    expect(keyOf(read_.right.config)).toBe("in-file")
    expect(read_.right.notes).toEqual([
      "the config's api_key is used; SALESINTEL_API_KEY is set too, and ignored",
    ])
    expect(read_.right.notes.join()).not.toMatch(/in-file|from-env/)
  })

  it("reads api_key_file, relative to the config's directory, trimmed, over SALESINTEL_API_KEY", async () => {
    const path = files({ ...base, api_key_file: "key.txt" }, { name: "key.txt", text: "  from-file\n" })
    const read_ = await read(path, { SALESINTEL_API_KEY: "from-env" })
    if (Either.isLeft(read_)) throw new Error(read_.left)
    expect(read_.right.config).toEqual({ ...base, api_key: "from-file" })
    expect(read_.right.notes).toEqual([
      "the config's api_key_file is used; SALESINTEL_API_KEY is set too, and ignored",
    ])
  })

  it("reads suppress_file relative to the config's directory, as api_key_file", async () => {
    const path = files({ ...base, api_key: "k", suppress_file: "suppressions.json" })
    const read_ = await read(path)
    if (Either.isLeft(read_)) throw new Error(read_.left)
    expect(read_.right.config).toEqual({
      ...base,
      api_key: "k",
      suppress_file: join(path, "..", "suppressions.json"),
    })
  })

  it("refuses an api_key_file that cannot be read or is empty, naming the field and the file", async () => {
    const missing = await read(files({ ...base, api_key_file: "nosuch.txt" }))
    expect(Either.isLeft(missing) && missing.left).toMatch(
      /^api_key_file: cannot read the key file \S+nosuch\.txt: ENOENT/,
    )
    const empty = await read(files({ ...base, api_key_file: "key.txt" }, { name: "key.txt", text: " \n" }))
    expect(Either.isLeft(empty) && empty.left).toMatch(
      /^api_key_file: the key file \S+key\.txt is empty; expected the API key in it/,
    )
    const notText = await read(files({ ...base, api_key_file: 3 }))
    expect(Either.isLeft(notText) && notText.left).toBe(
      "api_key_file: expected the path of a file holding the API key, got 3",
    )
  })

  it("refuses api_key and api_key_file together, and a placeholder the JSON cannot expand", async () => {
    const both = await read(
      files({ ...base, api_key: "secret-1", api_key_file: "key.txt" }, { name: "key.txt", text: "k" }),
    )
    expect(Either.isLeft(both) && both.left).toBe("api_key and api_key_file: expected one of them, got both")
    expect(Either.isLeft(both) && both.left).not.toContain("secret-1")
    const literal = await read(files({ ...base, api_key: placeholder }), {
      SALESINTEL_API_KEY: "from-env",
    })
    expect(Either.isLeft(literal) && literal.left).toBe(
      `api_key: ${placeholder} is not expanded (the config is plain JSON): leave api_key out and set SALESINTEL_API_KEY, or name a file holding the key in api_key_file`,
    )
  })

  it("says every way to give the key when none is given, with the config's other problems", async () => {
    const read_ = await read(files({ credit_budget: -1 }))
    expect(Either.isLeft(read_) && read_.left).toMatch(
      /^invalid config: api_key: is missing: give api_key or api_key_file in the config, or set SALESINTEL_API_KEY; credit_budget: /,
    )
  })

  it("leaves the rest of a config with a key to the command, which checks its options first", async () => {
    const read_ = await read(files({ credit_budget: "x" }), { SALESINTEL_API_KEY: "env-secret-42" })
    expect(Either.isRight(read_) && read_.right.config).toEqual({
      credit_budget: "x",
      api_key: "env-secret-42",
    })
  })
})
