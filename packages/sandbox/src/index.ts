// Public API of @salesintel/sandbox.
export {
  Account,
  type AccountSpec,
  defaultAccounts,
  loadAccountsFile,
  mergeAccounts,
  type Permission,
  parseAccounts,
  permissionCombinations,
  permissionKey,
  permissions,
} from "./Accounts.ts"
export type { Job, JobChange, TechnologyChange } from "./Changes.ts"
export type { Company, Site } from "./Companies.ts"
export { ContactFactory, type ContactTraits, Flag } from "./Contacts.ts"
export { Dataset, type DatasetOptions, defaultDatasetOptions } from "./Dataset.ts"
export { defaultFaults, type FaultSettings, Faults, parseFaultSettings } from "./Faults.ts"
export { BadRequest, maxDepth, maxPageSize } from "./Filters.ts"
export type { Address, CompanyBlock, CompanyTechnologies, ContactRecord, Technology } from "./Records.ts"
export { companyTechnologies, maskContact } from "./Records.ts"
export { Search } from "./Search.ts"
export {
  type EndpointName,
  endpoints,
  type Sandbox,
  type SandboxOptions,
  SandboxServer,
  startSandbox,
} from "./Server.ts"
export type { Category, Product, Taxonomy } from "./Taxonomy.ts"
