/**
 * How the report writes the values it shows, in its charts and tables alike: a missing one as
 * "(none)" (ContactLabels.ts), a share as a percent with one decimal, a product with its vendor.
 */
import { missing } from "./ContactLabels.ts"

export const named = (value: string | null): string => value ?? missing

export const percent = (share: number): string => `${(share * 100).toFixed(1)}%`

/** "Jira (Atlassian)", or the product alone when it has no vendor. */
export const productLabel = (product: string | null, vendor: string | null): string =>
  vendor === null ? named(product) : `${named(product)} (${vendor})`
