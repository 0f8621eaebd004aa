/**
 * @salesintel/source: the Airbyte source for SalesIntel, as a library (the `source-salesintel`
 * bin wraps it). `Commands.read` is what `salesintel sync` runs in-process.
 */

/** The packed form of a bought set's day (now with the protocol, in @salesintel/airbyte). */
export { PackedIds } from "@salesintel/airbyte"
export * as Allowance from "./Allowance.ts"
export * as BoughtLedger from "./bought/BoughtLedger.ts"
export * as HeldKeys from "./bought/HeldKeys.ts"
export * as Suppression from "./bought/Suppression.ts"
export * as Check from "./Check.ts"
export * as Commands from "./Commands.ts"
export * as Config from "./Config.ts"
export * as Definitions from "./Definitions.ts"
export * as KnownRows from "./known/Rows.ts"
export * as Main from "./Main.ts"
export * as Market from "./Market.ts"
export * as CostPlan from "./read/CostPlan.ts"
export * as Read from "./read/Read.ts"
export * as Spec from "./Spec.ts"
