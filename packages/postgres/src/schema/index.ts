/** The tables as data: the stream tables and their mappings (Tables), the code lookup tables (Labels). */
export * as Labels from "./Labels.ts"
export * as Tables from "./Tables.ts"
