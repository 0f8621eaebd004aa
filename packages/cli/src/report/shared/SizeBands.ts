/**
 * The company size bands the report groups companies into, by employees (companies.size): the
 * bands revenue teams segment a market by. A company whose size the provider did not send is in
 * the "unknown" band.
 */
export interface SizeBand {
  readonly label: string
  /** Employees below this are in an earlier band (undefined: no upper bound). */
  readonly below?: number
}

export const bands: ReadonlyArray<SizeBand> = [
  { label: "1-49", below: 50 },
  { label: "50-199", below: 200 },
  { label: "200-999", below: 1_000 },
  { label: "1,000-4,999", below: 5_000 },
  { label: "5,000+" },
]

export const unknown = "unknown"

/** Every band's label in order, "unknown" last. */
export const labels: ReadonlyArray<string> = [...bands.map((band) => band.label), unknown]

// The labels are this file's constants; quoting them keeps the SQL valid whatever they say.
const literal = (text: string): string => `'${text.replaceAll("'", "''")}'`

/** SQL of the band label of `column` (a size in employees). */
export const bandSql = (column: string): string =>
  `CASE WHEN ${column} IS NULL THEN ${literal(unknown)} ${bands
    .map((band) =>
      band.below === undefined
        ? `ELSE ${literal(band.label)}`
        : `WHEN ${column} < ${band.below} THEN ${literal(band.label)}`,
    )
    .join(" ")} END`
