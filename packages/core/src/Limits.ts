/** The provider's paging limits (interface-spec.md section 8, upstream-api-notes.md section 2). */

/** page_size defaults to 50 and is never above 50 (stated for company search, observed for all). */
export const maxPageSize = 50

/** No page may reach deeper than this many records into a result set, at any page size. */
export const maxDepth = 10_000

/** The deepest page number reachable at a page size. */
export const lastReachablePage = (pageSize: number): number => Math.floor(maxDepth / pageSize)
