/**
 * A view as data: its name, what it answers, what each column holds and its SQL over a schema.
 * The views of each subject (Views.ts, Intelligence.ts, MarketViews.ts, MarketTrends.ts) are
 * lists of these; the DDL creates them in order and comments them (migrate/Ddl.ts).
 */
export interface View {
  readonly name: string
  readonly doc: string
  /** What each column holds, for COMMENT ON COLUMN (what \\d+ and catalogs show). */
  readonly columns?: Readonly<Record<string, string>>
  readonly sql: (schema: string) => string
}
