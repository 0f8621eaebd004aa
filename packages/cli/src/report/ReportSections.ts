/**
 * The report's sections in the page's order, one subject after another: the overview
 * (overview/OverviewSections.ts), what changed (changes/ChangesSections.ts), what the observations
 * mean (intelligence/IntelligenceSections.ts) and the user's market (market/MarketSections.ts).
 * Each section has its title, what it counts, its chart (none when there is nothing to chart: the
 * page then says "no data") and the numbers behind it.
 */
import * as ChangesSections from "./changes/ChangesSections.ts"
import * as IntelligenceSections from "./intelligence/IntelligenceSections.ts"
import * as MarketSections from "./market/MarketSections.ts"
import * as OverviewSections from "./overview/OverviewSections.ts"
import type { ReportData } from "./ReportData.ts"
import type { Section } from "./shared/ReportPage.ts"

/** Every section, in the page's order. */
export const all = (data: ReportData): ReadonlyArray<Section> => [
  ...OverviewSections.all(data),
  ...ChangesSections.all(data.changes),
  ...IntelligenceSections.all(data.intelligence),
  ...MarketSections.all(data.market),
]
