/**
 * The mark a quick plan (read/CostPlan.ts, mode "quick") puts on its dry read: the searches' free
 * listings are made up from their counts (read/StandIn.ts), every id new, so the read cannot diff
 * them against what is held. Where this is present, a search's listing passes over as many ids as
 * its last read left held and fresh (streams/contacts/LastRead.ts) before the purchase diffs the
 * rest; a sync never has it.
 */
import * as Context from "effect/Context"

export class MadeUpListing extends Context.Tag("@salesintel/source/MadeUpListing")<
  MadeUpListing,
  { readonly madeUp: true }
>() {}
