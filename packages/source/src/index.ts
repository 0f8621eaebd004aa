/**
 * @salesintel/source: the Airbyte source for SalesIntel, as a library (the `source-salesintel`
 * bin wraps it). `Commands.read` is what `salesintel sync` runs in-process.
 */

export * as Check from "./Check.ts"
export * as Commands from "./Commands.ts"
export * as Config from "./Config.ts"
export * as Definitions from "./Definitions.ts"
export * as BoughtLedger from "./engine/BoughtLedger.ts"
export * as HeldKeys from "./engine/HeldKeys.ts"
export * as PackedIds from "./engine/PackedIds.ts"
export * as Plan from "./Plan.ts"
export * as Read from "./Read.ts"
export * as Spec from "./Spec.ts"
