/**
 * JSON with object keys sorted: the same filters always give the same text, so keys made of
 * filters (a partition's key in the state, the plan's cache of counts) are stable.
 */
export const canonicalJson = (value: unknown): string =>
  JSON.stringify(value, (_, inner: unknown) =>
    inner !== null && typeof inner === "object" && !Array.isArray(inner)
      ? Object.fromEntries(
          Object.entries(inner as Record<string, unknown>).sort(([a], [b]) => a.localeCompare(b)),
        )
      : inner,
  )
