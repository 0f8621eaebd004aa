/** Test support: the ids a saved bought set (`known` of the contacts state) holds, in either form. */
import * as Schema from "effect/Schema"
import { DatedSetJson } from "../bought/DatedSet.ts"

export const boughtIds = (json: unknown): ReadonlySet<string> =>
  new Set(Object.values(Schema.decodeUnknownSync(DatedSetJson)(json ?? {})).flat())
