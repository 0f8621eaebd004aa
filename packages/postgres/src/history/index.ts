/**
 * What changed between observations and what it means: the change tables, the observation log and
 * the tables kept with it, the views over them (each subject's list, and Views.views: all of them
 * in the order the DDL creates them), and the user's market they join.
 */
export * as ChangeTables from "./ChangeTables.ts"
export * as Intelligence from "./Intelligence.ts"
export * as LogDerived from "./LogDerived.ts"
export * as Market from "./Market.ts"
export * as MarketTrends from "./MarketTrends.ts"
export * as MarketViews from "./MarketViews.ts"
export * as Observations from "./Observations.ts"
export * as Views from "./Views.ts"
