/**
 * A contact's `location` string split into city, state/region and country, where the string
 * allows it. The provider sends one comma-separated string, "City, Region, Country" (e.g.
 * "Philadelphia, PA, US"); its other spellings are undocumented, so only unambiguous forms are
 * split and everything else leaves the parts null (the whole string is kept beside them).
 */

export interface Location {
  readonly city: string | null
  readonly region: string | null
  readonly country: string | null
}

const none: Location = { city: null, region: null, country: null }

/** A region or country code: two or three capital letters ("PA", "NSW", "US"). */
const code = /^[A-Z]{2,3}$/

/**
 * - "City, Region, Country": the last part is the country, the one before it the region, and
 *   the rest (which may itself hold commas) the city.
 * - "City, XX" with a two- or three-letter code: the city and its region; no country, since a
 *   code such as "CA" reads as a state or as a country.
 * - "US" alone (a code): the country.
 * Anything else (one word, "City, Some Country Name"): nothing is split.
 */
export const parse = (location: string | null | undefined): Location => {
  if (location === null || location === undefined) return none
  const parts = location
    .split(",")
    .map((part) => part.trim().replace(/\s+/g, " "))
    .filter((part) => part !== "")
  if (parts.length >= 3) {
    const country = parts[parts.length - 1] as string
    const region = parts[parts.length - 2] as string
    return { city: parts.slice(0, -2).join(", "), region, country }
  }
  if (parts.length === 2) {
    const [city, second] = parts as [string, string]
    return code.test(second) ? { city, region: second, country: null } : none
  }
  if (parts.length === 1 && code.test(parts[0] as string) && (parts[0] as string).length === 2)
    return { city: null, region: null, country: parts[0] as string }
  return none
}
