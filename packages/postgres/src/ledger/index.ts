/**
 * The ledger `_bought`, the index of what the tables hold (the module's own exports), and what is
 * read from the tables as held: the keys the records give another stream (DerivedKeys), the
 * companies by domain and name (HeldCompanies), and the suppressions `salesintel forget` records.
 */
export * as DerivedKeys from "./DerivedKeys.ts"
export * as HeldCompanies from "./HeldCompanies.ts"
export * as KnownDone from "./KnownDone.ts"
export * from "./Ledger.ts"
export * as Suppressions from "./Suppressions.ts"
