/** Test support: the ids a saved bought set (`known` of the contacts state) holds, in either form. */
import { Schema } from "effect"
import { DatedSetJson } from "../engine/DatedSet.ts"

export const boughtIds = (json: unknown): ReadonlySet<string> =>
  new Set(Object.values(Schema.decodeUnknownSync(DatedSetJson)(json ?? {})).flat())
