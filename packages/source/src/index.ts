/**
 * @salesintel/source: the Airbyte source for SalesIntel, as a library (the `source-salesintel`
 * bin wraps it). `Commands.read` is what `salesintel sync` runs in-process.
 */
export * as Catalog from "./Catalog.ts"
export * as Commands from "./Commands.ts"
export * as Config from "./Config.ts"
export * as InputState from "./InputState.ts"
export * as Protocol from "./Protocol.ts"
export * as Read from "./Read.ts"
export * as Spec from "./Spec.ts"
