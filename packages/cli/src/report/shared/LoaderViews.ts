/**
 * The loader's views the report reads that @salesintel/postgres describes only in its list of
 * every view (Views.views: the modules that describe them, MarketTrends.ts and MarketViews.ts,
 * and the adoption views of Views.ts, are not exported one by one). Each is taken from that list
 * as this module loads, so a view the loader no longer creates under the name fails every test of
 * the report at once rather than a query.
 */
import { Views } from "@salesintel/postgres"

// The type left to inference: the loader's modules are moving, the list stays (Views.views).
const viewNamed = (name: string) => {
  const found = Views.views.find((view) => view.name === name)
  if (found === undefined) throw new Error(`the loader creates no view ${name}`)
  return found
}

export const adoptionByCategory = viewNamed("technology_adoption_by_category")
export const marketShareTrend = viewNamed("market_share_trend")
export const displacementOpportunities = viewNamed("displacement_opportunities")
export const productAffinity = viewNamed("product_affinity")
