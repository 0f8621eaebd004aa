/**
 * @salesintel/core: web-standard Effect programs for every endpoint of the SalesIntel API.
 * Import a module as a namespace: `import { Client, Pager } from "@salesintel/core"`.
 */
export * as AdaptiveConcurrency from "./AdaptiveConcurrency.ts"
export * as ApiError from "./ApiError.ts"
export * as Client from "./Client.ts"
export * as CompanyTechnologies from "./CompanyTechnologies.ts"
export * as Connection from "./Connection.ts"
export * as Contact from "./Contact.ts"
export * as CreditBudget from "./CreditBudget.ts"
export * as CreditedRequest from "./CreditedRequest.ts"
export * as FastDecode from "./FastDecode.ts"
export * as Filters from "./Filters.ts"
export * as Limits from "./Limits.ts"
export * as Nearest from "./Nearest.ts"
export * as Page from "./Page.ts"
export * as Pager from "./Pager.ts"
export * as ParseIssue from "./ParseIssue.ts"
export * as Partitioner from "./Partitioner.ts"
export * as RateLimit from "./RateLimit.ts"
export * as Retry from "./Retry.ts"
export * as Taxonomy from "./Taxonomy.ts"
export * as Values from "./Values.ts"
